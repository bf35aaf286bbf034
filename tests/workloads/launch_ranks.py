#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A launcher doing what torchrun does for one node, for torch builds whose torchrun does not
run (Debian bookworm's torch 1.13 on Python 3.11): starts N copies of a script with RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, waits for them, exits with the
first non-zero status.

    launch_ranks.py --nproc N [--port P] [--nnodes M --node-rank K] SCRIPT ARGS...

With --nnodes, this is node K of M (the others started alike, with the same --port): its
ranks are K*N .. K*N+N-1 of a world of M*N."""
import argparse
import os
import socket
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--nproc", type=int, required=True)
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--nnodes", type=int, default=1)
ap.add_argument("--node-rank", type=int, default=0)
ap.add_argument("script")
ap.add_argument("args", nargs=argparse.REMAINDER)
args = ap.parse_args()

port = args.port
if not port:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
procs = []
for local in range(args.nproc):
    rank = args.node_rank * args.nproc + local
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local),
               WORLD_SIZE=str(args.nproc * args.nnodes),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    procs.append(subprocess.Popen([sys.executable, args.script, *args.args], env=env))
codes = [p.wait() for p in procs]
sys.exit(next((c for c in codes if c), 0))
