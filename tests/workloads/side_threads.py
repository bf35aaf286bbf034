#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training job with side threads blocked in system calls that a stop and SIGCONT end in EINTR
(signal(7), "Interruption of system calls and library functions by stop signals"): epoll_wait,
recv on a socket with SO_RCVTIMEO, semtimedop, sigtimedwait. Each is called through ctypes
(libc, use_errno) so that no Python-level EINTR retry (PEP 475) hides the error; each call has
a timeout of 1 s and is made again in a loop.

    python3 side_threads.py [--seconds S | --until-file F]

Prints "READY <pid>" once the threads block, trains (a small MLP: zero_grad, forward, backward,
step) for S seconds from its first step or until F exists, then prints one JSON line:
{"eintr": {kind: n}, "calls": {kind: n}, "other_errors": {kind: {errno: n}}, "steps": n};
steps is the number of loss.backward() calls (tests/e2e/test_job_first.py).
"""
import argparse
import ctypes
import errno
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

# by its soname: ctypes.util.find_library would run ldconfig in a child process
libc = ctypes.CDLL("libc.so.6", use_errno=True)

EINTR = {"epoll_wait": 0, "recv_rcvtimeo": 0, "semtimedop": 0, "sigtimedwait": 0}
CALLS = dict.fromkeys(EINTR, 0)
OTHER = {k: {} for k in EINTR}
stop = threading.Event()
ready = threading.Barrier(len(EINTR) + 1)


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class Sembuf(ctypes.Structure):
    _fields_ = [("sem_num", ctypes.c_ushort), ("sem_op", ctypes.c_short), ("sem_flg", ctypes.c_short)]


def note(kind, ret, ok_errnos=(errno.EAGAIN, errno.ETIMEDOUT)):
    CALLS[kind] += 1
    if ret >= 0:
        return
    e = ctypes.get_errno()
    if e == errno.EINTR:
        EINTR[kind] += 1
    elif e not in ok_errnos:
        OTHER[kind][e] = OTHER[kind].get(e, 0) + 1


def epoll_thread():
    r, w = os.pipe()
    ep = select.epoll()
    ep.register(r, select.EPOLLIN)
    events = ctypes.create_string_buffer(12 * 4)
    ready.wait()
    while not stop.is_set():
        note("epoll_wait", libc.epoll_wait(ep.fileno(), events, 4, 1000))


def recv_thread():
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 0))
    buf = ctypes.create_string_buffer(64)
    ready.wait()
    while not stop.is_set():
        note("recv_rcvtimeo", libc.recv(a.fileno(), buf, 64, 0))


def sem_thread():
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    semid = libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)
    if semid < 0:
        raise OSError(ctypes.get_errno(), "semget")
    op = Sembuf(0, -1, 0)  # waits: the semaphore stays 0
    ts = Timespec(1, 0)
    try:
        ready.wait()
        while not stop.is_set():
            note("semtimedop", libc.semtimedop(semid, ctypes.byref(op), 1, ctypes.byref(ts)))
    finally:
        libc.semctl(semid, 0, IPC_RMID)


def sigwait_thread():
    # SIGUSR2 is blocked in every thread (main blocks it before starting the threads) and never sent
    mask = ctypes.create_string_buffer(128)
    libc.sigemptyset(mask)
    libc.sigaddset(mask, signal.SIGUSR2)
    ts = Timespec(1, 0)
    ready.wait()
    while not stop.is_set():
        note("sigtimedwait", libc.sigtimedwait(mask, None, ctypes.byref(ts)))


def train(seconds, until_file):
    steps = 0
    end = None
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 1)
    def going():
        return not os.path.exists(until_file) if until_file else end is None or time.monotonic() < end

    while going():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        steps += 1
        if end is None:     # S seconds from the first step: its lazy imports took 12 s and more
            end = time.monotonic() + seconds    # in the emulated arm64 guest (tests/kernels)
        time.sleep(0.005)
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--until-file")
    args = ap.parse_args()
    import torch  # noqa: F401  (loaded before the threads start, as jobs import it first)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
    threads = [threading.Thread(target=f, daemon=True)
               for f in (epoll_thread, recv_thread, sem_thread, sigwait_thread)]
    for t in threads:
        t.start()
    ready.wait()
    print("READY", os.getpid(), flush=True)
    steps = train(args.seconds, args.until_file)
    stop.set()
    for t in threads:
        t.join(timeout=3)
    print(json.dumps({"eintr": EINTR, "calls": CALLS, "other_errors": OTHER, "steps": steps}),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
