#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training loop that prints its metrics the way real jobs do, for the marks tests. Plain
PyTorch and print(): nothing here knows the observer.

    prints.py --expect FILE [--epochs E] [--batches B] [--no-flush]
    prints.py --flood MB [--expect FILE]

Loop: after each optimizer step, an HF Trainer-style dict on stdout, a Keras-style progress
line on stderr and a plain print on stdout; at each epoch's end an HF-style eval dict (a
summary) and a tqdm-style bar redrawn with carriage returns on stderr. --expect writes, as
JSON, every metric printed: name, the printed text of its value, kind, stream, and the step
(global index) or epoch it was printed in.
--flood MB: no training; MB megabytes of text (one metric line per write) and binary data
(random bytes, each chunk ending in a newline), and writes of 64 KiB of text; --expect gets
how many metric lines were written, how many writes went over the observer's copy bound and
how many metric lines came right after one of those (the observer drops the line a write over
the bound may have cut: it cannot see where that write ended).
"""
import argparse
import hashlib
import json
import os
import random
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--expect")
ap.add_argument("--flood", type=float, default=0)
ap.add_argument("--no-flush", action="store_true",
                help="leave stdout block-buffered (a pipe): it is written in 8 KiB blocks")
args = ap.parse_args()
expected = []


def out(stream, text):
    stream.write(text)
    if not args.no_flush:
        stream.flush()


COPY_BOUND = 8192  # the observer's copy per write (CIRRON_WRITE_COPY)


def flood():
    rnd = random.Random(1)
    total, lines, big, after_big = int(args.flood * (1 << 20)), 0, 0, 0
    written, last_big = 0, False
    digest = hashlib.sha256()
    while written < total:
        r = rnd.random()
        if r < 0.6:
            data = f"flood_metric={lines}.5 some text to fill the line out a bit\n".encode()
            lines += 1
            after_big += last_big
            last_big = False
        elif r < 0.95:
            data = rnd.randbytes(rnd.randrange(64, 2048)) + b"\n"
        else:
            data = (b"x" * 99 + b"\n") * 655     # 64 KiB of text
        if len(data) > COPY_BOUND:
            big += 1
        last_big = len(data) > COPY_BOUND
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
        digest.update(data)
        written += len(data)
    return {"lines": lines, "big_writes": big, "lines_after_big": after_big, "bytes": written,
            "sha256": digest.hexdigest()}


def train():
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    x = torch.randn(args.batches * 8, 4)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    for epoch in range(args.epochs):
        for i, (xb, yb) in enumerate(DataLoader(TensorDataset(x, y), batch_size=8)):
            opt.zero_grad()
            out_ = model(xb)
            loss = loss_fn(out_, yb)
            loss.backward()
            opt.step()
            lv, acc = f"{loss.item():.4f}", f"{(out_.argmax(1) == yb).float().mean().item():.4f}"
            ep = f"{epoch + (i + 1) / (args.batches + 1):.4f}"   # never a whole number
            out(sys.stdout, "{'loss': %s, 'learning_rate': 5e-05, 'epoch': %s}\n" % (lv, ep))
            out(sys.stderr, f"{i + 1}/{args.batches} [==============================] - 0s "
                            f"2ms/step - loss: {lv} - accuracy: {acc}\n")
            out(sys.stdout, f"step {step}: train_loss {lv}\n")
            where = ["step", step]
            expected.extend([
                ["loss", lv, "point", "stdout", where],
                ["learning_rate", "5e-05", "point", "stdout", where],
                ["epoch", ep, "point", "stdout", where],
                ["loss", lv, "point", "stderr", where],
                ["accuracy", acc, "point", "stderr", where],
                ["train_loss", lv, "point", "stdout", where]])
            step += 1
        ev = f"{0.5 + epoch / 10:.4f}"
        out(sys.stdout, "{'eval_loss': %s, 'eval_accuracy': 0.75, 'epoch': %d.0}\n" %
            (ev, epoch + 1))
        expected.extend([["eval_loss", ev, "summary", "stdout", ["epoch", epoch]],
                         ["eval_accuracy", "0.75", "summary", "stdout", ["epoch", epoch]],
                         ["epoch", f"{epoch + 1}.0", "summary", "stdout", ["epoch", epoch]]])
        # tqdm: the same bar redrawn; its postfix changes once
        for k, v in enumerate(["0.9", "0.9", "0.8"]):
            out(sys.stderr, f"\rval {k + 1}/3 |{'#' * (k + 1)}| [00:0{k}<00:01, val_metric={v}]")
        out(sys.stderr, "\n")
        # after the loop's last batch: the last step has ended, the epoch holds them; a val_
        # name is an end-of-epoch value
        expected.extend([["val_metric", "0.9", "summary", "stderr", ["epoch", epoch]],
                         ["val_metric", "0.8", "summary", "stderr", ["epoch", epoch]]])
    return expected


result = flood() if args.flood else train()
if args.expect:
    with open(args.expect, "w") as f:
        json.dump(result, f)
print("DONE", flush=True)
