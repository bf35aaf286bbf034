#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Epochs as loops outside our own mark them (issue 44), for tests/e2e/test_epochs.py. Plain
PyTorch: nothing here knows the observer.

    epoch_loops.py --loop gan|sliced [--epochs E] [--batches B] [--val-batches V]
                   [--workers W] [--persistent] [--data tensor|sqlite] [--optimizer sgd]
                   [--step-sleep MS] [--epochs-forever]

gan:    an adversarial pair over a DataLoader (shuffled, W loader workers, `enumerate(loader,
        0)`): per batch the critic learns from a real batch and a generated one (two
        backwards before its optimizer steps), then the generator (a third backward, a second
        optimizer); at each epoch's first batch a picture of the generator's output is
        written (a forward with grad on and no backward, then a no_grad dump to a PGM file);
        between epochs both state dicts are saved (torch.save). --data sqlite: the pictures
        live in an SQLite file (made beforehand by a separate process), which each loader
        worker opens on its first item: its C library loads in the worker, after its fork.
sliced: no DataLoader: batches sliced from one tensor; forward, backward, clip_grad_norm_,
        parameters updated by hand under no_grad (or --optimizer sgd: an SGD step); after
        each epoch a validation of V batches under torch.no_grad() and model.eval(), then
        model.train().
Prints "EPOCH e steps=S forwards=F backwards=K opt_steps=O val_forwards=V" after each epoch
(sliced: "VAL e start_ns=... end_ns=..." before it, the wall clock just inside the validation's
no_grad block) and "DONE steps=... val_forwards=..." at the end (what the tests compare with
the tree).
--epochs-forever: epochs until killed (attach tests); --step-sleep: milliseconds slept per
step (so an attach lands mid-run).
"""
import argparse
import os
import tempfile
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--loop", required=True, choices=["gan", "sliced"])
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--epochs-forever", action="store_true")
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=3)
ap.add_argument("--workers", type=int, default=2)
ap.add_argument("--persistent", action="store_true")
ap.add_argument("--data", choices=["tensor", "sqlite"], default="tensor")
ap.add_argument("--optimizer", choices=["hand", "sgd"], default="hand")
ap.add_argument("--step-sleep", type=float, default=0)
ap.add_argument("--batch-size", type=int, default=16)
args = ap.parse_args()

torch.manual_seed(0)
bs = args.batch_size
out_dir = tempfile.mkdtemp(prefix="epoch-loops-")


def epochs():
    e = 0
    while args.epochs_forever or e < args.epochs:
        yield e
        e += 1


def pause():
    if args.step_sleep:
        time.sleep(args.step_sleep / 1000)


@torch.no_grad()
def dump_picture(images, path):
    """What image writers do (torchvision's save_image is decorated the same way): a grid of
    the batch as 8-bit grey levels, to a PGM file."""
    grid = images.reshape(images.shape[0], -1)
    lo, hi = grid.min(), grid.max()
    pix = ((grid - lo) / (hi - lo + 1e-8) * 255).to(torch.uint8)
    with open(path, "wb") as f:
        f.write(b"P5 %d %d 255\n" % (pix.shape[1], pix.shape[0]))
        f.write(pix.numpy().tobytes())


class SqlitePictures(torch.utils.data.Dataset):
    """Pictures stored as float32 blobs in an SQLite file, opened lazily (a connection does not
    survive a fork: each worker opens its own, as such datasets do)."""
    PREP = ("import sqlite3, struct, random, sys; random.seed(0); db = sqlite3.connect(sys.argv[1]);"
            "db.execute('create table p (i integer primary key, v blob)');"
            "db.executemany('insert into p values (?, ?)', [(i, struct.pack('16f', *[random.gauss(0, 1)"
            " for _ in range(16)])) for i in range(int(sys.argv[2]))]); db.commit()")

    def __init__(self, n):
        import subprocess
        import sys
        self.path, self.n, self.db = os.path.join(out_dir, "pictures.db"), n, None
        subprocess.run([sys.executable, "-c", self.PREP, self.path, str(n)], check=True)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.db is None:
            import sqlite3
            self.db = sqlite3.connect(self.path)
        (blob,) = self.db.execute("select v from p where i = ?", (i,)).fetchone()
        return (torch.frombuffer(bytearray(blob), dtype=torch.float32),)


def gan():
    z_dim, img = 8, 16
    data = TensorDataset(torch.randn(args.batches * bs, img)) if args.data == "tensor" \
        else SqlitePictures(args.batches * bs)
    loader = DataLoader(data, batch_size=bs, shuffle=True,
                        num_workers=args.workers,
                        persistent_workers=args.persistent and args.workers > 0)
    gen = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, img), nn.Tanh())
    critic = nn.Sequential(nn.Linear(img, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_c = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(4, z_dim)
    steps = 0
    for epoch in epochs():
        fw = bw = 0
        for i, (real,) in enumerate(loader, 0):
            n = real.shape[0]
            critic.zero_grad()
            loss_real = bce(critic(real), torch.ones(n, 1))
            loss_real.backward()
            fake = gen(torch.randn(n, z_dim))
            loss_fake = bce(critic(fake.detach()), torch.zeros(n, 1))
            loss_fake.backward()
            opt_c.step()
            gen.zero_grad()
            loss_gen = bce(critic(fake), torch.ones(n, 1))
            loss_gen.backward()
            opt_g.step()
            fw += 4
            bw += 3
            if i == 0:
                dump_picture(real, os.path.join(out_dir, "real.pgm"))
                sample = gen(fixed_noise).detach()   # grad on, no backward
                dump_picture(sample, os.path.join(out_dir, f"fake-{epoch}.pgm"))
            steps += 1
            pause()
        torch.save(gen.state_dict(), os.path.join(out_dir, "gen.pt"))
        torch.save(critic.state_dict(), os.path.join(out_dir, "critic.pt"))
        print(f"EPOCH {epoch} steps={args.batches} forwards={fw} backwards={bw} "
              f"opt_steps={2 * args.batches} val_forwards=0", flush=True)
    return steps, 0


def sliced():
    x = torch.randn(args.batches * bs, 16)
    y = (x[:, 0] > 0).long()
    vx, vy = torch.randn(args.val_batches * bs, 16), None
    vy = (vx[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05) if args.optimizer == "sgd" else None
    steps = val_forwards = 0
    for epoch in epochs():
        model.train()
        for i in range(args.batches):
            xb, yb = x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]
            loss = loss_fn(model(xb), yb)
            if opt:
                opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if opt:
                opt.step()
            else:
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.05 * p.grad
                        p.grad = None
            steps += 1
            pause()
        model.eval()
        correct = 0
        with torch.no_grad():
            val_start = time.time_ns()
            for i in range(args.val_batches):
                out = model(vx[i * bs:(i + 1) * bs])
                correct += int((out.argmax(1) == vy[i * bs:(i + 1) * bs]).sum())
                val_forwards += 1
            val_end = time.time_ns()
        print(f"VAL {epoch} start_ns={val_start} end_ns={val_end}", flush=True)
        print(f"EPOCH {epoch} steps={args.batches} forwards={args.batches} "
              f"backwards={args.batches} opt_steps={args.batches if opt else 0} "
              f"val_forwards={args.val_batches} val_acc={correct / (args.val_batches * bs):.3f}",
              flush=True)
    return steps, val_forwards


steps, val = {"gan": gan, "sliced": sliced}[args.loop]()
print(f"DONE steps={steps} val_forwards={val}", flush=True)
