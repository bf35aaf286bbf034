#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Mixed precision as PyTorch's AMP recipe writes it, on the CPU, for the tree-rule tests.
Plain PyTorch: nothing here knows the observer.

    idiom_amp.py [--dtype bf16|fp16] [--no-scaler] [--skip-step K] [--epochs E]
                 [--batches B] [--val-batches V] [--step-sleep MS]

Per epoch: B training batches, each forward and loss under torch.autocast("cpu", dtype),
backward through torch.amp.GradScaler (scaler.scale(loss).backward(), scaler.step(opt),
scaler.update()), then V validation batches with model.eval() under torch.no_grad(), the
forward under autocast again.
--skip-step K: training step K (counted from 0 over the whole run) gets a NaN in one
gradient, as a bad batch would: GradScaler finds it and skips that optimizer step
(optimizer.step is not called; update() lowers the scale).
--no-scaler: no GradScaler (bf16 recipes often go without): loss.backward(), opt.step().
Prints "DONE skipped=N" at the end, N the optimizer steps GradScaler skipped (from the
scale it lowered).
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
ap.add_argument("--no-scaler", action="store_true")
ap.add_argument("--skip-step", type=int, default=-1)
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--step-sleep", type=float, default=0)
args = ap.parse_args()
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]

torch.manual_seed(0)
bs = args.batch_size
x = torch.randn(args.batches * bs, 16)
loader = DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=bs)
xv = torch.randn(args.val_batches * bs, 16)
val_loader = DataLoader(TensorDataset(xv, (xv[:, 0] > 0).long()), batch_size=bs)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
scaler = None if args.no_scaler else torch.amp.GradScaler("cpu")

step, skipped = 0, 0
for epoch in range(args.epochs):
    model.train()
    for xb, yb in loader:
        with torch.autocast("cpu", dtype=dtype):
            loss = loss_fn(model(xb), yb)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            if step == args.skip_step:
                model[0].weight.grad[0, 0] = float("nan")
            scale = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < scale
        opt.zero_grad()
        step += 1
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val_loader:
            with torch.autocast("cpu", dtype=dtype):
                out = model(xb)
            correct += (out.argmax(1) == yb).sum().item()
    print(f"epoch {epoch}: loss {loss.item():.4f} val_acc {correct / len(xv):.3f}", flush=True)
print(f"DONE skipped={skipped}", flush=True)
