# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Reading a long job's spool back (docs/outputs.md, "Long jobs"): every read command in memory
that does not grow with the job, what is newest (health, --last, the open path, hang records)
from the newest batches, long runs summed up, and spools cut short by a SIGKILL, mid-write or
between batches. The long spools are made by the writer itself, in seconds
(tests/targets/spool_gen.c: the observer's session tree and spool sink, no process traced),
and the reader's answers are checked against the spool merged here, in Python."""
import csv
import io
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import (BATCH_NAME, BIN, ROOT, SAN, assert_no_sanitizer_report, merge_spans,
                      only_session, san_env)

GEN = ROOT / ".output" / "tests" / "spool_gen"
PEAK_RSS = ROOT / ".output" / "tests" / "peak_rss"
STEPS = ["/usr/bin/python3", str(ROOT / "bench" / "synthetic_steps.py")]
TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
MAX_RSS_KB = 256 * 1024         # the bound, on a 300k-step spool
FLAT_KB = 16 * 1024             # what 10x the steps may add
pytestmark = pytest.mark.timeout(900)


def gen(tmp_path, name, *args, rc=0):
    root = tmp_path / name
    r = subprocess.run([str(GEN), str(root), *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == rc, r.stderr
    return root


def run(binary, *args, env=None):
    """(rc, stdout, stderr) of one read command."""
    r = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                       env=env, timeout=600)
    return r.returncode, r.stdout, r.stderr


def max_rss(binary, *args):
    """Peak RSS (KiB) of a read command run alone, its output thrown away."""
    r = subprocess.run([str(PEAK_RSS), str(binary), *map(str, args)], capture_output=True,
                       text=True, timeout=600, check=True)
    kb, rc = map(int, r.stdout.split())
    assert rc == 0, (args, rc)
    return kb


def fmt(ns):
    """tree/clock.c clock__fmt_duration"""
    if ns < 1000:
        return f"{ns}ns"
    if ns < 1000000:
        return f"{ns // 1000}us"
    if ns < 999950000:
        return f"{ns / 1e6:.1f}ms"
    if ns < 59995000000:
        return f"{ns / 1e9:.2f}s"
    s = ns // 10**9 + (ns % 10**9 >= 5 * 10**8)
    return f"{s // 60}m{s % 60:02d}s"


def pct(sorted_values, p):
    """trace/pctl.c pctl__pct: nearest rank"""
    k = int((p / 100.0) * len(sorted_values) + 0.999999)
    return sorted_values[k - 1 if k else 0]


def dur(s):
    return s["end_ns"] - s["start_ns"] if s["end_ns"] is not None else None


def summary(spans, epoch):
    """trace/step_sum.c's line for an epoch, from the merged spans (marks: loss only)."""
    kids = {}
    for s in spans.values():
        kids.setdefault(s["parent_id"], []).append(s)

    def data_ns(s):
        return (s["duration_ns"] if s["name"] == "data_load" and s["end_ns"] else 0) + \
            sum(data_ns(k) for k in kids.get(s["span_id"], []))
    steps = sorted((s for s in kids.get(epoch["span_id"], [])
                    if s["name"] == "step" and s["status"] == "ok" and s["end_ns"]),
                   key=lambda s: (s["start_ns"], s["span_id"]))
    if not steps:
        return None
    times = sorted(s["duration_ns"] for s in steps)
    total = sum(times)
    data = sum(data_ns(s) for s in steps)
    line = (f"steps: {len(steps)}, time p50 {fmt(pct(times, 50))} p90 {fmt(pct(times, 90))} "
            f"p99 {fmt(pct(times, 99))} max {fmt(times[-1])}; data_load "
            f"{100 * data / total if total else 0:.1f}% of step time")
    loss = [m["value"] for s in steps for m in s["marks"] if m["name"] == "loss"]
    if loss:
        line += f"; loss {loss[0]:.4g} -> {loss[-1]:.4g} ({len(loss)})"
    return line


@pytest.fixture(scope="module")
def spools(tmp_path_factory, built):
    """A small and a ten times longer spool of the same loop, and one long epoch."""
    if not GEN.exists():
        pytest.fail(f"{GEN} is missing: make test-bins")
    tmp = tmp_path_factory.mktemp("long")
    return {
        "small": gen(tmp, "small", "--steps", 10000, "--marks", "--eval", 2),
        "big": gen(tmp, "big", "--steps", 100000, "--marks", "--eval", 2),
        "one-epoch": gen(tmp, "one-epoch", "--steps", 100000, "--epoch-steps", 0),
        "ranks-small": gen(tmp, "ranks-small", "--steps", 2500, "--ranks", 4),
        "ranks-big": gen(tmp, "ranks-big", "--steps", 25000, "--ranks", 4),
    }


def commands(tmp):
    return [["trace"], ["trace", "--format", "json"], ["trace", "--format", "csv"],
            ["trace", "--all", "--name", "step"], ["trace", "--last", "5"],
            ["trace", "--name", "epoch"], ["health"], ["report", "-o", tmp / "r.html"],
            ["trace", "--format", "perfetto", "-o", tmp / "p.json"], ["trace", "--ranks"]]


def test_memory_flat_from_10k_to_100k_steps(spools, tmp_path):
    """Ten times the steps: each read command's peak RSS grows by less than FLAT_KB (it held
    1.1 GiB for 300k steps before, 4 KB a step); a long epoch (a loader that never runs out)
    streams as well; four ranks side by side too."""
    grown = {}
    for args in commands(tmp_path):
        small = max_rss(BIN, *args, spools["small"])
        big = max_rss(BIN, *args, spools["big"])
        one = max_rss(BIN, *args, spools["one-epoch"])
        grown[" ".join(map(str, args[:3]))] = (small, big, one)
    for what, (small, big, one) in grown.items():
        assert big - small < FLAT_KB and one - small < FLAT_KB, (what, grown)
        assert max(big, one) < MAX_RSS_KB, (what, grown)
    small = max_rss(BIN, "trace", "--ranks", spools["ranks-small"])
    big = max_rss(BIN, "trace", "--ranks", spools["ranks-big"])
    assert big - small < FLAT_KB, (small, big)


def read(binary, *args):
    env = san_env() if binary == SAN else None
    rc, out, err = run(binary, *args, env=env)
    if binary == SAN:
        assert_no_sanitizer_report(err)
    assert rc == 0 and err == "", (args, rc, err[-2000:])
    return out


class Merged:
    """A generated spool's one session, merged here (no schema check: the observer's spools
    are checked against it; jsonschema takes a second per MB)."""

    def __init__(self, root):
        batches = []
        for f in sorted((root / "spool").iterdir()):
            if BATCH_NAME.match(f.name):
                batches.append(json.loads(f.read_text()))
        assert len({b["session_id"] for b in batches}) == 1
        self.batches = sorted(batches, key=lambda b: b["seq"])
        self.spans = merge_spans(self.batches)


def check_against_merge(root, binary, s):
    """Every format's answer equals what the spool holds, merged here."""
    spans = s.spans

    rows = list(csv.reader(io.StringIO(read(binary, "trace", "--format", "csv", root))))
    assert len(rows) - 1 == len(spans)
    for r in rows[1:]:
        sp = spans[int(r[1])]
        assert (r[3], r[9], r[8]) == (sp["name"], sp["status"],
                                      "" if sp["end_ns"] is None else str(sp["duration_ns"])), r

    seen = []

    def walk(nodes, parent):
        for n in nodes:
            assert n["parent_id"] == parent, n["span_id"]
            seen.append(n["span_id"])
            walk(n["children"], n["span_id"])
    (session,) = json.loads(read(binary, "trace", "--format", "json", root))
    walk(session["spans"], None)
    assert sorted(seen) == sorted(spans), "every span once, under its parent"

    steps = sorted((x for x in spans.values() if x["name"] == "step"),
                   key=lambda x: (x["start_ns"], x["span_id"]))
    lines = read(binary, "trace", "--name", "step", root).splitlines()
    assert [int(re.match(r"\[cirron\] step\[(\d+)\]", ln).group(1)) for ln in lines] == \
        [x["index"] for x in steps]

    # times through cJSON's doubles, as the reader has them (docs/outputs.md)
    ended = sorted((x for x in spans.values() if x["end_ns"] is not None),
                   key=lambda x: (int(float(x["start_ns"])) + x["duration_ns"], x["span_id"]))
    last = json.loads(read(binary, "trace", "--last", "5", "--format", "json", root))
    assert [x["span_id"] for x in last] == [x["span_id"] for x in ended[-5:]]
    return s


def test_long_spool_read_right(spools, tmp_path):
    """On a 30k-step spool (the sanitizer build): every span in JSON and CSV, --name and
    --last as merged here; the text prints each epoch with its steps summed up, its steps
    elided as before, the epochs past the first 3 and last 2 one line each; health and
    the hang record come from the newest batches; the report draws every step."""
    root = gen(tmp_path, "marks", "--steps", 30000, "--marks", "--eval", 2, "--hang-at", 20500)
    s = check_against_merge(root, SAN, Merged(root))
    spans = s.spans
    epochs = sorted((x for x in spans.values() if x["name"] == "epoch"),
                    key=lambda x: x["start_ns"])
    assert len(epochs) == 30
    text = read(SAN, "trace", root)
    lines = text.splitlines()
    assert lines[1].startswith("hang: ") and " > step[20500] > data_load (usually " in lines[1]
    assert "open path:" not in text
    for i, e in enumerate(epochs):
        head = f"  epoch[{e['index']}] - {fmt(e['duration_ns'])}"
        want = summary(spans, e)
        if 3 <= i < len(epochs) - 2:     # the run's middle: one line each
            assert f"{head}; {want}" in lines, (head, want)
        else:
            at = lines.index(head)
            assert lines[at + 1] == f"    {want}", (lines[at + 1], want)
            assert lines[at + 2].startswith(f"    step[{e['index'] * 1000}] - ")
            assert f"    ... 995 more step spans ..." in lines[at:at + 40]
    assert sum(ln.startswith("  epoch[") for ln in lines) == 30

    out = read(SAN, "health", root)
    assert f"  from batch {s.batches[-1]['seq']} (the newest of {len(s.batches)} batch files)" \
        in out

    page = tmp_path / "r.html"
    read(SAN, "report", root, "-o", page)
    html = page.read_text()
    assert 'data-steps="30000"' in html
    assert "30000 steps drawn as 600 points, each the mean of 50.0 consecutive ones" in html
    assert html.count("<tr><td>epoch[") == 30
    assert re.search(r'<svg class="chart" id="s0-mark0".*?data-name="loss" data-points="600"',
                     html, re.S)


def test_four_ranks_side_by_side(spools):
    """trace --ranks reads four ranks' batches in step: a row per step, rank 2 busier."""
    out = read(SAN, "trace", "--ranks", spools["ranks-small"])
    lines = out.splitlines()
    assert lines[0] == "4 ranks (world size 4), 2500 steps"
    assert len([ln for ln in lines if re.match(r"^ *\d+  ", ln)]) == 2500
    assert re.search(r"^busy \(no wait\) ", out, re.M)


def test_killed_mid_write(tmp_path):
    """An observer killed while it wrote a batch leaves its temporary file and no final batch:
    every command reads what is there; the open path and health come from the newest batch
    written whole."""
    root = gen(tmp_path, "killed", "--steps", 20000, "--kill-at-batch", 20, rc=-signal.SIGKILL)
    tmps = [f for f in (root / "spool").iterdir() if f.name.startswith(".")]
    assert len(tmps) == 1 and tmps[0].name.endswith(".tmp"), tmps
    s = check_against_merge(root, SAN, Merged(root))
    assert not s.batches[-1]["final"]
    text = read(SAN, "trace", root)
    lines = text.splitlines()
    assert lines[0].endswith("no final batch (still running, or the observer died)")
    assert lines[1] == "open path:"
    open_spans = [x for x in s.batches[-1]["spans"] if x["status"] == "open"]
    epoch = next(x for x in open_spans if x["name"] == "epoch")
    assert re.match(r"^  cirron\.session \(open\) since ", lines[2])
    assert re.match(rf"^    epoch\[{epoch['index']}\] \(open\) since ", lines[3])
    out = read(SAN, "health", root)
    assert f"from batch {s.batches[-1]['seq']} " in out
    read(SAN, "report", root, "-o", tmp_path / "r.html")


@pytest.fixture
def torch_ok(bpf):
    if not TORCH_LIB.exists():
        pytest.skip("python3-torch is not installed")


def test_observer_sigkilled_mid_run(h, torch_ok):
    """The real observer, killed by SIGKILL while a fast loop runs under it: the spool it
    leaves reads, the open path from its newest batch (every batch holds every open span)."""
    root = h.spool_root(expect_final=False)
    obs = h.observer("run", "-v", "--", *STEPS, "--forever", "--progress", "2000", path=root)
    pid = int(obs.err.wait_for(r"pid (\d+): session \S+ started").group(1))
    obs.out.wait_for(r"^step 6000 ", timeout=120)
    obs.signal(signal.SIGKILL)
    assert obs.wait() == -signal.SIGKILL
    os.kill(pid, signal.SIGKILL)
    s = check_against_merge(root, SAN, only_session(root, expect_final=False))
    assert all(b.get("all_open") for b in s.batches)
    lines = read(SAN, "trace", root).splitlines()
    assert lines[1] == "open path:" and lines[2].startswith("  cirron.session (open) since ")
    assert re.match(r"^    epoch\[\d+\] \(open\) since ", lines[3]), lines[:6]
