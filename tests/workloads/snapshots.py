#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training job whose parameters are known at each epoch's end (tests/e2e/test_snapshots.py).

The model has float32 Linear layers, a bfloat16 parameter, a parameter that is a
non-contiguous view (a transposed tensor), and one the loss never uses (no .grad). At each
epoch's end the script prints, with torch, per parameter: one line
  STATS <epoch> <name> {"weights": {...}, "grad": {...} or null}
then enters torch.no_grad() (what validation does; where the observer sees the epoch end)
and, with --gate FIFO, waits there until the test writes a line to the FIFO: the weights
stay as printed while the observer reads them. With --save DIR it also saves each epoch's
tensors (torch.save) for the safetensors comparison. Prints DONE at the end.
"""
import argparse
import json
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)
        self.mix_bf16 = nn.Parameter(torch.randn(4, 4).to(torch.bfloat16))
        self.tview = nn.Parameter(torch.randn(12, 8).t())    # strides (1, 8)
        self.unused = nn.Parameter(torch.randn(5))           # never gets a grad

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h + (x @ self.tview.t()).sum(dim=1, keepdim=True) * 0.01
        y = self.fc2(h)
        return y + (y.to(torch.bfloat16) @ self.mix_bf16).float() * 0.01


def stats(t):
    t = t.detach().double().flatten()
    return {"mean": t.mean().item(), "std": t.std().item(), "min": t.min().item(),
            "max": t.max().item(), "norm": t.norm().item(), "count": t.numel(),
            "histogram": [int(v) for v in torch.histc(t, bins=16, min=t.min().item(),
                                                     max=t.max().item()).tolist()]}


model = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--gate", default=None)
    ap.add_argument("--gate-last", action="store_true", help="--gate at the last epoch only")
    ap.add_argument("--local", action="store_true",
                    help="keep the model in main()'s locals only, not in a global")
    ap.add_argument("--save", default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    (in_a_local if a.local else in_a_global)(a)
    print("DONE", flush=True)


def in_a_global(a):
    global model
    model = Net()    # a global of __main__: found there without Python frames
    train(a, model)


def in_a_local(a):
    model = Net()    # only in this frame's locals (and train's), as in most scripts
    train(a, model)


def train(a, model):
    assert not model.tview.is_contiguous()
    data = TensorDataset(torch.randn(8 * a.batches, 12), torch.randn(8 * a.batches, 4))
    loader = DataLoader(data, batch_size=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(a.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        for name, p in model.named_parameters():
            g = stats(p.grad) if p.grad is not None else None
            print("STATS", epoch, name, json.dumps({"weights": stats(p), "grad": g}), flush=True)
        if a.save:
            torch.save({n: (p.detach().clone(), None if p.grad is None else p.grad.clone())
                        for n, p in model.named_parameters()},
                       os.path.join(a.save, f"epoch{epoch}.pt"))
        with torch.no_grad():
            print("EPOCH_END", epoch, flush=True)
            if a.gate and (not a.gate_last or epoch == a.epochs - 1):
                with open(a.gate) as f:
                    f.readline()


if __name__ == "__main__":
    main()
