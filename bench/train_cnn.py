#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: a small CNN (2 conv + 2 linear), DataLoader over a TensorDataset,
batch 128 (--batch), SGD, one thread. Prints the median step time of the steps after a warm-up.
    train_cnn.py [--steps N] [--warmup N] [--batch B] [--profiler] [--setprofile]
--profiler runs under torch.profiler with its default settings and a schedule whose active
window covers every step (prof.step() after each), --setprofile under a sys.setprofile hook
counting calls: the in-process alternatives a user would pick instead."""
import argparse
import statistics
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--warmup", type=int, default=30)
ap.add_argument("--batch", type=int, default=128)
ap.add_argument("--profiler", action="store_true")
ap.add_argument("--setprofile", action="store_true")
args = ap.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)
n = args.batch * 50
x, y = torch.randn(n, 1, 28, 28), torch.randint(0, 10, (n,))
loader = DataLoader(TensorDataset(x, y), batch_size=args.batch, shuffle=True)
model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 64), nn.ReLU(),
                      nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
calls = 0


def hook(frame, event, arg):
    global calls
    calls += 1


def run(after_step=None):
    """Step time = from one batch's arrival to the next's: it includes the DataLoader
    __next__, where some of the observer's probes fire."""
    times, done, last = [], 0, None
    while done < args.steps + args.warmup:
        for xb, yb in loader:
            now = time.perf_counter()
            if last is not None and done > args.warmup:
                times.append(now - last)
            last = now
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if after_step:
                after_step()
            done += 1
            if done >= args.steps + args.warmup:
                break
        last = None     # the gap across epochs holds the iterator's restart
    return times


if args.profiler:
    from torch.profiler import profile, schedule
    # warm up on the first step, then active over every later one: the trace is assembled
    # when the window closes, after the last step
    with profile(schedule=schedule(wait=0, warmup=1, active=args.steps + args.warmup)) as prof:
        times = run(prof.step)
elif args.setprofile:
    sys.setprofile(hook)
    times = run()
    sys.setprofile(None)
else:
    times = run()
print(f"median_step_ms {statistics.median(times) * 1e3:.4f}", flush=True)
