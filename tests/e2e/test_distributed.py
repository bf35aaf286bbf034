# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Distributed jobs: 3 ranks of DistributedDataParallel on gloo (CPU), launched by the real
torchrun (trixie: torch 2.6; the venv: the official torch 2.13 wheel on pyenv's CPython) or by
a launcher that sets the same environment (host: bookworm's
torchrun does not run on Python 3.11). One session per rank, the launcher not a rank,
collectives as collective_wait spans, and the merged view across ranks."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import ROOT, free_port, process_tree, read_spool
from test_torch_tree import HOST_PYTHON, children, check_well_formed, named

DDP = ROOT / "tests" / "workloads" / "ddp_train.py"
LAUNCH = ROOT / "tests" / "workloads" / "launch_ranks.py"
TORCHRUN = ROOT / "tests" / "workloads" / "torchrun_nolibuv.py"
EPOCHS, BATCHES = 2, 4
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(params=["torchrun", "launcher", "venv-torchrun"])
def job(request, bpf):
    """argv of a 3-rank job: (argv prefix before the script's own args, launcher imports torch)"""
    if request.param == "launcher":
        return [HOST_PYTHON, str(LAUNCH), "--nproc", "3", str(DDP)], False
    if request.param == "venv-torchrun":    # --standalone: a free port of its own
        # Issue 13: a rank died at its exit (SIGABRT, std::terminate) in 3 of 10 straggler jobs
        # under the observer of then, 0 of 12 without it. The abort itself is torch 2.13's
        # with CPython 3.11: a gloo worker drops the last C++ reference to a tensor that has a
        # Python object after the interpreter began finalizing; taking the GIL then ends the
        # thread (pthread_exit) inside a noexcept destructor (reproduced with no observer).
        # With no uretprobe on c10d's functions (probes/libtorch.json) it was 0 of 13.
        venv = request.getfixturevalue("venv")
        return [str(venv / "bin" / "torchrun"), "--standalone", "--nproc_per_node", "3",
                str(DDP)], True
    root = request.getfixturevalue("trixie_root")
    return ["chroot", str(root), "python3", "/work/torchrun_nolibuv.py", "--master_port",
            str(free_port()), "--nproc_per_node", "3", "/work/ddp_train.py"], True


def run_job(h, job, *args, observer_args=()):
    root = h.spool_root()
    p = h.observer("run", *observer_args, "--", *job[0], *args, path=root)
    assert p.finish(240) == 0, p.err.text[-3000:]
    return root, read_spool(root)


def ranks_of(sessions):
    ranks = {s.root["attrs"]["rank"]: s for s in sessions.values()
             if s.root["attrs"]["role"] == "rank"}
    assert sorted(ranks) == [0, 1, 2], {s.id: s.root["attrs"]["role"] for s in sessions.values()}
    return ranks


def test_one_session_per_rank(h, job):
    root, sessions = run_job(h, job)
    ranks = ranks_of(sessions)
    launchers = [s for s in sessions.values() if s.root["attrs"]["role"] == "launcher"]
    # the launcher is no rank: torchrun imports torch (a session, role=launcher); the plain
    # launcher maps no known library (no session at all)
    assert len(launchers) == (1 if job[1] else 0), [s.root["attrs"] for s in launchers]
    assert len(sessions) == 3 + len(launchers)
    for r, s in ranks.items():
        a = s.root["attrs"]
        assert (a["local_rank"], a["world_size"]) == (r, 3)
        if launchers:
            assert a["launcher_pid"] == launchers[0].root["attrs"]["pid"]
            assert not named(launchers[0], "step")
        check_well_formed(s)
        steps = named(s, "step")
        assert len(steps) == EPOCHS * BATCHES, [x["index"] for x in steps]
        assert len(named(s, "epoch")) == EPOCHS
        for st in steps:
            (fwd,) = children(s, st, "forward")
            (bwd,) = children(s, st, "backward")
            assert len(children(s, st, "data_load")) == 1
            assert len(children(s, st, "optimizer_step")) == 1
            # DDP waits for its gradient all-reduce at the end of backward
            assert len(children(s, bwd, "collective_wait")) == 1
            if job[1]:  # torch 2.x: DDP names its forward: exact, no Python frames needed
                assert fwd["attrs"]["module"] == "DistributedDataParallel", fwd["attrs"]
                assert "timing" not in fwd["attrs"]


@pytest.mark.parametrize("slow_in", ["data_load", "backward"])
def test_straggler_flagged_with_its_phase(h, job, slow_in):
    """Rank 1 is 30 ms slower a step in data_load, or in backward before its gradients'
    all-reduce (a hook on the loss): the others then wait for it inside their own backward,
    which is as long as rank 1's; left out, rank 1's is the one 30 ms longer."""
    root, _ = run_job(h, job, "--slow-rank", "1", "--slow-ms", "30", "--slow-in", slow_in)
    r = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--ranks", str(root)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"3 ranks (world size 3), {EPOCHS * BATCHES} steps\n"), r.stdout
    m = re.search(r"^straggler: rank (\d+), .* (\S+) takes (\S+) more", r.stdout, re.M)
    assert m and m.group(1) == "1" and m.group(2) == slow_in, r.stdout
    assert m.group(3).endswith("ms") and 20 <= float(m.group(3)[:-2]) <= 60, r.stdout
    rows = {ln.split()[0]: ln.split()[1:] for ln in r.stdout.splitlines()
            if ln.startswith(("data_load ", "collective_wait "))}
    assert len(rows["data_load"]) == 3, r.stdout
    # the others wait for rank 1 in the all-reduce; rank 1 hardly waits


def test_no_straggler_when_even(h, job):
    """No rank is slowed: none is named. Two ranks, one per core of this 2-core machine: with
    three, one rank waits for a core in most steps, the others wait for it in the
    all-reduce, and it is named, rightly, as the one behind (seen in 2 of 3 suite runs)."""
    argv = [("2" if prev in ("--nproc", "--nproc_per_node") else a)
            for prev, a in zip([None, *job[0]], job[0])]
    root, _ = run_job(h, (argv, job[1]), "--batches", "20")
    r = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--ranks", str(root)],
                       capture_output=True, text=True, timeout=60)
    assert re.search(r"^straggler: none", r.stdout, re.M), r.stdout


