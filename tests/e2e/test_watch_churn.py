# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The node agent under churn (issue 15): a pid reused by a new job while the agent was not
looking, a job that forks DataLoader workers and then execs another training script, and
workers that were there before the agent."""
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from conftest import CUDA_CALLS, ROOT, read_spool
from cuda_expect import N_LAUNCH, N_MEMCPY, N_SYNC
from test_torch_tree import HOST_PYTHON, TRAIN, check_well_formed, named
from test_watch import crowd, host_torch, jobs, start_watch, stop_watch  # noqa: F401

WITH_PID = ROOT / ".output" / "tests" / "with_pid"


def test_pid_reused_while_the_agent_was_stopped(h, bpf, tmp_path):
    """A traced job exits while the agent is stopped and its control ring overflows (the
    exit event is lost), and a new job starts with the very same pid (clone3 set_tid: what
    a pid wraparound does, without 32768 process starts). The agent must see two processes:
    the first session ended by that exit, the second a session of its own, no counts mixed."""
    job_bin = tmp_path / f"churn_{os.getpid()}"     # its own name: --match picks only it
    shutil.copy(CUDA_CALLS, job_bin)
    root = h.spool_root()
    env = dict(os.environ, CIRRON_TEST_CONTROL_RING_KB="4")
    w = h.observer("watch", "-v", "--match", re.escape(job_bin.name), "--cuda-calls", "always",
                   path=root, env=env)
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    # three passes of calls (--threads 2 --waves 1): totals unlike the second job's one pass
    first = h.start([job_bin, "--wait", "--hold", "--threads", "2", "--waves", "1",
                     "--exit", "3"])
    first.out.wait_for(r"^ready$")
    w.err.wait_for(rf"pid {first.pid}: session (\S+) started")
    first.signal(signal.SIGUSR1)
    first.out.wait_for(r"^done ")
    pid = first.pid
    w.signal(signal.SIGSTOP)
    try:
        crowd(40)           # fills the one-page control ring: what comes next is lost
        first.signal(signal.SIGUSR1)
        assert first.finish() == 3
        second = h.start([WITH_PID, pid, job_bin, "--wait"])
        second.out.wait_for(r"^ready$")
    finally:
        w.signal(signal.SIGCONT)
    w.err.wait_for(r"control events lost \(ring full\)")
    ended = w.err.wait_for(rf"pid {pid}: session (\S+) ended \(exit\)")
    started = w.err.wait_count(rf"pid {pid}: session (\S+) started", 2)
    assert started[0].group(1) == ended.group(1) != started[1].group(1), w.err.text
    os.kill(pid, signal.SIGUSR1)
    assert second.finish() == 0, second.err.text
    w.err.wait_count(rf"pid {pid}: session \S+ ended \(exit\)", 2)
    m = stop_watch(w)
    assert m and int(m.group(1)) == 2, w.err.text[-3000:]
    sessions = read_spool(root)
    assert sorted(sessions) == sorted([ended.group(1), started[1].group(1)]), list(sessions)
    old, new = sessions[ended.group(1)].root["attrs"], sessions[started[1].group(1)].root["attrs"]
    assert old["pid"] == new["pid"] == pid
    # its exit event was lost: the status comes from what BPF kept of it
    assert (old["end_cause"], old["exit_code"]) == ("exit", 3), old
    assert (new["end_cause"], new["exit_code"], new["attached_mid_run"]) == ("exit", 0, True)
    # exact counts (kept in BPF maps, per pid): three passes, then one; nothing carried over
    # (the device count comes as a control event, which the small ring may lose: not checked)
    for a, passes in ((old, 3), (new, 1)):
        assert (a["cuda.launches"], a["cuda.memcpy_calls"], a["cuda.sync_calls"]) == \
            (passes * N_LAUNCH, passes * N_MEMCPY, passes * N_SYNC), a


def test_dataloader_workers_then_exec(h, host_torch, jobs):  # noqa: F811
    """A job whose DataLoader forks 2 workers each epoch, then execs another training script
    (a new image, same pid): one session per image, each traced and ended by what ended it.
    The workers are forks without exec that share their parent's image: no sessions of their
    own (one session per training process, as under `run`: test_run_children)."""
    d, match = jobs
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    then = f"{d / TRAIN.name} --epochs 1 --batches 3 --until-file {d / 'stop2'}"
    job = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--workers", "2",
                   "--until-file", d / "stop1", "--then-exec", then])
    first = w.err.wait_for(rf"pid {job.pid}: session (\S+) started", timeout=120).group(1)
    (d / "stop1").touch()
    w.err.wait_for(rf"pid {job.pid}: session {re.escape(first)} ended \(exec\)", timeout=120)
    started = w.err.wait_count(rf"pid {job.pid}: session (\S+) started", 2, timeout=120)
    second = started[1].group(1)
    (d / "stop2").touch()
    assert job.finish(120) == 0, job.err.text[-2000:]
    w.err.wait_for(rf"pid {job.pid}: session {re.escape(second)} ended \(exit\)")
    m = stop_watch(w)
    assert m and int(m.group(1)) == 2, w.err.text[-3000:]
    sessions = read_spool(root)
    assert first != second and sorted(sessions) == sorted([first, second]), w.err.text[-3000:]
    a1, a2 = sessions[first].root["attrs"], sessions[second].root["attrs"]
    assert a1["pid"] == a2["pid"] == job.pid
    assert a1["end_cause"] == "exec" and (a2["end_cause"], a2["exit_code"]) == ("exit", 0)
    for s in sessions.values():
        check_well_formed(s)
        assert len(named(s, "step")) >= 1
    # the first image's workers fed it batches: its steps have data_load spans
    assert named(sessions[first], "data_load")


def highest_free_pid():
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    return next(p for p in range(pid_max - 1, 300, -1) if not Path(f"/proc/{p}").exists())


@pytest.mark.parametrize("pids", ["ascending", "wrapped"])
def test_workers_running_before_the_agent_are_no_jobs(h, host_torch, jobs, pids):  # noqa: F811
    """A job with 2 persistent DataLoader workers, running before the agent starts: its first
    look at /proc finds 3 processes that map torch with the job's command line. The parent
    is the job; its forks (no exec) are part of it, not sessions. `wrapped`: the job has the
    highest pid and its workers lower ones, as after a pid wraparound (/proc lists them
    first)."""
    d, match = jobs
    argv = [HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--workers", "2",
            "--persistent-workers", "--until-file", d / "stop"]
    pid = highest_free_pid() if pids == "wrapped" else None
    job = h.start([WITH_PID, pid, *argv] if pid else argv)
    job.out.wait_for(r"^ready$", timeout=120)
    pid = pid or job.pid
    workers = [int(p) for p in (Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]
    assert len(workers) == 2, workers
    assert pids == "ascending" or max(workers) < pid, workers
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    w.err.wait_for(rf"pid {pid}: session \S+ started")
    (d / "stop").touch()
    assert job.finish(120) == 0, job.err.text[-2000:]
    w.err.wait_for(rf"pid {pid}: session \S+ ended \(exit\)")
    m = stop_watch(w)
    assert m and int(m.group(1)) == 1, w.err.text[-3000:]
    (s,) = read_spool(root).values()
    assert s.root["attrs"]["pid"] == pid
    assert len(named(s, "step")) >= 1
