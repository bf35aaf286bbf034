#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A model without torch, for CPython builds no torch wheel is at hand for: a class named
Module with a `training` flag and a Python __call__ (what the observer knows a torch model
by: its class chain and the flag in its __dict__), called in train mode, then in eval mode.

    pure_modules.py [--train N] [--eval M] [--rounds R] [--load LIB] [--go-file PATH]
                    [--stop-file PATH]

Prints "DONE" at the end."""
import argparse
import ctypes
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--train", type=int, default=3)
ap.add_argument("--eval", type=int, default=2)
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--go-file", help="call a warm-up module until this file exists")
ap.add_argument("--stop-file", help="at the end, call it until this file exists")
ap.add_argument("--learned-file", help="before the measured calls, call another Net in train "
                "mode until this file exists (the observer has learned where Net's "
                "`training` lies)")
ap.add_argument("--load", help="a library to load first (the observer traces processes that "
                "map torch or the CUDA runtime)")
args = ap.parse_args()
if args.load:
    ctypes.CDLL(args.load)


class Module:
    def __init__(self):
        self.training = True
        for i in range(40):	# as many attributes as a framework model: a combined __dict__
            setattr(self, f"attr{i}", i)

    def train(self, mode=True):
        self.training = mode
        return self

    def __call__(self, *a):
        return self.forward(*a)


class Net(Module):
    def forward(self, x):
        time.sleep(0.002)
        return sum(x)


class Warmup(Module):
    def forward(self, x):
        return x


def warm_until(path):
    """Calls a warm-up module until path exists: the observer reads a called object's class
    in this process's memory, so the measured calls must come while it is there to read."""
    warm, deadline = Warmup(), time.monotonic() + 120
    while path and not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} did not appear")
        warm([0])
        time.sleep(0.01)


warm_until(args.go_file)	# the observer's session has started
if args.learned_file:
    first, deadline = Net(), time.monotonic() + 120
    while not os.path.exists(args.learned_file):
        if time.monotonic() > deadline:
            raise SystemExit(f"{args.learned_file} did not appear")
        first([0])
        time.sleep(0.01)
net = Net()
for _ in range(args.rounds):
    net.train()
    for _ in range(args.train):
        net([1, 2, 3])
    net.train(False)
    for _ in range(args.eval):
        net([1, 2, 3])
print("MEASURED", flush=True)
warm_until(args.stop_file)	# the observer has seen them all
print("DONE", flush=True)
