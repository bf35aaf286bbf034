#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A hostile target: maps every file of DIR executable (crafted libraries named like
libcudart or libtorch), then loads a library (ctypes), so that its dynamic linker says its
link map changed; prints "ready" and waits for SIGUSR1, then exits 0.

    map_crafted.py DIR"""
import mmap
import os
import signal
import sys

maps = []
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), "rb") as f:
        maps.append(mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC,
                              flags=mmap.MAP_PRIVATE))
import ctypes  # noqa: E402,F401  (a dlopen: the link-map change watch looks at)

print("ready", flush=True)
signal.sigwait([signal.SIGUSR1])
