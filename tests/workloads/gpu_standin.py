# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A torch training loop whose CUDA work runs on the stand-in driver's fake GPU
(tests/targets/libcuda_standin.c, CIRRON_STANDIN_GPU_US), with the stand-in CUPTI mapped as
torch maps its libcupti (tests/targets/cupti_standin.c): the whole GPU-time path without a GPU
(tests/e2e/test_gpu_time.py). cuInit loads CUDA_INJECTION64_PATH's library, as the driver
does. Each step: a host-to-device copy in its collate (data_load), FWD runtime launches in
forward (a Module's), BWD driver launches in backward (an autograd.Function's), OPT runtime
launches and a cudaStreamSynchronize in the optimizer step (an SGD's). The fake GPU logs what
ran to --gpu-log (CIRRON_STANDIN_GPU_LOG) for the test to hold the spans against.

  --wait: print "ready", train only after SIGUSR1 (an observer attaches first), until SIGUSR2
          or --steps; then wait for the companion to give CUPTI back and say so
  --hold-cupti: subscribe to CUPTI first, as a torch.profiler would (the companion stands aside)
"""
import argparse
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / ".output" / "tests" / "standin"
ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=8)
ap.add_argument("--steps", type=int, default=0, help="with --wait: at most this many")
ap.add_argument("--gpu-us", type=int, default=200)
ap.add_argument("--gpu-log", default="")
ap.add_argument("--wait", action="store_true")
ap.add_argument("--hold-cupti", action="store_true")
args = ap.parse_args()
FWD, BWD, OPT = 3, 4, 2

os.environ["CIRRON_STANDIN_GPU_US"] = str(args.gpu_us)
if args.gpu_log:
    os.environ["CIRRON_STANDIN_GPU_LOG"] = args.gpu_log
cupti = ctypes.CDLL(str(STANDIN / "libcupti.so.13"), mode=ctypes.RTLD_GLOBAL)
cuda = ctypes.CDLL(str(STANDIN / "libcuda.so.1"), mode=ctypes.RTLD_GLOBAL)
cudart = ctypes.CDLL(str(STANDIN / "libcirron_fake_cudart.so"))


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.c_void_p]
cudart.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
cuda.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
if args.hold_cupti:     # another subscriber, first
    handle = ctypes.c_void_p()
    assert cupti.cuptiSubscribe(ctypes.byref(handle), None, None) == 0
cuda.cuInit(0)          # the companion, if CUDA_INJECTION64_PATH names it


def kernel(mangled):
    k = ctypes.c_void_p()
    cuda.cuLibraryGetKernel(ctypes.byref(k), None, mangled)
    return k


K_FWD, K_BWD, K_OPT = kernel(b"_Z8fwd_gemmPfS_"), kernel(b"_Z8bwd_gemmPf"), kernel(b"_Z4adamv")
ONE = Dim3(1, 1, 1)
HOST = ctypes.create_string_buffer(4096)


def launch_rt(k, n):
    for _ in range(n):
        cudart.cudaLaunchKernel(k, ONE, ONE, None, 0, None)


class Fwd(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 4)

    def forward(self, x):
        launch_rt(K_FWD, FWD)
        return self.lin(x)


class Bwd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        for _ in range(BWD):
            cuda.cuLaunchKernel(K_BWD, 1, 1, 1, 1, 1, 1, 0, None, None, None)
        return g


class Opt(torch.optim.SGD):
    def step(self, closure=None):
        launch_rt(K_OPT, OPT)
        cudart.cudaStreamSynchronize(None)      # what loss.item() does: waits for the GPU
        return super().step(closure)


def collate(batch):
    cuda.cuMemcpyHtoD_v2(0x10000, HOST, 4096)
    return torch.utils.data.default_collate(batch)


stop = False


def on_usr2(sig, frame):
    global stop
    stop = True


def main():
    model = Fwd()
    opt = Opt(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(args.batches * 8, 16),
                                          torch.randint(0, 4, (args.batches * 8,)))
    loader = torch.utils.data.DataLoader(data, batch_size=8, collate_fn=collate)
    if args.wait:
        signal.signal(signal.SIGUSR2, on_usr2)
        print("ready", flush=True)
        signal.sigwait([signal.SIGUSR1])
    steps = 0
    for epoch in range(args.epochs if not args.wait else 10 ** 6):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(Bwd.apply(model(x)), y)
            loss.backward()
            opt.step()
            steps += 1
            if args.wait and (stop or (args.steps and steps >= args.steps)):
                break
        print(f"epoch {epoch} steps {steps}", flush=True)
        if args.wait and (stop or (args.steps and steps >= args.steps)):
            break
    if args.wait:
        gate_off()
    print("DONE", flush=True)


def gate_off():
    """After the observer left: the companion's semaphore is down and CUPTI is free again (a
    profiler can subscribe)."""
    comp = os.environ.get("CUDA_INJECTION64_PATH")
    if not comp:
        return
    sem = ctypes.c_ushort.in_dll(ctypes.CDLL(comp, mode=os.RTLD_NOLOAD), "cirron_gpu_batch_semaphore")
    end = time.time() + 30
    while (sem.value or cupti.standin_cupti_subscribed()) and time.time() < end:
        time.sleep(0.01)
    handle = ctypes.c_void_p()
    ok = cupti.cuptiSubscribe(ctypes.byref(handle), None, None) == 0
    print(f"gate {sem.value} subscribed_after {int(ok)}", flush=True)


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    sys.exit(main())
