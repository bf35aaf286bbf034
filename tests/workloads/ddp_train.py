#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A DistributedDataParallel training loop on the gloo backend (CPU), one process per rank,
started by torchrun or by tests/workloads/launch_ranks.py. Plain PyTorch.

    ddp_train.py [--epochs E] [--batches B] [--slow-rank R --slow-ms MS [--slow-in PHASE]]
                 [--seconds S]
                 [--stall-rank R --stall-step K --stall-seconds S] [--timeout-s T]
                 [--until-file F]

Per epoch each rank trains B batches of its DistributedSampler shard; --slow-rank makes
that rank's data loading (or, --slow-in backward, its backward, before its gradients' all-reduce:
the others wait for it inside their backward) MS ms slower per batch (a straggler, for the
merged view);
--seconds keeps training (more epochs) for at least S seconds, printing "ready rank=R" after
the first step, for attach tests; --stall-rank stops that rank for S seconds after its step K
(the others then wait for it in the next step's gradient all-reduce: a hang across ranks);
--timeout-s sets the collectives' timeout; --until-file trains until that file exists (and
"ready" says the rank's pid)."""
import argparse
import datetime
import functools
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def slow_grad(g):
    """The loss's gradient hook: it runs first in backward, before any parameter's
    gradient is ready for DDP's all-reduce."""
    time.sleep(args.slow_ms / 1000)
    return g


def say(line):
    """One write per line: the ranks share a pipe, and print() may write the text and its
    newline apart (unbuffered stdout), so two ranks' lines could interleave."""
    os.write(1, (line + "\n").encode())


ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--slow-rank", type=int, default=-1)
ap.add_argument("--slow-ms", type=float, default=0)
ap.add_argument("--slow-in", choices=("data_load", "backward"), default="data_load")
ap.add_argument("--seconds", type=float, default=0)
ap.add_argument("--stall-rank", type=int, default=-1)
ap.add_argument("--stall-step", type=int, default=-1)
ap.add_argument("--stall-seconds", type=float, default=0)
ap.add_argument("--timeout-s", type=float, default=0, help="collective timeout (default torch's)")
ap.add_argument("--until-file", help="train (more epochs) until this file exists")
args = ap.parse_args()

# Debian's torch 2.6 is built without libuv, yet its TCPStore asks for it by default.
if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
    import os
    import sys
    os.environ["USE_LIBUV"] = "0"
    # the module: torch.distributed.rendezvous as an attribute is a function of that name
    sys.modules["torch.distributed.rendezvous"].TCPStore = functools.partial(dist.TCPStore,
                                                                             use_libuv=False)

if args.timeout_s:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout_s))
else:
    dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Shard(TensorDataset):
    def __getitem__(self, i):
        if rank == args.slow_rank and args.slow_ms and args.slow_in == "data_load":
            time.sleep(args.slow_ms / 1000 / args.batch_size)
        return super().__getitem__(i)


torch.manual_seed(0)
n = args.batches * args.batch_size * world
x = torch.randn(n, 16)
y = (x[:, 0] > 0).long()
ds = Shard(x, y)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
steps, epoch, start = 0, 0, time.time()
while True:
    # every rank must run the same number of epochs: agree on whether to go on
    go = torch.tensor([int(epoch < args.epochs or time.time() - start < args.seconds or
                           bool(args.until_file and not os.path.exists(args.until_file)))])
    dist.all_reduce(go, op=dist.ReduceOp.MIN)
    if not go.item():
        break
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        loss = loss_fn(model(xb), yb)
        if rank == args.slow_rank and args.slow_ms and args.slow_in == "backward":
            loss.register_hook(slow_grad)
        loss.backward()
        opt.step()
        opt.zero_grad()
        steps += 1
        if steps == 1:
            say(f"ready rank={rank}" + (f" pid={os.getpid()}" if args.until_file else ""))
        if rank == args.stall_rank and steps == args.stall_step:
            say(f"stalling rank={rank}")
            time.sleep(args.stall_seconds)
    epoch += 1
print(f"DONE rank={rank} steps={steps}", flush=True)
dist.destroy_process_group()
# torch 2.13 with CPython <= 3.13 can abort a rank at interpreter exit, with or without an
# observer: a gloo thread that drops a tensor's Python object needs the GIL while the main
# thread finalizes, and CPython ends it with pthread_exit (pytorch/pytorch#117762, python/
# cpython gh-87135; docs/probe-exits.md). What the tests check ends at DONE: leave without
# finalizing, as launchers' workers often do.
os._exit(0)