def test_attach_to_the_launcher(h, job):
    """`attach -p LAUNCHER` finds the ranks under it and traces each, mid-run."""
    t = h.start([*job[0], "--seconds", "8"])
    for _ in range(3):
        t.out.wait_for(r"^ready rank=\d$", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-v", "-p", t.pid, path=root)
    assert t.finish(240) == 0
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    sessions = read_spool(root)
    ranks = ranks_of(sessions)
    for s in ranks.values():
        assert s.root["attrs"]["attached_mid_run"] is True
        assert s.root["attrs"]["index_origin"] == "attach"
        assert len(named(s, "step")) >= 3
    roles = sorted(s.root["attrs"]["role"] for s in sessions.values())
    assert roles == (["launcher"] if job[1] else []) + ["rank"] * 3


def test_hang_across_ranks_names_the_rank_behind(h, job):
    """Rank 2 stops after its step 3; ranks 0 and 1 then wait for it in the next step's
    all-reduce. The spool (the observer detached, the job killed) tells who is behind."""
    root = h.spool_root()
    p = h.observer("run", "--", *job[0], "--stall-rank", "2", "--stall-step", "3",
                   "--stall-seconds", "120", path=root)
    p.out.wait_for(r"^stalling rank=2$", timeout=120)

    def ranks_waiting():
        r = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--ranks", str(root)],
                           capture_output=True, text=True, timeout=60)
        return sorted(w[0] for w in re.findall(
            r"^  rank (\d): step\[\d+\] > collective_wait$", r.stdout, re.M)) == ["0", "1"]
    deadline = time.monotonic() + 120     # the spool, flushed every second, shows them wait
    while not ranks_waiting():
        assert time.monotonic() < deadline, "ranks 0 and 1 never seen waiting in the spool"
        time.sleep(0.2)
    job_pids = process_tree(p.pid)     # this test's (other tests may run DDP jobs too)
    p.signal(signal.SIGINT)
    p.wait(60)
    for pid in job_pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    r = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--ranks", str(root)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "open now:" in r.stdout, r.stdout
    waiting = re.findall(r"^  rank (\d): step\[(\d+)\] > collective_wait$", r.stdout, re.M)
    assert sorted(w[0] for w in waiting) == ["0", "1"], r.stdout
    assert re.search(r"^behind: rank 2 ", r.stdout, re.M), r.stdout
