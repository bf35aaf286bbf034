#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The node agent over a long life (issue 15): N short jobs, P at a time, then T real torch
jobs, under one `cirron-probe watch`; its RSS, CPU time and open fds sampled every S jobs.
Reported, not asserted: does its memory stay flat?

Short jobs live --job-ms (250 ms: the agent looks at them, they are not gone first) and
cycle through three kinds, as a node sees them:
  - plain: tests/targets/spin (no library of interest; its start is a link-map change
    the agent looks at and lets be);
  - other: tests/targets/cuda_calls under a name --match refuses (maps the CUDA runtime:
    the agent reads its maps and command line, and marks it ignored in BPF);
  - traced: every K-th job, cuda_calls under the name --match takes, released once the
    agent says its session started (~20 uprobe links each: the kernel closes them one grace
    period at a time, so K stays large or the backlog, not the agent, is what is measured).
Torch jobs: tests/workloads/train.py (1 epoch after release), 2 at a time, each traced.

    bench/watch_long_life.py [--jobs N] [--parallel P] [--traced-every K] [--torch-jobs T]
                             [--sample-every S] [--md FILE]
Needs root and `make cirron-probe .output/tests/cuda_calls .output/tests/spin`."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from procstat import cpu, mem

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--jobs", type=int, default=10000)
ap.add_argument("--parallel", type=int, default=16)
ap.add_argument("--job-ms", type=int, default=250,
                help="how long a short job lives: longer than the agent's round (100 ms), "
                     "so that it is looked at rather than gone first")
ap.add_argument("--traced-every", type=int, default=200)
ap.add_argument("--torch-jobs", type=int, default=20)
ap.add_argument("--sample-every", type=int, default=1000)
ap.add_argument("--probe", default=str(ROOT / "cirron-probe"))
ap.add_argument("--python", default="/usr/bin/python3")
ap.add_argument("--md", default=None, help="write the results section here too")
ap.add_argument("--targets", default=None, help="and the targets-table row (bench/lib.sh) here")
args = ap.parse_args()

tmp = Path(tempfile.mkdtemp(prefix="cirron-life-"))
traced_bin, other_bin = tmp / "life_traced", tmp / "life_other"
for b in (traced_bin, other_bin):
    shutil.copy(ROOT / ".output" / "tests" / "cuda_calls", b)
spin = ROOT / ".output" / "tests" / "spin"
train = tmp / "life_train.py"            # --match takes it by this name
shutil.copy(ROOT / "tests" / "workloads" / "train.py", train)


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


agent = subprocess.Popen([args.probe, "watch", "-v", "--path", tmp / "trace", "--cache-dir",
                          tmp / "cache", "--match", r"life_(traced|train[.]py)"],
                         stderr=subprocess.PIPE, text=True)
started, ended, cond, log = set(), set(), threading.Condition(), []


def read_log():
    for line in agent.stderr:
        m = re.search(r"pid (\d+): session \S+ (started|ended)", line)
        with cond:
            log.append(line)
            if m:
                (started if m.group(2) == "started" else ended).add(int(m.group(1)))
            elif "watching for processes" in line:
                started.add(-1)
            cond.notify_all()


threading.Thread(target=read_log, daemon=True).start()
with cond:
    if not cond.wait_for(lambda: -1 in started, 60):
        sys.exit("bench: the agent did not start: " + "".join(log[-5:]))
cpu0 = cpu(agent.pid)
rows, traced_pids, missed = [], [], 0


def sample(jobs, kind):
    rss, hwm = mem(agent.pid)
    rows.append((jobs, kind, cpu(agent.pid) - cpu0, rss, hwm, fds(agent.pid), time.monotonic()))
    print(f"{jobs} {kind} jobs: agent CPU {rows[-1][2]:.1f} s, RSS {rss:.1f} MiB, "
          f"{rows[-1][5]} fds", flush=True)


def released_when_traced(p, timeout=60):
    """Waits for the job's session, then lets it go on; False if it never came."""
    with cond:
        traced = cond.wait_for(lambda: p.pid in started, timeout)
    return traced


