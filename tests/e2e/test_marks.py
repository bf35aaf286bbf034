# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Marks from what a traced job prints (tests/workloads/prints.py): HF Trainer-style dicts,
Keras-style progress lines, plain prints and tqdm redraws on stdout and stderr, checked value
by value on the spans open when they were printed, on the host and trixie targets; a job that
prints megabytes of text and binary data, its output byte for byte what it wrote, every
metric line a mark but those health accounts for; --marks off and --marks-regex."""
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, only_session, unavailable
from test_torch_tree import (HOST_PYTHON, HOST_PYTHON_MINOR, HOST_TORCH_MAJOR, Target,
                             check_well_formed, named)

PRINTS = ROOT / "tests" / "workloads" / "prints.py"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=["host", "trixie"])
def target(request, bpf):
    if request.param == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return Target("host", [HOST_PYTHON, str(PRINTS)], HOST_TORCH_MAJOR, HOST_PYTHON_MINOR)
    root = request.getfixturevalue("trixie_root")
    return Target("trixie", ["chroot", str(root), "python3", "/work/prints.py"], 2, 13)


def expect_path(h, target):
    """Where the workload writes what it printed: (its path as it sees it, ours)."""
    if target.name == "host":
        p = h.tmp / "expected.json"
        return str(p), p
    name = f"expected-{h.tmp.name}.json"
    return f"/work/{name}", Path(target.argv[1]) / "work" / name


def run(h, target, *args, observer_args=()):
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", *observer_args, "--", *target.argv, *args,
                   path=root)
    rc = p.finish(180)
    assert rc == 0, f"run exited {rc}:\n{p.err.text}"
    assert "DONE" in p.out.text
    return only_session(root), p


def printed_marks(s, span):
    return sorted((m["name"], m["value"], m["kind"], m["source"])
                  for m in span["marks"] if "value" in m)


def test_printed_metrics_become_marks(h, target):
    theirs, ours = expect_path(h, target)
    s, p = run(h, target, "--epochs", "2", "--batches", "3", "--expect", theirs)
    check_well_formed(s)
    expected = json.loads(ours.read_text())
    ours.unlink()
    steps = {st["index"]: st for st in named(s, "step")}
    epochs = {e["index"]: e for e in named(s, "epoch")}
    assert len(steps) == 6 and len(epochs) == 2
    want = {}
    for name, text, kind, source, (where, index) in expected:
        span = (steps if where == "step" else epochs)[index]
        want.setdefault(span["span_id"], []).append((name, float(text), kind, source))
    for sp in s.spans.values():
        got = printed_marks(s, sp)
        assert got == sorted(want.get(sp["span_id"], [])), f"{sp['name']}[{sp['index']}]"
        for m in sp["marks"]:
            assert sp["start_ns"] <= m["ts_ns"] <= sp["end_ns"], (sp["name"], m)
    # the job's output reached its streams as it wrote it
    assert "{'loss': " in p.out.text and "val_metric=0.8]" in p.err.text
    h_ = s.health
    assert h_["write_drops"] == 0 and h_["writes"] >= 6 * 3 + 2 * 3
    assert h_["marks"] == len(expected)


def test_block_buffered_stdout(h, bpf, tmp_path):
    """stdout to a pipe, never flushed by the job: written in 8 KiB blocks (the copy bound),
    lines cut between blocks; every value still arrives, on the spans open at the flushes."""
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    expect = tmp_path / "expected.json"
    host = Target("host", [HOST_PYTHON, str(PRINTS)], HOST_TORCH_MAJOR, HOST_PYTHON_MINOR)
    s, _ = run(h, host, "--epochs", "3", "--batches", "40", "--no-flush", "--expect", str(expect))
    want = Counter((n, float(v), src) for n, v, _, src, _ in json.loads(expect.read_text()))
    got = Counter((m["name"], m["value"], m["source"])
                  for sp in s.spans.values() for m in sp["marks"] if "value" in m)
    assert got == want
    assert s.health["writes_over_bound"] == 0 and s.health["mark_lines_skipped"] == 0


def test_megabytes_of_text_and_binary(h, bpf, tmp_path):
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    expect, out = tmp_path / "flood.json", tmp_path / "flood.out"
    # torch imported, so that the process gets a session; stdout to a file, to compare
    script = (f"import torch, runpy, sys; sys.argv = ['prints.py', '--flood', '3', "
              f"'--expect', '{expect}']; runpy.run_path('{PRINTS}', run_name='__main__')")
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--", "/bin/sh", "-c",
                   f"exec {HOST_PYTHON} -c \"{script}\" > {out}", path=root)
    assert p.finish(180) == 0, p.err.text
    s = only_session(root)
    e = json.loads(expect.read_text())
    data = out.read_bytes()
    assert data.endswith(b"DONE\n") and len(data) == e["bytes"] + len(b"DONE\n")
    assert hashlib.sha256(data[:e["bytes"]]).hexdigest() == e["sha256"], "output changed"
    marks = [m for sp in s.spans.values() for m in sp["marks"] if "value" in m]
    dropped = sum(sp["attrs"].get("marks_dropped", 0) for sp in s.spans.values())
    assert Counter(m["name"] for m in marks) == Counter({"flood_metric": len(marks)})
    hl = s.health
    assert hl["writes_over_bound"] >= e["big_writes"]
    got = len(marks) + dropped
    # every metric line is a mark, but the one right after a write over the copy bound (its
    # unseen tail may cut a line) and those whose write event the ring buffer dropped
    assert got <= e["lines"] - e["lines_after_big"]
    assert got >= e["lines"] - e["lines_after_big"] - hl["write_drops"], hl
    assert hl["marks"] == got


def test_marks_off_and_regex(h, target):
    s, _ = run(h, target, "--epochs", "1", "--batches", "2", observer_args=("--marks", "off"))
    assert not [m for sp in s.spans.values() for m in sp["marks"]]
    assert "writes" not in s.health
    s, _ = run(h, target, "--epochs", "1", "--batches", "2",
               observer_args=("--marks-regex", r"^(?<batch>[0-9]+)/[0-9]+ \["))
    batch = sorted(m["value"] for sp in s.spans.values() for m in sp["marks"]
                   if m.get("name") == "batch")
    assert batch == [1, 2]
