#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Evaluation with model.eval() and no torch.no_grad() (it happens: grad stays on, nothing
calls backward), for the tree-rule tests. Plain PyTorch: nothing here knows the observer.

    idiom_evalmode.py [--epochs E] [--batches B] [--val-batches V] [--eval-every K]
                      [--step-sleep MS]

Per epoch: B training batches (SGD); after every K of them (K=0: once, at the epoch's end)
an evaluation of V batches with model.eval(), grad still enabled, the loss computed and
.item()'d, then model.train(). Prints "DONE" at the end.
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--eval-every", type=int, default=0)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--step-sleep", type=float, default=0)
args = ap.parse_args()

torch.manual_seed(0)
bs = args.batch_size
x = torch.randn(args.batches * bs, 16)
loader = DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=bs)
xv = torch.randn(args.val_batches * bs, 16)
val_loader = DataLoader(TensorDataset(xv, (xv[:, 0] > 0).long()), batch_size=bs)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()


def evaluate():
    model.eval()
    total = 0.0
    for xb, yb in val_loader:
        total += loss_fn(model(xb), yb).item()
    model.train()
    return total / args.val_batches


for epoch in range(args.epochs):
    model.train()
    for i, (xb, yb) in enumerate(loader):
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)
        if args.eval_every and (i + 1) % args.eval_every == 0:
            print(f"step {i}: val_loss {evaluate():.4f}", flush=True)
    if not args.eval_every:
        print(f"epoch {epoch}: loss {loss.item():.4f} val_loss {evaluate():.4f}", flush=True)
print("DONE", flush=True)
