# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A job that catches a C++ exception leaving a probed function lives on under the observer
(issue 13). A uretprobe replaces the function's return address with one that has no unwind
info, so the exception found no handler above it and std::terminate ended the job: an error
raised in backward (torch::autograd::Engine::execute), a collective's timeout (c10d::Work::wait).
The workload is tests/workloads/raise_through.py."""

import pytest

from conftest import ROOT, free_port, only_session
from test_torch_tree import HOST_PYTHON, named

RAISE = ROOT / "tests" / "workloads" / "raise_through.py"
TIMES = 3


@pytest.fixture(params=["host", "trixie", "venv"])
def python(request, bpf):
    """argv prefix that runs a script (as it is named in that root) with that stack's torch,
    and how to name RAISE there"""
    if request.param == "host":
        return [HOST_PYTHON], str(RAISE)
    if request.param == "venv":
        return [str(request.getfixturevalue("venv") / "bin" / "python")], str(RAISE)
    root = request.getfixturevalue("trixie_root")
    return ["chroot", str(root), "python3"], f"/work/{RAISE.name}"


def test_error_raised_in_backward_is_caught(h, python):
    argv, script = python
    root = h.spool_root()
    p = h.observer("run", "--", *argv, script, "backward", "--times", str(TIMES), path=root)
    assert p.finish(180) == 0, p.err.text[-3000:]
    assert f"caught {TIMES}" in p.out.text and "DONE" in p.out.text, p.out.text
    s = only_session(root)
    assert s.root["attrs"]["end_cause"] == "exit", s.root["attrs"]
    # every backward began a span: the three the error left, and the good one
    assert len(named(s, "backward")) == TIMES + 1, [b["status"] for b in named(s, "backward")]


@pytest.mark.parametrize("python", ["trixie", "venv"], indirect=True)  # 1.13: no use_libuv
def test_collective_timeout_is_caught(h, python):
    argv, script = python
    port = str(free_port())
    other = h.start([*argv, script, "collective", "--rank", "1", "--port", port])
    root = h.spool_root()
    p = h.observer("run", "--", *argv, script, "collective", "--rank", "0", "--port", port,
                   path=root)
    assert p.finish(180) == 0, p.err.text[-3000:]
    assert "caught 1" in p.out.text and "DONE" in p.out.text, p.out.text
    assert other.finish(120) == 0, other.err.text[-3000:]
    s = only_session(root)
    assert s.root["attrs"]["end_cause"] == "exit", s.root["attrs"]
    # the all-reduce's wait began a collective_wait span; the timeout left it
    assert named(s, "collective_wait"), sorted({x["name"] for x in s.spans.values()})
