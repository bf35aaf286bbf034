#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""What a launch-bound step pays for the observer's CUDA launch probes, one trap a launch (the
default: launches counted at the driver) against two (CIRRON_EXPERIMENT_LAUNCH_LAYER=runtime:
the runtime's launch probes kept), resolved to 1%: one process makes ~2 ms steps of N runtime
launches on the stand-in driver (bench/launch_steps.c, no GPU), every step timed inside the
loop; the observer attaches and detaches into it in interleaved rounds (base, one, base, two,
base, ...), and each observed window is held against the base windows on either side. Printed:
per mode the median ratio, half the range, a 95% bootstrap interval of the median, and the
same for base windows against their neighbours (A/A: the method's own noise). The GPU
version of this is bench/gpu/check.py's launchbound part.

    bench/launch_layer.py [--launches 76] [--step-us 2000] [--rounds 8] [--window 1.5]

Needs root (BPF) and `make cirron-probe .output/bench/launch_steps`.
"""
import argparse
import random
import re
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--launches", type=int, default=76)
ap.add_argument("--step-us", type=int, default=2000)
ap.add_argument("--rounds", type=int, default=8, help="rounds per mode")
ap.add_argument("--window", type=float, default=1.5, help="seconds per window")
args = ap.parse_args()
BIN, STEPS = ROOT / "cirron-probe", ROOT / ".output" / "bench" / "launch_steps"
MODES = {"one": {}, "two": {"CIRRON_EXPERIMENT_LAUNCH_LAYER": "runtime"}}


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def wait_line(stream, pattern, timeout=60):
    """The first line of stream matching pattern, with the monotonic time it was read."""
    found = {}

    def reader():
        for line in stream:
            if re.search(pattern, line):
                found["t"] = mono()
                break
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    th.join(timeout)
    if "t" not in found:
        raise TimeoutError(pattern)
    return found["t"]


def ci95(xs, n=2000):
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choice(xs) for _ in xs) for _ in range(n))
    return (meds[int(0.975 * n)] - meds[int(0.025 * n)]) / 2


def main():
    tmp = Path(tempfile.mkdtemp(prefix="cirron-launch-layer-"))
    order = [m for _ in range(args.rounds) for m in MODES]
    total = 20 + len(order) * (2 * args.window + 4)
    out = tmp / "steps.txt"
    job = subprocess.Popen([str(STEPS), str(args.launches), str(args.step_us), str(total),
                            str(out)], stdout=subprocess.PIPE, text=True)
    wait_line(job.stdout, "^ready")
    base, observed = [], []     # windows: (t0, t1); observed with its mode
    for i, mode in enumerate(order):
        t0 = mono()
        time.sleep(args.window)
        base.append((t0 + 100_000_000, mono()))
        obs = subprocess.Popen([str(BIN), "attach", "-v", "-p", str(job.pid), "--duration",
                                str(args.window + 0.7), "--output", "none"],
                               env=dict(__import__("os").environ, **MODES[mode]),
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        t_att = wait_line(obs.stderr, r"attached \d+ probes to process")
        obs.wait()
        observed.append((mode, (t_att + 200_000_000, t_att + int(args.window * 1e9))))
    t0 = mono()
    time.sleep(args.window)
    base.append((t0 + 100_000_000, mono()))
    job.terminate()
    job.wait()
    steps = [tuple(map(int, line.split())) for line in out.read_text().splitlines()]

    def med(w):
        d = [dur for end, dur in steps if w[0] <= end <= w[1]]
        return statistics.median(d) if d else float("nan")
    bm = [med(w) for w in base]
    print(f"launch-bound steps: {args.launches} runtime launches + {args.step_us} us of CPU, "
          f"{args.rounds} rounds a mode, {args.window} s windows; base "
          f"{statistics.median(bm) / 1e3:.0f} us a step")
    print("| mode | observer / base (median) | ± half range | 95% interval of the median | "
          "us a step more |")
    print("|---|---|---|---|---|")
    rounds = {}
    for mode in MODES:
        r = [med(w) / ((bm[i] + bm[i + 1]) / 2) for i, (m, w) in enumerate(observed)
             if m == mode]
        extra = statistics.median(r) * statistics.median(bm) - statistics.median(bm)
        rounds[mode] = r
        print(f"| {mode} trap{'s' if mode == 'two' else ''} a launch | "
              f"{statistics.median(r):.4f} | {(max(r) - min(r)) / 2:.4f} | ±{ci95(r):.4f} | "
              f"{extra / 1e3:.1f} |")
    aa = [bm[i] / ((bm[i - 1] + bm[i + 1]) / 2) for i in range(1, len(bm) - 1)]
    for mode, r in rounds.items():
        print(f"# {mode}: rounds " + " ".join(f"{x:.3f}" for x in r))
    print(f"| base / base (A/A) | {statistics.median(aa):.4f} | {(max(aa) - min(aa)) / 2:.4f} | "
          f"±{ci95(aa):.4f} | |")


if __name__ == "__main__":
    main()
