#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Exceptions that leave probed C++ functions and that the job catches. Plain PyTorch.

    raise_through.py backward [--times N]
        N backwards whose autograd Function raises in its backward (the error leaves
        torch::autograd::Engine::execute), each caught; then one good backward.
    raise_through.py collective --rank R --port P
        two gloo ranks (R = 0 or 1, rendezvous on 127.0.0.1:P); rank 1 never joins rank 0's
        all-reduce, so rank 0's c10d::Work::wait throws its timeout, which rank 0 catches.

Prints "caught N" and "DONE" when the job outlived its exceptions."""
import argparse
import datetime
import os

import torch

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["backward", "collective"])
ap.add_argument("--times", type=int, default=3)
ap.add_argument("--rank", type=int, default=0)
ap.add_argument("--port", type=int, default=0)
args = ap.parse_args()


class Boom(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


if args.mode == "backward":
    x = torch.ones(3, requires_grad=True)
    caught = 0
    for _ in range(args.times):
        try:
            Boom.apply(x).sum().backward()
        except ValueError:
            caught += 1
    print(f"caught {caught}", flush=True)
    (x * 3).sum().backward()
else:
    import torch.distributed as dist
    store = dist.TCPStore("127.0.0.1", args.port, 2, args.rank == 0, use_libuv=False)
    dist.init_process_group("gloo", rank=args.rank, world_size=2, store=store,
                            timeout=datetime.timedelta(seconds=2))
    if args.rank == 0:
        try:
            dist.all_reduce(torch.ones(4))
        except RuntimeError:
            print("caught 1", flush=True)
        store.set("done", "1")
        store.wait(["seen"], datetime.timedelta(seconds=60))  # rank 0 serves the store
    else:
        store.wait(["done"], datetime.timedelta(seconds=60))
        store.set("seen", "1")
print("DONE", flush=True)
if args.mode == "collective":
    # A gloo work that timed out leaves its thread behind: at interpreter exit torch 2.6 and
    # 2.13 abort ("terminate called without an active exception") 1 run in 4 without any
    # observer (pytorch#117762). What the test checks ends at DONE.
    os._exit(0)
