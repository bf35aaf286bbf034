#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A fast synthetic training loop for the memory and attach benchmarks: a tiny linear model
on tiny tensors, one optimizer step per iteration (zero_grad, forward, backward, step: the
torch anchors cirron-probe probes, each step well under a millisecond), no DataLoader, so
cirron-probe cuts epochs every --epoch-steps optimizer steps.

    synthetic_steps.py [--steps N | --forever] [--progress K]
Prints "ready" after the first step, "step I T" (T: time.time()) every K steps, "done N" at
the end."""
import argparse
import sys
import time

import torch
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--forever", action="store_true")
ap.add_argument("--progress", type=int, default=0)
args = ap.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(4, 8), torch.randn(4, 2)
i = 0
while args.forever or i < args.steps:
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    i += 1
    if i == 1:
        print("ready", flush=True)
    if args.progress and i % args.progress == 0:
        print(f"step {i} {time.time():.3f}", flush=True)
print(f"done {i}", flush=True)
sys.exit(0)
