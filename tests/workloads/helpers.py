# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A job with helper processes, as real ones have (tests/e2e/test_helpers.py):

  - DataLoader workers started by a multiprocessing context that execs a new interpreter
    (spawn, forkserver: what Python 3.14 makes the default), each loading torch;
  - a tool the job runs and waits for (--tool PATH: a CUDA client, as transformers runs
    nvidia-smi), which maps a probed library.

    helpers.py [--context spawn|forkserver] [--workers W] [--epochs E] [--tool PATH]
    helpers.py --spawn-ranks N: no helpers, but N processes that torch.multiprocessing.spawn
               starts (as DDP scripts do), each training: jobs, not helpers of this one
"""
import argparse
import subprocess

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(rank, epochs, batches, workers, context):
    x, y = torch.randn(8 * batches, 4), torch.randn(8 * batches, 1)
    data = DataLoader(TensorDataset(x, y), batch_size=8, num_workers=workers,
                      multiprocessing_context=context if workers else None)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = 0
    for _ in range(epochs):
        for xb, yb in data:
            opt.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
            steps += 1
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--context", default="spawn")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--tool")
    ap.add_argument("--spawn-ranks", type=int, default=0)
    args = ap.parse_args()
    if args.spawn_ranks:
        torch.multiprocessing.spawn(train, args=(args.epochs, args.batches, 0, None),
                                    nprocs=args.spawn_ranks)
        print("DONE spawned", flush=True)
        return
    if args.tool:
        subprocess.run([args.tool], check=True, stdout=subprocess.DEVNULL)
    steps = train(0, args.epochs, args.batches, args.workers, args.context)
    print(f"DONE steps={steps}", flush=True)


if __name__ == "__main__":
    main()
