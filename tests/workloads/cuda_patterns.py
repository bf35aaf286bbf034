# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The CUDA call patterns of a GPU training job, made through the real libcudart from a real
torch loop on a machine without a GPU (the calls fail fast, their probes fire), each where a
GPU job makes it (tests/e2e/test_cuda_counts.py):

  - LAUNCHES kernel launches in every forward (a Module's), BWD_LAUNCHES in every backward
    (an autograd.Function's), OPT_LAUNCHES and one cudaStreamSynchronize in every optimizer
    step (an SGD's), each phase's of a kernel of its own (KERNEL, BWD_KERNEL, OPT_KERNEL:
    host functions of libcudart, named by their symbols);
  - a 4096-byte host-to-device cudaMemcpy in every batch's collate (inside data_load);
  - the same forward's launches in validation forwards, under torch.no_grad();
  - one 1 GiB cudaMalloc, once, in the backward of step BIG_MALLOC_STEP (counted from 0);
  - --burst N: one step launches N kernels more in its forward, as fast as it can (a burst of
    20k+ a second);
  - --no-steps N: no training at all, N launches and N/10 copies from a plain loop.

Writes what it did as JSON to --expect FILE (not printed: the observer reads numbers in
what a job prints as marks), then prints DONE.
"""
import argparse
import ctypes
import json
import time

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=6)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--launches", type=int, default=40)
ap.add_argument("--burst", type=int, default=0)
ap.add_argument("--no-steps", type=int, default=0)
ap.add_argument("--expect", default="/dev/null")
args = ap.parse_args()

BWD_LAUNCHES, OPT_LAUNCHES, BIG_MALLOC_STEP, COPY = 7, 3, 3, 4096

cudart = ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.c_void_p]
cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
cudart.cudaMalloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
cudart.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
# Any host function serves as a "kernel": without a GPU the launch fails before using it. One
# each for forward, backward and optimizer step, named by the symbol at that address.
KERNEL = ctypes.cast(cudart.cudaGetDeviceCount, ctypes.c_void_p)
BWD_KERNEL = ctypes.cast(cudart.cudaGetLastError, ctypes.c_void_p)
OPT_KERNEL = ctypes.cast(cudart.cudaPeekAtLastError, ctypes.c_void_p)
HOST = ctypes.create_string_buffer(COPY)
ONE = Dim3(1, 1, 1)
did = {"launches": 0, "memcpy": 0, "malloc": 0, "sync": 0}


def launch(n, kernel=KERNEL):
    for _ in range(n):
        cudart.cudaLaunchKernel(kernel, ONE, ONE, None, 0, None)
    did["launches"] += n


def memcpy():
    cudart.cudaMemcpy(HOST, HOST, COPY, 1)     # cudaMemcpyHostToDevice
    did["memcpy"] += 1


if args.no_steps:
    for i in range(args.no_steps):
        launch(1)
        if i % 10 == 0:
            memcpy()
    with open(args.expect, "w") as f:
        json.dump(did, f)
    print("DONE", flush=True)
    raise SystemExit(0)

step = {"index": 0}


class Launching(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        launch(BWD_LAUNCHES, BWD_KERNEL)
        if step["index"] == BIG_MALLOC_STEP:
            p = ctypes.c_void_p()
            cudart.cudaMalloc(ctypes.byref(p), 1 << 30)
            did["malloc"] += 1
        return g


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 1)

    def forward(self, x):
        launch(args.launches)
        if self.training and args.burst and step["index"] == 1:
            launch(args.burst)
        return Launching.apply(self.lin(x))


class LaunchingSGD(torch.optim.SGD):
    def step(self, closure=None):
        launch(OPT_LAUNCHES, OPT_KERNEL)
        cudart.cudaStreamSynchronize(None)
        did["sync"] += 1
        return super().step(closure)


def collate(items):
    memcpy()
    xs, ys = zip(*items)
    return torch.stack(xs), torch.stack(ys)


data = torch.utils.data.TensorDataset(torch.randn(8 * args.batches, 8), torch.randn(8 * args.batches, 1))
val = torch.utils.data.TensorDataset(torch.randn(8 * args.val_batches, 8),
                                     torch.randn(8 * args.val_batches, 1))
model = Model()
opt = LaunchingSGD(model.parameters(), lr=0.01)
t0 = time.time()
for epoch in range(args.epochs):
    model.train()
    for x, y in torch.utils.data.DataLoader(data, batch_size=8, collate_fn=collate):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        step["index"] += 1
    with torch.no_grad():
        for x, y in torch.utils.data.DataLoader(val, batch_size=8, collate_fn=collate):
            model(x)
burst_s = time.time() - t0
with open(args.expect, "w") as f:
    json.dump(dict(did, steps=step["index"], bwd=BWD_LAUNCHES, opt=OPT_LAUNCHES,
                   fwd=args.launches, burst=args.burst, copy=COPY,
                   big_malloc_step=BIG_MALLOC_STEP, seconds=round(burst_s, 3)), f)
print("DONE", flush=True)