def short_job(i):
    if i % args.traced_every == args.traced_every - 1:
        p = subprocess.Popen([traced_bin, "--wait"], stdout=subprocess.PIPE, text=True)
        p.stdout.readline()                  # "ready"
        traced = released_when_traced(p)
        p.send_signal(signal.SIGUSR1)
        p.wait()
        return p.pid, traced
    if i % 2:
        subprocess.run([spin, str(args.job_ms)], stdout=subprocess.DEVNULL, check=True)
        return None, True
    p = subprocess.Popen([other_bin, "--wait"], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()                      # "ready": its libraries are loaded
    time.sleep(args.job_ms / 1000)           # the job's length, not a wait for the agent
    p.send_signal(signal.SIGUSR1)
    p.wait()
    return None, True


def torch_job(i):
    stop = tmp / f"stop{i}"
    p = subprocess.Popen([args.python, train, "--epochs", "1", "--until-file", stop],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    traced = released_when_traced(p, 180)
    stop.touch()
    rc = p.wait(300)
    if rc:
        print(f"torch job {i} failed: {p.stderr.read()[-500:]}", file=sys.stderr)
    return p.pid, traced


t0 = time.monotonic()
sample(0, "short")
with ThreadPoolExecutor(args.parallel) as pool:
    for done, (pid, traced) in enumerate(pool.map(short_job, range(args.jobs)), 1):
        if pid:
            traced_pids.append(pid)
            missed += not traced
        if done % args.sample_every == 0 or done == args.jobs:
            sample(done, "short")
short_wall = time.monotonic() - t0
with ThreadPoolExecutor(2) as pool:
    for done, (pid, traced) in enumerate(pool.map(torch_job, range(args.torch_jobs)), 1):
        traced_pids.append(pid)
        missed += not traced
        if done % max(1, args.torch_jobs // 4) == 0 or done == args.torch_jobs:
            sample(done, "torch")
with cond:
    all_ended = cond.wait_for(lambda: set(traced_pids) <= ended, 120)
agent.send_signal(signal.SIGINT)
agent.wait(1800)
summary = next((line.strip() for line in log if "watch: traced" in line), "(no summary)")
n_traced = len(traced_pids)

short_rows = [r for r in rows if r[1] == "short"]
first, last = short_rows[min(1, len(short_rows) - 1)], short_rows[-1]
md = [
    "## The node agent over a long life (issue 15)",
    "",
    f"bench/watch_long_life.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
    f"{args.jobs} short jobs of {args.job_ms} ms, {args.parallel} at a time (half `spin`, no library of "
    f"interest; half `cuda_calls` under a name --match refuses; every {args.traced_every}th "
    f"a traced `cuda_calls`), then {args.torch_jobs} torch jobs (train.py, 1 epoch after "
    f"release), 2 at a time, under one `cirron-probe watch` writing a spool. Agent CPU is "
    f"cumulative from the first job; fds include the uprobe links still being closed. "
    f"Reported, not asserted.",
    "",
    "| jobs done | kind | agent CPU (s) | RSS (MiB) | peak RSS (MiB) | open fds |",
    "|---|---|---|---|---|---|",
]
md += [f"| {j} | {k} | {c:.1f} | {r:.1f} | {h:.1f} | {f} |" for j, k, c, r, h, f, _ in rows]
md += [
    "",
    f"Short jobs: {short_wall:.0f} s wall; traced jobs {n_traced} ({missed} missed, "
    f"{'all' if all_ended else 'not all'} ended by exit in the log); RSS from "
    f"{first[3]:.1f} MiB after {first[0]} jobs to {last[3]:.1f} MiB after {last[0]} "
    f"({(last[3] - first[3]) * 1024 / max(1, last[0] - first[0]):.2f} KiB a job); agent CPU "
    f"{last[2] / max(1, last[0]) * 1000:.2f} ms a short job.",
    f"Agent's summary: `{summary.replace('cirron-probe: ', '')}`",
]
print("\n".join(md))
if args.md:
    Path(args.md).write_text("\n".join(md) + "\n")
if args.targets:
    Path(args.targets).write_text(
        f"agent RSS over {last[0]} short jobs|{first[3]:.1f} -> {last[3]:.1f} MiB, "
        f"{missed} of {n_traced} traced jobs missed|—\n")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(0)
