#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small, ordinary PyTorch training script: nothing in it knows about cirron-probe.

Synthetic classification data, an MLP, a DataLoader, SGD, a validation pass per epoch.
    python3 examples/train_mlp.py --epochs 2 --batches 20
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=40, help="training batches per epoch")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--accumulate", type=int, default=1, help="batches per optimizer step")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    ap.add_argument("--wait", action="store_true", help="print 'ready' and wait for stdin first")
    args = ap.parse_args()

    torch.manual_seed(0)
    n = args.batches * args.batch_size
    x = torch.randn(n, 32)
    y = (x[:, :4].sum(dim=1) > 0).long()
    train = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True,
                       num_workers=args.workers)
    val = DataLoader(TensorDataset(x[:256], y[:256]), batch_size=args.batch_size)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    if args.wait:
        print("ready", flush=True)
        input()

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        total = 0.0
        for i, (xb, yb) in enumerate(train):
            if i % args.accumulate == 0:
                opt.zero_grad()     # before the step's backwards: after it, .grad holds them
            loss = loss_fn(model(xb), yb) / args.accumulate
            loss.backward()
            total += loss.item()
            if (i + 1) % args.accumulate == 0:
                opt.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val:
                correct += (model(xb).argmax(dim=1) == yb).sum().item()
        print(f"epoch {epoch}: loss {total / args.batches:.4f} val_acc {correct / 256:.3f} "
              f"({time.time() - t0:.2f}s)", flush=True)


if __name__ == "__main__":
    main()
