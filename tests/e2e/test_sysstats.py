# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--sys-interval: per traced process CPU, memory, threads, I/O and context switches, and the
node's network and disk bytes, from /proc: in the spool (schema-checked by the fixtures), in
`trace` (text and JSON), as counter tracks in the Perfetto export; 0 turns it off."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, only_session, unavailable

TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
TRAIN = ["/usr/bin/python3", str(ROOT / "tests" / "workloads" / "train.py"), "--epochs", "2",
         "--batches", "20", "--step-sleep", "0.02"]
pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def torch_ok(bpf):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")


def probe(*args):
    return subprocess.run([str(ROOT / "cirron-probe"), *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_samples_in_spool_trace_and_perfetto(h, torch_ok):
    root = h.spool_root()
    p = h.observer("run", "--sys-interval", "0.1", "--flush-interval", "0.3", "--", *TRAIN,
                   path=root)
    assert p.finish(120) == 0, p.err.text
    s = only_session(root)
    samples = [x for b in s.batches for x in b.get("sys", [])]
    assert len(samples) >= 5, len(samples)
    start, end = s.root["start_ns"], s.root["end_ns"]
    for a, b in zip(samples, samples[1:]):
        assert a["ts_ns"] < b["ts_ns"]
        for k in ("cpu_user_ns", "cpu_system_ns", "ctx_voluntary", "ctx_involuntary",
                  "net_rx_bytes", "net_tx_bytes", "disk_read_bytes", "disk_write_bytes",
                  "read_bytes", "write_bytes"):
            assert a[k] <= b[k], (k, a, b)     # totals only grow
    last = samples[-1]
    assert start <= samples[0]["ts_ns"] and last["ts_ns"] <= end
    assert 10 << 20 < last["rss_bytes"] < 64 << 30 and last["threads"] >= 1
    # a Python training loop uses CPU, at most all cores' worth of its lifetime
    cpu = last["cpu_user_ns"] + last["cpu_system_ns"]
    assert 0 < cpu <= (end - start) * (len(__import__("os").sched_getaffinity(0)) + 1)

    r = probe("trace", root)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]     # after the tree
    assert line.startswith(f"sys: {len(samples)} samples over "), r.stdout[-500:]
    assert "rss " in line and "context switches" in line and "node: net" in line
    r = probe("trace", root, "--format", "json")
    sysj = json.loads(r.stdout)[0]["sys"]
    assert sysj["samples"] == len(samples)
    assert abs(sysj["last"]["ts_ns"] - last["ts_ns"]) < 1000     # via cJSON doubles
    assert sysj["rss_bytes_max"] == max(x["rss_bytes"] for x in samples)
    r = probe("trace", root, "--format", "perfetto")
    events = json.loads(r.stdout)["traceEvents"]
    rss = [e for e in events if e["ph"] == "C" and e["name"] == "sys: rss (bytes)"]
    assert [e["args"]["rss"] for e in rss] == [x["rss_bytes"] for x in samples]
    cpu_ev = [e for e in events if e["ph"] == "C" and e["name"] == "sys: cpu (% of a core)"]
    assert len(cpu_ev) == len(samples) - 1
    assert all(0 <= e["args"]["user"] <= 100 * 64 for e in cpu_ev)
    assert max(e["args"]["user"] for e in cpu_ev) > 0


def test_off_and_bad_values(h, torch_ok):
    root = h.spool_root()
    p = h.observer("run", "--sys-interval", "0", "--", *TRAIN[:2], "--epochs", "1", path=root)
    assert p.finish(120) == 0, p.err.text
    s = only_session(root)
    assert not any("sys" in b for b in s.batches)
    assert "\nsys: " not in probe("trace", root).stdout
    for bad in ("-1", "x", ""):
        r = probe("run", "--sys-interval", bad, "--", "/bin/true")
        assert r.returncode == 64 and r.stderr.count("\n") == 1, r.stderr
        assert "invalid --sys-interval" in r.stderr


def test_run_shorter_than_the_interval(h, torch_ok):
    """A session gets a sample at the first tick after it begins, whatever the interval; with
    only that one, `trace` says what the process had used when it was read and when that was,
    and claims no interval, rate or node delta."""
    root = h.spool_root()
    p = h.observer("run", "--sys-interval", "600", "--", *TRAIN[:2], "--epochs", "1",
                   "--batches", "2", path=root)
    assert p.finish(120) == 0, p.err.text
    s = only_session(root)
    (sample,) = [x for b in s.batches for x in b.get("sys", [])]
    assert s.root["start_ns"] <= sample["ts_ns"] <= s.root["end_ns"]
    r = probe("trace", root)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    assert line.startswith("sys: 1 sample, read "), r.stdout[-500:]
    assert " after the session began: the process had used cpu " in line
    assert (f"cpu {sample['cpu_user_ns'] / 1e9:.2f}s user, "
            f"{sample['cpu_system_ns'] / 1e9:.2f}s system; "
            f"rss {sample['rss_bytes'] / 1048576:.1f} MiB; threads {sample['threads']};") in line
    assert f"{sample['ctx_voluntary']} voluntary, {sample['ctx_involuntary']} involuntary" in line
    assert " over " not in line and "node:" not in line and "max" not in line
    assert sample["cpu_user_ns"] + sample["cpu_system_ns"] > 0   # python imported torch
