#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bench/snapshot_copy.py [PYTHON] [ROUNDS]: what BPF's copy at a loop's end costs a loop of
epochs of a few ms that go straight on (a small model, 8 steps an epoch, 300 epochs), side by
side in interleaved rounds: the job alone, under `run --snapshots off`, under `run` (the
default: the loader's reads and BPF's copies), and under `run` with CIRRON_TEST_SNAP_COPY_ONLY
(BPF's copies only, once the model is found). The job times its own epochs (median ms); the
observer's own numbers come from the spool: records by BPF's copy and `bpf_copy_us`, the
reads it made, the copies in health."""
import glob, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = r"""
import statistics, time, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(64, 12), torch.randn(64, 4)), batch_size=8)
times = []
for epoch in range(300):
    t0 = time.perf_counter()
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    times.append(time.perf_counter() - t0)
print("EPOCH_MS", statistics.median(times[50:]) * 1e3)
"""


def once(py, label):
    d = tempfile.mkdtemp()
    env = dict(os.environ)
    if label == "bare":
        argv = [py, "-c", JOB]
    else:
        argv = [os.path.join(ROOT, "cirron-probe"), "run", "--path", d, "--output", "spool",
                *(["--snapshots", "off"] if label == "run, snapshots off" else []),
                "--", py, "-c", JOB]
        if label == "run, BPF's copies only":
            env["CIRRON_TEST_SNAP_COPY_ONLY"] = "1"
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout
    ms = float(next(l.split()[1] for l in out.splitlines() if l.startswith("EPOCH_MS")))
    recs, health = [], {}
    for f in sorted(glob.glob(d + "/spool/*.json")):
        b = json.load(open(f))
        recs += b.get("snapshots", [])
        health = b.get("health", health) or health
    return ms, recs, health


def main():
    py = sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/python3"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    labels = ["bare", "run, snapshots off", "run", "run, BPF's copies only"]
    ms = {l: [] for l in labels}
    copy_us, summary = [], {}
    for _ in range(rounds):
        for l in labels:
            m, recs, h = once(py, l)
            ms[l].append(m)
            copied = [r for r in recs if r.get("read_from") == "bpf_copy"]
            copy_us += [r["bpf_copy_us"] for r in copied]
            if l != "bare":
                later = [r for r in recs if "error" in r or r["after_step"] != r["epoch_last_step"]]
                summary[l] = (len(recs), len(copied), len(later), h.get("snapshot_reads", 0),
                              h.get("snapshot_bpf_copies", 0))
    base = statistics.median(ms["bare"])
    print(f"{'':26} {'epoch ms':>9} {'ratio':>6}  records: all, from BPF's copy, not the "
          "epoch's end's (later, error); reads, BPF's copies (the last round)")
    for l in labels:
        m = statistics.median(ms[l])
        extra = "  %d, %d, %d; %d, %d" % summary[l] if l in summary else ""
        print(f"{l:26} {m:9.3f} {m / base:6.3f}{extra}")
    if copy_us:
        q = statistics.quantiles(copy_us, n=20)
        print(f"BPF's copy in the job's thread: median {statistics.median(copy_us):.1f} us, "
              f"p95 {q[18]:.1f} us, {len(copy_us)} copies read back")


main()
