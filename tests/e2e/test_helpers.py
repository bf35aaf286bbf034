# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A job's helper processes are its helpers, not jobs (tests/workloads/helpers.py under `run`):
DataLoader workers that a spawn or forkserver context starts with a new interpreter, and a
tool the job runs (a CUDA client, as transformers runs nvidia-smi) are sessions with
role=helper and helper_of the job's pid; `trace` and `report` show one job, its helpers
listed under it with their kind, lifetime and CPU."""
import re
import subprocess

import pytest

from conftest import BIN, CUDA_CALLS, ROOT, read_spool

HELPERS = ROOT / "tests" / "workloads" / "helpers.py"


@pytest.fixture(params=["host-spawn", "venv-forkserver"])
def stack(request, bpf):
    where, context = request.param.split("-")
    if where == "host":
        return "/usr/bin/python3", context
    return str(request.getfixturevalue("venv") / "bin" / "python"), context


@pytest.mark.timeout(240)
def test_helpers_under_their_job(h, stack):
    python, context = stack
    root = h.spool_root()
    obs = h.observer("run", "--output", "spool", "--", python, HELPERS, "--context", context,
                     "--workers", "2", "--epochs", "2", "--tool", CUDA_CALLS, path=root)
    assert obs.finish(200) == 0, obs.err.text[-3000:]
    assert "DONE steps=12" in obs.out.text
    sessions = read_spool(root)
    jobs = [s for s in sessions.values() if s.root["attrs"]["role"] != "helper"]
    assert len(jobs) == 1, {s.id: s.root["attrs"]["role"] for s in sessions.values()}
    job = jobs[0]
    assert len([x for x in job.spans.values() if x["name"] == "step"]) == 12
    helpers = [s for s in sessions.values() if s is not job]
    kinds = sorted(s.root["attrs"]["helper"] for s in helpers)
    for s in helpers:
        a = s.root["attrs"]
        assert (a["role"], a["helper_of"]) == ("helper", job.root["attrs"]["pid"]), a
        assert not [x for x in s.spans.values() if x["name"] in ("epoch", "step")], s.id
    assert kinds.count("tool") == 1, kinds
    (tool,) = [s for s in helpers if s.root["attrs"]["helper"] == "tool"]
    assert tool.root["attrs"]["comm"] == "cuda_calls" and tool.root["attrs"]["cuda.launches"] == 57
    if context == "spawn":      # two workers an epoch, each a new interpreter loading torch
        assert kinds.count("multiprocessing") == 4, kinds
    else:                       # workers forked by the forkserver, which is the helper here
        assert set(kinds) <= {"tool", "multiprocessing"}, kinds

    out = subprocess.run([str(BIN), "trace", str(root)], capture_output=True, text=True,
                         timeout=60).stdout
    assert len(re.findall(r"^session ", out, re.M)) == 1, out[:3000]
    m = re.search(r"^helpers: (\d+) \(([^)]*)\), pids", out, re.M)
    assert m and int(m.group(1)) == len(helpers), out[:3000]
    assert "tool 1" in m.group(2) or m.group(2) == "tool", m.group(0)
    lines = re.findall(r"^  helper pid (\d+) (\w+) \((.+)\): lived ", out, re.M)
    assert sorted(int(p) for p, _, _ in lines) == sorted(s.root["attrs"]["pid"] for s in helpers), \
        out[:3000]
    html = h.tmp / "report.html"
    r = subprocess.run([str(BIN), "report", "--path", str(root), "-o", str(html)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert page.count('<section class="session"') == 1
    assert 'class="helpers"' in page and f"helpers: {len(helpers)} (" in page


@pytest.mark.timeout(240)
def test_spawned_ranks_that_train_are_jobs(h, bpf):
    """torch.multiprocessing.spawn's processes start as multiprocessing workers would, but
    they train: each is a job of its own once it steps, not a helper of the script."""
    root = h.spool_root()
    obs = h.observer("run", "--output", "spool", "--", "/usr/bin/python3", HELPERS,
                     "--spawn-ranks", "2", "--epochs", "2", "--batches", "6", path=root)
    assert obs.finish(200) == 0, obs.err.text[-3000:]
    trainers = [s for s in read_spool(root).values()
                if [x for x in s.spans.values() if x["name"] == "step"]]
    assert len(trainers) == 2
    for s in trainers:
        a = s.root["attrs"]
        assert a["role"] == "process" and "helper_of" not in a and "helper" not in a, a
        assert len([x for x in s.spans.values() if x["name"] == "step"]) == 12
