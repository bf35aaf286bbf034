#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A synthetic fleet's spools, as the observer writes them (schemas/spool-batch.schema.json),
for the fleet bench (bench/fleet.sh) and the cookbook's tests: one spool root per node
(OUT/<node>/spool), RANKS ranks each, STEPS synchronous steps of a data-parallel job: each
step a data_load, forward, backward holding a collective_wait, optimizer_step, and CUDA
kernels on the step. Every rank's step lasts as long (they wait for each other in the
all-reduce); what differs is the busy part: --slow-rank's data loading is --slow-factor
slower, --slow-node's ranks compute --slow-factor slower. A batch holds --steps-per-batch
steps (a flush interval's worth); a rank's last batch closes its session (final).

    fleet_spool.py OUT --job J --nodes N --ranks R --steps S [--steps-per-batch B]
                   [--step-ms MS] [--slow-rank K] [--slow-node NODE] [--slow-factor F]
                   [--start-s UNIX] [--seed SEED]
Prints the spans written."""
import argparse
import json
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--job", required=True)
ap.add_argument("--nodes", type=int, default=2)
ap.add_argument("--ranks", type=int, default=2, help="per node")
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--steps-per-batch", type=int, default=20)
ap.add_argument("--step-ms", type=float, default=100.0)
ap.add_argument("--slow-rank", type=int, default=-1)
ap.add_argument("--slow-node", default="")
ap.add_argument("--slow-factor", type=float, default=1.5)
ap.add_argument("--start-s", type=float, default=1796170000.0)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()

rng = random.Random(args.seed)
MS = 1_000_000
KERNELS = {"ampere_sgemm_128x64_tn": 96, "vectorized_elementwise_kernel": 64,
           "ncclDevKernel_AllReduce_Sum_f32_RING_LL": 8, "reduce_kernel": 4, "softmax_warp": 2}
world = args.nodes * args.ranks
spans_written = 0


def span(sid, parent, name, index, start, end, attrs=None, status="ok"):
    s = {"span_id": sid, "parent_id": parent, "name": name, "index": index,
         "start_ns": start, "end_ns": end, "status": status, "attrs": attrs or {}, "marks": []}
    if end is not None:
        s["duration_ns"] = end - start
    return s


def write(spool, sid, seq, rank, local, node, pid, spans, final, now):
    global spans_written
    b = {"format": "cirron-spool/1", "session_id": sid, "pid": pid, "rank": rank,
         "local_rank": local, "world_size": world, "host": node, "job": args.job,
         "job_source": "TORCHELASTIC_RUN_ID", "role": "rank", "seq": seq, "written_ns": now,
         "final": final, "spans": spans, "health": {}}
    tmp = os.path.join(spool, f".{sid}.{seq:08d}.tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(b, separators=(",", ":")) + "\n")
    os.rename(tmp, os.path.join(spool, f"{sid}.{seq:08d}.json"))
    spans_written += sum(1 for s in spans if s["status"] != "open" or final)


t0 = int(args.start_s * 1e9)
step_ns = int(args.step_ms * MS)
for n in range(args.nodes):
    node = f"node-{n:03d}"
    spool = os.path.join(args.out, node, "spool")
    os.makedirs(spool, exist_ok=True)
    for local in range(args.ranks):
        rank = n * args.ranks + local
        pid = 1000 + rank
        sid = f"{node}-{pid}-{4242 + rank}"
        end_all = t0 + args.steps * step_ns + 10 * MS
        root = span(1, None, "cirron.session", None, t0 - 5 * MS, None,
                    {"pid": pid, "rank": rank, "local_rank": local, "world_size": world,
                     "role": "rank", "host": node, "job": args.job,
                     "job_source": "TORCHELASTIC_RUN_ID"}, status="open")
        epoch = span(2, 1, "epoch", 0, t0, None, status="open")
        next_id, seq, pending = 3, 0, [root, epoch]
        slow_data = args.slow_factor if rank == args.slow_rank else 1.0
        slow_comp = args.slow_factor if node == args.slow_node else 1.0
        for k in range(args.steps):
            s0 = t0 + k * step_ns
            jitter = rng.uniform(0.97, 1.03)
            dl = int(10 * MS * slow_data * jitter)
            fw = int(20 * MS * slow_comp * jitter)
            bw = int(30 * MS * slow_comp * jitter)
            opt = int(5 * MS * jitter)
            busy = dl + fw + bw + opt
            wait = max(step_ns - busy - MS, 100_000)
            sid_step = next_id
            pending.append(span(sid_step, 2, "step", k, s0, s0 + step_ns - 100_000,
                                {"boundary": "optimizer_step", "cuda.launches": 174,
                                 "cuda.kernels": dict(KERNELS, other=0),
                                 "cuda.kernels_count": 5}))
            a = s0
            pending.append(span(next_id + 1, sid_step, "data_load", None, a, a + dl,
                                {"data_load_ns": dl}))
            a += dl
            pending.append(span(next_id + 2, sid_step, "forward", None, a, a + fw,
                                {"mode": "train"}))
            a += fw
            pending.append(span(next_id + 3, sid_step, "backward", None, a, a + bw + wait))
            pending.append(span(next_id + 4, next_id + 3, "collective_wait", None, a + bw,
                                a + bw + wait, {"op": "allreduce"}))
            a += bw + wait
            pending.append(span(next_id + 5, sid_step, "optimizer_step", None, a, a + opt,
                                {"optimizer": "SGD.step"}))
            next_id += 6
            if (k + 1) % args.steps_per_batch == 0 and k + 1 < args.steps:
                write(spool, sid, seq, rank, local, node, pid, pending, False, a + opt)
                seq += 1
                pending = []
        epoch = dict(epoch, end_ns=end_all - 5 * MS, duration_ns=end_all - 5 * MS - t0,
                     status="ok")
        root = dict(root, end_ns=end_all, duration_ns=end_all - root["start_ns"], status="ok")
        pending += [epoch, root]
        write(spool, sid, seq, rank, local, node, pid, pending, True, end_all)
print(spans_written)
