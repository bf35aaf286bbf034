#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Data-parallel training on the gloo backend (CPU), one process per rank under torchrun,
for the tree-rule tests: FSDP2 (fully_shard) or DistributedDataParallel. Plain PyTorch:
nothing here knows the observer.

    torchrun --nproc_per_node 2 idiom_sharded.py --wrap fsdp2|ddp [--epochs E]
             [--batches B] [--val-batches V] [--step-sleep MS]

FSDP2: each of the model's 3 Linear layers is fully_shard'ed, then the root (parameters are
DTensors sharded over a 1-D CPU device mesh; each forward all-gathers them, each backward
reduce-scatters the gradients). DDP: DistributedDataParallel around the model. Per epoch:
B training batches of each rank's DistributedSampler shard (AdamW), then V validation batches
with model.eval() under torch.no_grad(). Prints "DONE rank=R" at the end.
"""
import argparse
import functools
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

ap = argparse.ArgumentParser()
ap.add_argument("--wrap", required=True, choices=["fsdp2", "ddp"])
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--batch-size", type=int, default=8)
ap.add_argument("--step-sleep", type=float, default=0)
args = ap.parse_args()

# Debian's torch 2.6 is built without libuv, yet its TCPStore asks for it by default.
if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
    os.environ["USE_LIBUV"] = "0"
    sys.modules["torch.distributed.rendezvous"].TCPStore = functools.partial(dist.TCPStore,
                                                                             use_libuv=False)

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

torch.manual_seed(0)
bs = args.batch_size
x = torch.randn(args.batches * bs * world, 16)
train_set = TensorDataset(x, (x[:, 0] > 0).long())
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=bs, sampler=sampler)
xv = torch.randn(args.val_batches * bs * world, 16)
val_set = TensorDataset(xv, (xv[:, 0] > 0).long())
val_loader = DataLoader(val_set, batch_size=bs, sampler=DistributedSampler(val_set, shuffle=False))

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 2))
if args.wrap == "fsdp2":
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (world,))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
else:
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(args.epochs):
    sampler.set_epoch(epoch)
    model.train()
    for xb, yb in loader:
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)
    model.eval()
    correct = torch.zeros(())
    with torch.no_grad():
        for xb, yb in val_loader:
            correct += (model(xb).argmax(1) == yb).sum()
    dist.all_reduce(correct)
    if rank == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f} val_acc {correct.item() / len(xv):.3f}",
              flush=True)
print(f"DONE rank={rank}", flush=True)
dist.destroy_process_group()
# torch 2.13 with CPython <= 3.13 can abort a rank at interpreter exit (ddp_train.py says why):
# what the tests check ends at DONE.
os._exit(0)
