#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Churn under the node agent (issue 15): N short jobs, P at a time, each a process the agent
traces (tests/targets/cuda_calls, linked against the CUDA runtime). Each job waits until the
agent says its session started, makes its calls and exits, so the figure measured is whether
the agent keeps up and whether its memory stays flat, not how fast a job can be. Reported,
not asserted: jobs, traced, missed, agent CPU, RSS at start / every tenth / end, peak, and the
links still being closed when the last job ended (the kernel closes uprobes one grace period
at a time).

    bench/watch_churn.py [--jobs N] [--parallel P] [--probe BIN]
Needs root and `make cirron-probe .output/tests/cuda_calls`."""
import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from procstat import cpu, mem

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--jobs", type=int, default=10000)
ap.add_argument("--parallel", type=int, default=4)
ap.add_argument("--probe", default=str(ROOT / "cirron-probe"))
args = ap.parse_args()

tmp = Path(tempfile.mkdtemp(prefix="cirron-churn-"))
job_bin = tmp / "churn_job"             # its own path: --match picks these jobs only
shutil.copy(ROOT / ".output" / "tests" / "cuda_calls", job_bin)


agent = subprocess.Popen([args.probe, "watch", "-v", "--path", tmp / "trace", "--output", "none",
                          "--cache-dir", tmp / "cache", "--match", str(job_bin).replace(".", "[.]")],
                         stderr=subprocess.PIPE, text=True)
started, ended, cond = set(), set(), threading.Condition()


def read_log():
    for line in agent.stderr:
        m = re.search(r"pid (\d+): session \S+ (started|ended)", line)
        with cond:
            if m:
                (started if m.group(2) == "started" else ended).add(int(m.group(1)))
            elif "watching for processes" in line:
                started.add(-1)
            cond.notify_all()


threading.Thread(target=read_log, daemon=True).start()
with cond:
    cond.wait_for(lambda: -1 in started, 60)
cpu0, rss0 = cpu(agent.pid), mem(agent.pid)[0]
samples, missed, done, pids = [], 0, 0, []
t0 = time.monotonic()


def one_job():
    p = subprocess.Popen([job_bin, "--wait"], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()                 # "ready"
    with cond:
        traced = cond.wait_for(lambda: p.pid in started, 30)
    p.send_signal(signal.SIGUSR1)
    p.wait()
    return p.pid, traced


running = []
while done < args.jobs:
    while len(running) < args.parallel and done + len(running) < args.jobs:
        box = {}
        th = threading.Thread(target=lambda b=box: b.update(r=one_job()))
        th.start()
        running.append((th, box))
    th, box = running.pop(0)
    th.join()
    pid, traced = box["r"]
    pids.append(pid)
    missed += not traced
    done += 1
    if done % max(1, args.jobs // 10) == 0:
        samples.append((done, round(mem(agent.pid)[0], 1)))
        print(f"{done} jobs, {missed} missed, agent RSS {samples[-1][1]} MiB", flush=True)
wall = time.monotonic() - t0
with cond:
    cond.wait_for(lambda: set(pids) <= ended, 120)
cpu1, (rss1, hwm) = cpu(agent.pid), mem(agent.pid)
agent.send_signal(signal.SIGINT)
agent.wait(600)
reused = len(pids) - len(set(pids))
print(f"jobs {args.jobs} (parallel {args.parallel}), traced {args.jobs - missed}, missed {missed}, "
      f"ended {len(set(pids) & ended)}, pids reused {reused}, wall {wall:.0f} s\n"
      f"agent CPU {cpu1 - cpu0:.1f} s ({(cpu1 - cpu0) / args.jobs * 1000:.1f} ms a job), "
      f"RSS {rss0:.1f} -> {rss1:.1f} MiB (peak {hwm:.1f}); samples {samples}")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(0)
