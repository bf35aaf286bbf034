#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Loops as real code writes them, for the tree-rule tests. Plain PyTorch: nothing here knows
the observer.

    loops.py --loop lbfgs|gan|manual|manual-dl|inference|mixed [--epochs E] [--batches B]

lbfgs:     B calls of LBFGS.step(closure) per epoch, no DataLoader; each closure call runs
           zero_grad, forward and backward (--max-iter closure calls per step at most).
gan:       per batch of a DataLoader, a discriminator step (Adam) then a generator step (Adam).
manual:    parameters updated by hand under torch.no_grad(), B iterations, no DataLoader.
manual-dl: the same over a DataLoader of B batches per epoch.
inference: per epoch a training pass of B batches (SGD), then validation of --val-batches
           batches under torch.inference_mode().
mixed:     per epoch B manual-update batches from a DataLoader, then B batches with SGD.
Prints "DONE" at the end.
"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--loop", required=True,
                choices=["lbfgs", "gan", "manual", "manual-dl", "inference", "mixed"])
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=3)
ap.add_argument("--max-iter", type=int, default=3)
ap.add_argument("--batch-size", type=int, default=16)
args = ap.parse_args()

torch.manual_seed(0)
bs = args.batch_size
n = args.batches * bs
x = torch.randn(n, 16)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=bs)
val_loader = DataLoader(TensorDataset(x[: args.val_batches * bs], y[: args.val_batches * bs]),
                        batch_size=bs)
loss_fn = nn.CrossEntropyLoss()


def mlp(inp=16, out=2):
    return nn.Sequential(nn.Linear(inp, 32), nn.ReLU(), nn.Linear(32, out))


def manual_update(model, xb, yb):
    loss = loss_fn(model(xb), yb)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.01 * p.grad
            p.grad = None


def lbfgs():
    model = mlp()
    # tolerance 0: LBFGS runs exactly max_iter closure calls per step (its first call plus
    # max_iter - 1 more), never stopping early on a small loss change
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=args.max_iter,
                            tolerance_grad=0, tolerance_change=0, history_size=3)
    xb, yb = x[:bs], y[:bs]

    def closure():
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        return loss

    for _ in range(args.epochs * args.batches):
        opt.step(closure)


def gan():
    gen, disc = mlp(8, 16), mlp(16, 1)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
    bce = nn.BCEWithLogitsLoss()
    for _ in range(args.epochs):
        for real, _ in loader:
            fake = gen(torch.randn(real.shape[0], 8))
            opt_d.zero_grad()
            loss_d = bce(disc(real), torch.ones(real.shape[0], 1)) + \
                bce(disc(fake.detach()), torch.zeros(real.shape[0], 1))
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = bce(disc(fake), torch.ones(real.shape[0], 1))
            loss_g.backward()
            opt_g.step()


def manual():
    model = mlp()
    for i in range(args.epochs * args.batches):
        manual_update(model, x[(i % args.batches) * bs:(i % args.batches + 1) * bs],
                      y[(i % args.batches) * bs:(i % args.batches + 1) * bs])


def manual_dl():
    model = mlp()
    for _ in range(args.epochs):
        for xb, yb in loader:
            manual_update(model, xb, yb)


def inference():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.epochs):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            for xb, yb in val_loader:
                model(xb)


def mixed():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.epochs):
        for xb, yb in loader:
            manual_update(model, xb, yb)
    for _ in range(args.epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()


{"lbfgs": lbfgs, "gan": gan, "manual": manual, "manual-dl": manual_dl,
 "inference": inference, "mixed": mixed}[args.loop]()
print("DONE", flush=True)
