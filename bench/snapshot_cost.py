#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bench/snapshot_cost.py PYTHON: time and bytes per --snapshots snapshot of a 100M-parameter
CPU model (6 Linear 4096x4096 layers, float32, grads present), for stats (the 256 MiB cap
samples), stats with the cap above the model, and full (safetensors). Reads the observer's
own numbers (the snapshot records' duration_ms and bytes_read) from the spool."""
import glob, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = r"""
import sys, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(6)])
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(4, 4096)), batch_size=4)
for epoch in range(3):
    for (x,) in loader:
        opt.zero_grad(); model(x).square().mean().backward(); opt.step()
    with torch.no_grad():
        sys.stdin.readline()
"""
py = sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/python3"
for label, args in (("stats, cap 256 MiB", []), ("stats, cap 2048 MiB", ["--snapshot-max-mb", "2048"]),
                    ("full", ["--snapshots", "full"])):
    d = tempfile.mkdtemp()
    p = subprocess.Popen([os.path.join(ROOT, "cirron-probe"), "run", "--path", d, "--output", "spool",
                          *args, "--", py, "-c", MODEL], stdin=subprocess.PIPE, text=True,
                         stderr=subprocess.DEVNULL)
    import time
    for _ in range(3):      # one epoch per line, once the previous snapshot is in the spool
        n = len(recs := []) 
        while True:
            recs = [s for f in glob.glob(d + "/spool/*.json")
                    for s in json.load(open(f)).get("snapshots", [])]
            if len(recs) > _ or p.poll() is not None:
                break
            time.sleep(0.2)
        p.stdin.write("\n"); p.stdin.flush()
    p.wait()
    recs = sorted({s["epoch"]: s for f in glob.glob(d + "/spool/*.json")
                   for s in json.load(open(f)).get("snapshots", [])}.values(), key=lambda s: s["epoch"])
    for s in recs:
        print(f"{label}: epoch {s['epoch']}: {s['duration_ms']:.0f} ms, {s['bytes_read'] / 2**20:.1f} MiB read, "
              f"fraction {s.get('sampled_fraction', 1):.3f}, params {sum(p['bytes'] for p in s['params']) / 4 / 1e6:.1f}M")
    subprocess.run(["rm", "-rf", d])
