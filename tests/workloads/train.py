#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Training loops the end-to-end tests trace. Plain PyTorch: nothing here knows the observer.

    train.py --loop dataloader|generator [--epochs E] [--batches B] [--accumulate K]
             [--val-batches V] [--workers W] [--amp] [--regions] [--spin-seconds S]
             [--step-sleep MS]

Per epoch: B training batches, one optimizer step every K batches (B/K steps), then, if V > 0,
a validation pass of V batches under torch.no_grad(). --regions wraps each step's loss in
nested record_function regions ("loss" inside "compute"). --spin-seconds keeps training
(epochs repeat) for that long, for attach tests; it prints "ready" after the first step.
--stall-batch K --stall-seconds S makes loading batch K of the first epoch take S seconds
(a stuck data pipeline, for hang detection).
--burst-step K --burst-regions N: step K runs N empty record_function regions in a row (an
event flood, for ring-buffer overload). --burst-gate PATH: before the flood, prints "burst
ready" and waits for PATH to exist; after it, prints "burst done" (a test that stops its own
observer for the flood, so that the ring overflows whatever the machine's speed).
--until-file PATH keeps training (epochs repeat) until PATH exists, then runs one more whole
epoch and exits 0: a job that lasts until a test has seen what it waits for (and one epoch
more), whatever the machine's load.
--step-sleep sleeps after each optimizer step: steps of a few ms, like a real model's, for
tests whose observer reacts to steps (--python-frames sampled).
--persistent-workers keeps the --workers processes from one epoch to the next.
--then-exec "ARGS" at the end execs the same Python with ARGS (another training script, say):
a new image in the same process.
"""
import argparse
import os
import shlex
import sys
import time

import torch
from torch import nn
from torch.autograd.profiler import record_function
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--loop", choices=["dataloader", "generator"], default="dataloader")
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=6)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--accumulate", type=int, default=1)
ap.add_argument("--val-batches", type=int, default=0)
ap.add_argument("--workers", type=int, default=0)
ap.add_argument("--persistent-workers", action="store_true")
ap.add_argument("--amp", action="store_true")
ap.add_argument("--regions", action="store_true")
ap.add_argument("--spin-seconds", type=float, default=0)
ap.add_argument("--step-sleep", type=float, default=0)
ap.add_argument("--until-file", default=None)
ap.add_argument("--burst-step", type=int, default=-1)
ap.add_argument("--burst-regions", type=int, default=0)
ap.add_argument("--burst-gate", default=None)
ap.add_argument("--stall-batch", type=int, default=-1)
ap.add_argument("--stall-seconds", type=float, default=0)
ap.add_argument("--then-exec", default=None)
ap.add_argument("--cuda-calls", action="store_true",
                help="per batch: a 4096-byte cudaMemcpy before the forward and a 1000-byte "
                     "cudaMalloc after the backward, through the real libcudart (they fail "
                     "without a GPU; the observer counts them all the same)")
args = ap.parse_args()

torch.manual_seed(0)
n = args.batches * args.batch_size
x = torch.randn(n, 16)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()


class StallingDataset(TensorDataset):
    """Loading one item (the first of --stall-batch) takes --stall-seconds, once."""
    stalled = False

    def __getitem__(self, i):
        if i == args.stall_batch * args.batch_size and not StallingDataset.stalled:
            StallingDataset.stalled = True
            time.sleep(args.stall_seconds)
        return super().__getitem__(i)


train_loader = DataLoader(StallingDataset(x, y), batch_size=args.batch_size,
                          num_workers=args.workers,
                          persistent_workers=args.persistent_workers)
val_loader = DataLoader(TensorDataset(x[: args.val_batches * args.batch_size],
                                      y[: args.val_batches * args.batch_size]),
                        batch_size=args.batch_size)


def batches():
    if args.loop == "dataloader":
        yield from train_loader
    else:  # a custom generator: no DataLoader, so no data_load scopes
        for i in range(args.batches):
            yield x[i * args.batch_size:(i + 1) * args.batch_size], y[i * args.batch_size:(i + 1) * args.batch_size]


cudart = None
if args.cuda_calls:
    import ctypes
    cudart = ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")
    host = ctypes.create_string_buffer(4096)
    devptr = ctypes.c_void_p()


def train_batch(i, xb, yb):
    if cudart:
        cudart.cudaMemcpy(host, host, ctypes.c_size_t(4096), 1)     # cudaMemcpyHostToDevice
    if args.amp:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(xb)
        loss = loss_fn(out.float(), yb)
    elif args.regions:
        with record_function("compute"):
            out = model(xb)
            with record_function("loss"):
                loss = loss_fn(out, yb)
    else:
        loss = loss_fn(model(xb), yb)
    if steps == args.burst_step:
        if args.burst_gate:
            print("burst ready", flush=True)
            while not os.path.exists(args.burst_gate):
                time.sleep(0.01)
        for _ in range(args.burst_regions):
            with record_function("burst"):
                pass
        if args.burst_gate:
            print("burst done", flush=True)
    (loss / args.accumulate).backward()
    if cudart:
        cudart.cudaMalloc(ctypes.byref(devptr), ctypes.c_size_t(1000))
    if (i + 1) % args.accumulate == 0:
        opt.step()
        opt.zero_grad()
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)


steps = 0
start = time.time()
epoch = 0
released = None     # --until-file: the epoch in which PATH was first seen
while (epoch < args.epochs or time.time() - start < args.spin_seconds
       or (args.until_file and (released is None or epoch <= released))):
    if args.until_file and released is None and os.path.exists(args.until_file):
        released = epoch
    model.train()
    for i, (xb, yb) in enumerate(batches()):
        train_batch(i, xb, yb)
        if (i + 1) % args.accumulate == 0:
            steps += 1
            if steps == 1:
                print("ready", flush=True)
    if args.val_batches:
        model.eval()
        with torch.no_grad():
            for xb, yb in val_loader:
                model(xb)
    epoch += 1
print(f"DONE epochs={epoch} steps={steps}", flush=True)
if args.then_exec:
    os.execv(sys.executable, [sys.executable] + shlex.split(args.then_exec))
