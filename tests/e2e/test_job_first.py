# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The job comes first (issue 24): observing a job never stops it or breaks its system calls.

A training job with side threads blocked in epoll_wait, recv with SO_RCVTIMEO, semtimedop and
sigtimedwait (through ctypes, so that no EINTR retry hides anything: a stop and SIGCONT end
each of them in EINTR, signal(7)) is traced three ways: attached mid-run, watched from its
start, and run. Each time: zero EINTR in the job, zero stop or continue signals delivered to
its threads (counted by the test's own BPF program, tests/targets/sigcount.c, on the kernel's
signal_generate tracepoint), and every backward span exact from the first one the observer
saw (exits of Engine::execute are probed on its own exit instructions, no hold needed). `run`
may hold its command at exec and at a library load while it has one thread: no thread is then
blocked in a call, and health counts those signals. The workload is
tests/workloads/side_threads.py."""
import collections
import json
import os
import shutil
import signal
import time

import pytest

from conftest import ROOT, TIME_SCALE, free_port, read_spool
from test_torch_tree import HOST_PYTHON, named

SIDE = ROOT / "tests" / "workloads" / "side_threads.py"
DDP = ROOT / "tests" / "workloads" / "ddp_train.py"
LAUNCH = ROOT / "tests" / "workloads" / "launch_ranks.py"
SIGCOUNT = ROOT / ".output" / "tests" / "sigcount"
STEPS_SEEN = 5          # steps the observer must have seen before it detaches


@pytest.fixture(params=["host", "trixie", "venv"])
def stack(request, bpf, tmp_path):
    """(argv prefix, script as named there, a file the job stops at, as named here and there)"""
    name = f"side_threads_{os.getpid()}_{request.param}.py"  # its own name: watch --match
    if request.param == "trixie":
        root = request.getfixturevalue("trixie_root")
        shutil.copy(SIDE, root / "work" / name)
        stop = root / "work" / f"stop_{os.getpid()}"
        stop.unlink(missing_ok=True)
        return ["chroot", str(root), "python3"], f"/work/{name}", stop, f"/work/{stop.name}"
    script = tmp_path / name
    shutil.copy(SIDE, script)
    stop = tmp_path / "stop"
    python = HOST_PYTHON if request.param == "host" else \
        str(request.getfixturevalue("venv") / "bin" / "python")
    return [python], str(script), stop, str(stop)


class Witness:
    """The test's own count of stop and continue signals sent to its descendants."""

    def __init__(self, h):
        assert SIGCOUNT.exists(), f"{SIGCOUNT} is built by make test-e2e"
        self.p = h.start([SIGCOUNT, str(os.getpid())])
        self.p.out.wait_for(r"^ready$")

    def counts(self):
        self.p.signal(signal.SIGINT)
        assert self.p.finish() == 0, self.p.err.text
        return {k: int(v) for k, v in (line.split() for line in self.p.out.lines[1:])}


def job_result(job):
    assert job.finish(120 * TIME_SCALE) == 0, job.err.text[-3000:]
    result = json.loads(job.out.lines[-1])
    assert not any(result["other_errors"].values()), result
    assert all(result["calls"][k] > 0 for k in result["calls"]), result
    return result


def steps_in_spool(root):
    n = 0
    for f in (root / "spool").glob("*.json"):
        try:
            n += sum(1 for s in json.loads(f.read_text()).get("spans", [])
                     if s["name"] == "step")
        except (ValueError, OSError):
            pass            # being renamed into place: read next time
    return n


def wait_steps(root, obs, n=STEPS_SEEN):
    """Waits until the spool holds n closed steps (batches every 0.2 s)."""
    deadline = time.monotonic() + 60 * TIME_SCALE
    while steps_in_spool(root) < n:
        assert obs.alive(), obs.err.text[-3000:]
        assert time.monotonic() < deadline, f"fewer than {n} steps in the spool"
        time.sleep(0.1)


def check_backwards(s, all_steps=None, mid_run=False, detached=False):
    """Every backward the observer saw closed with its exit (none open, none incomplete), one
    in each closed step; all_steps: the job's count, when it was seen from its start. mid_run:
    the first step may have begun before the probes were in, after its backward began: it has
    none then. detached: the observer left while the job trained, at a moment of its own: a
    backward under way then is the last one and `open`, and the probes, still in while the
    loader reads its last events, may count the exit of one more (its events come after the
    last read)."""
    backwards = named(s, "backward")
    steps = [x for x in named(s, "step") if x["status"] == "ok"]
    assert backwards and steps, (sorted({x["name"] for x in s.spans.values()}), s.root["attrs"],
                                 s.health)
    backwards.sort(key=lambda b: b["start_ns"])
    if detached and backwards[-1]["status"] == "open":
        backwards.pop()
    assert [b for b in backwards if b["status"] != "ok"] == [], \
        [(b["status"], b.get("attrs")) for b in backwards if b["status"] != "ok"]
    by_step = collections.Counter(b["parent_id"] for b in backwards)  # not a scan per step
    per_step = [by_step[st["span_id"]] for st in steps]
    if mid_run and per_step[0] == 0:
        per_step = per_step[1:]
    assert per_step and set(per_step) == {1}, per_step
    if all_steps is not None:
        assert len(backwards) == all_steps, (len(backwards), all_steps)
    probes = {p["symbol"]: p for p in s.health["probes"]}
    execute = next(p for k, p in probes.items() if "Engine7execute" in k)
    extra = execute["return_hits"] - len(backwards)
    assert extra == 0 or (detached and extra == 1), (execute, len(backwards))


