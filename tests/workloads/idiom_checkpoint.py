#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Activation checkpointing as models write it (torch.utils.checkpoint around each block),
for the tree-rule tests. Plain PyTorch: nothing here knows the observer.

    idiom_checkpoint.py [--reentrant|--no-reentrant] [--epochs E] [--batches B]
                        [--val-batches V] [--blocks N] [--step-sleep MS]

A model of N residual MLP blocks, each run through checkpoint(block, h, use_reentrant=...)
in its forward while training (the activations are dropped and each block's forward runs
again inside backward). Per epoch: B training batches (Adam), then V validation batches
with model.eval() under torch.no_grad() (no checkpointing). Prints "DONE" at the end.
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--reentrant", dest="reentrant", action="store_true")
ap.add_argument("--no-reentrant", dest="reentrant", action="store_false")
ap.set_defaults(reentrant=False)
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--blocks", type=int, default=3)
ap.add_argument("--step-sleep", type=float, default=0)
args = ap.parse_args()


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))

    def forward(self, h):
        return h + self.net(h)


class Net(nn.Module):
    def __init__(self, blocks, width=32):
        super().__init__()
        self.inp = nn.Linear(16, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            if self.training:
                h = checkpoint(block, h, use_reentrant=args.reentrant)
            else:
                h = block(h)
        return self.out(h)


torch.manual_seed(0)
bs = args.batch_size
x = torch.randn(args.batches * bs, 16)
loader = DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=bs)
xv = torch.randn(args.val_batches * bs, 16)
val_loader = DataLoader(TensorDataset(xv, (xv[:, 0] > 0).long()), batch_size=bs)

model = Net(args.blocks)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(args.epochs):
    model.train()
    for xb, yb in loader:
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val_loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    print(f"epoch {epoch}: loss {loss.item():.4f} val_acc {correct / len(xv):.3f}", flush=True)
print("DONE", flush=True)