def health_signals(s):
    return s.health["signals_sent"]


def test_attach_mid_run_sends_nothing(h, stack):
    argv, script, stop, stop_there = stack
    witness = Witness(h)
    job = h.start([*argv, script, "--until-file", stop_there])
    job.out.wait_for(r"^READY ", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-v", "-p", job.pid, "--flush-interval", "0.2", path=root)
    obs.err.wait_for(rf"pid {job.pid}: session \S+ started", timeout=120)
    wait_steps(root, obs)
    obs.signal(signal.SIGINT)
    assert obs.finish(60) == 0, obs.err.text[-3000:]
    stop.touch()
    result = job_result(job)
    assert witness.counts() == {"total": 0}
    assert result["eintr"] == dict.fromkeys(result["eintr"], 0), result
    s = next(iter(read_spool(root).values()))
    assert s.root["attrs"]["attached_mid_run"] is True
    check_backwards(s, mid_run=True, detached=True)
    assert health_signals(s) == 0


def test_watch_from_its_start_sends_nothing(h, stack):
    """The agent finds the job as it loads torch and traces it from then on; the job trains
    until the test has seen steps in the spool (a cold symbol cache can take seconds)."""
    argv, script, stop, stop_there = stack
    witness = Witness(h)
    root = h.spool_root()
    obs = h.observer("watch", "-v", "--match", os.path.basename(script), "--flush-interval",
                     "0.2", path=root)
    obs.err.wait_for(r"watching the processes that", timeout=60)
    job = h.start([*argv, script, "--until-file", stop_there])
    wait_steps(root, obs)
    stop.touch()
    result = job_result(job)
    obs.err.wait_for(rf"pid {job.pid}: session \S+ ended", timeout=60)
    obs.signal(signal.SIGTERM)
    assert obs.finish(60) == 0, obs.err.text[-3000:]
    assert witness.counts() == {"total": 0}
    assert result["eintr"] == dict.fromkeys(result["eintr"], 0), result
    sessions = [s for s in read_spool(root).values() if s.root["attrs"]["pid"] == job.pid]
    assert len(sessions) == 1, [s.root["attrs"] for s in read_spool(root).values()]
    check_backwards(sessions[0], mid_run=True)	# its probes may come in after training began
    assert health_signals(sessions[0]) == 0


def test_run_holds_only_while_single_threaded(h, stack):
    """run holds its command at exec and at library loads only while it has one thread: the
    side threads start after `import torch`, so no call of theirs is interrupted."""
    argv, script, _, _ = stack
    witness = Witness(h)
    root = h.spool_root()
    obs = h.observer("run", "--", *argv, script, "--seconds", str(3 * TIME_SCALE), path=root)
    assert obs.finish(180) == 0, obs.err.text[-3000:]
    counts = witness.counts()
    result = json.loads(obs.out.lines[-1])
    assert result["eintr"] == dict.fromkeys(result["eintr"], 0), result
    sessions = [s for s in read_spool(root).values() if s.root["attrs"].get("framework")]
    assert len(sessions) == 1
    s = sessions[0]
    check_backwards(s, all_steps=result["steps"])
    # what the job was sent is what health says the observer sent it: holds and resumes
    sent = counts.get("STOP", 0) + counts.get("CONT", 0)
    assert counts.get("total") == sent and sent > 0, counts
    assert sum(x.health["signals_sent"] for x in read_spool(root).values()) == sent, counts


@pytest.mark.timeout(300)
def test_ddp_with_short_timeout_survives_five_attaches(h, bpf):
    """A 2-rank gloo DDP job with a 5 s collective timeout, attached mid-run 5 times in a row:
    no rank fails (a stopped rank, or a gloo call ended in EINTR, could fail it)."""
    stop = h.tmp / "stop"
    job = h.start([HOST_PYTHON, LAUNCH, "--nproc", "2", "--port", str(free_port()), DDP,
                   "--timeout-s", "5", "--until-file", stop])
    ranks = [int(m.group(1)) for m in job.out.wait_count(r"^ready rank=\d+ pid=(\d+)$", 2,
                                                         timeout=120 * TIME_SCALE)]
    for i in range(5):
        root = h.spool_root()
        obs = h.observer("attach", "-v", "-p", job.pid, "--flush-interval", "0.2", path=root)
        for pid in ranks:
            obs.err.wait_for(rf"pid {pid}: session \S+ started", timeout=120)
        wait_steps(root, obs, n=2 * 2)
        obs.signal(signal.SIGINT)
        assert obs.finish(60) == 0, obs.err.text[-3000:]
        assert job.alive(), f"attach {i + 1}: {job.err.text[-3000:]}"
        for s in read_spool(root).values():
            assert s.health["signals_sent"] == 0
    stop.touch()
    assert job.finish(120) == 0, job.err.text[-3000:]
