# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Signals and exits on either side: the observer interrupted or killed, the target killed
or exiting with an error. The target must never be harmed; the spool must say what
happened."""
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import (CUDA_CALLS, TIME_SCALE, assert_no_sanitizer_report, only_session,
                      proc_state, read_spool, reap, sig_ignored_mask, unavailable)
from cuda_expect import check_cuda_attrs, check_health, check_root, device_count_from


def target_pid_from_log(obs):
    """`run -v` logs 'pid N: session ID started' once the command's probes are in."""
    return int(obs.err.wait_for(r"pid (\d+): session \S+ started").group(1))


def assert_running_normally(pid):
    state = proc_state(pid)
    assert state in ("R", "S"), f"target {pid} is in state {state!r} (T: left stopped)"


# ---- the observer gets SIGINT ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["run-loop", "attach-hold"])
def test_observer_sigint_detaches(h, bpf, subreaper, mode):
    root = h.spool_root()
    if mode == "run-loop":
        # The command keeps launching kernels while the observer detaches.
        obs = h.observer("run", "--cuda-calls", "always", "-v", "--output", "spool,stdout", "--", CUDA_CALLS, "--loop",
                         san=True, path=root)
        pid = target_pid_from_log(obs)
        h.orphans.append(pid)
        out = obs.out               # the command shares the observer's stdout
    else:
        t = h.start([CUDA_CALLS, "--wait", "--hold"])
        t.out.wait_for(r"^ready$")
        pid, out = t.pid, t.out
        obs = h.observer("attach", "--cuda-calls", "always", "-v", "-p", pid, "--output", "spool,stdout", san=True,
                         path=root)
        obs.err.wait_for(rf"attached \d+ probes to process {pid}$")
        t.signal(signal.SIGUSR1)
    out.wait_for(r"^done device_count=")

    obs.signal(signal.SIGINT)
    assert obs.wait() == 0, obs.err.text
    # The target did not notice: it still runs, answers SIGUSR1, and exits 0 as usual.
    assert_running_normally(pid)
    os.kill(pid, signal.SIGUSR1)
    if mode == "run-loop":
        assert int(out.wait_for(r"^looped (\d+)$").group(1)) > 0
        status = reap(pid)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    else:
        assert t.finish() == 0
    obs.finish()        # under `run` the command held the observer's pipes until now
    assert_no_sanitizer_report(obs.err.text)
    assert "warning" not in obs.err.text, obs.err.text

    s = only_session(root)
    a = check_root(s, pid=pid, status="open", end_cause="detach",
                   attached_mid_run=mode == "attach-hold")
    assert "exit_code" not in a and "exit_signal" not in a
    check_cuda_attrs(a, device_count_from(out.text), extra_launches_a=mode == "run-loop")
    check_health(s, extra_launches=mode == "run-loop")
    # The stdout sink still reports the session, as open, with no duration.
    lines = [l for l in obs.out.lines if l.startswith("[cirron] cirron.session - ")]
    assert len(lines) == 1 and lines[0].startswith("[cirron] cirron.session - ? (open)"), lines


# ---- the target is killed or fails ----------------------------------------------------------

@pytest.mark.parametrize("mode", ["run", "attach"])
def test_target_sigkill(h, bpf, mode):
    root = h.spool_root()
    if mode == "run":
        obs = h.observer("run", "--cuda-calls", "always", "-v", "--", CUDA_CALLS, "--hold", path=root)
        pid = target_pid_from_log(obs)
        out = obs.out
    else:
        t = h.start([CUDA_CALLS, "--wait", "--hold"])
        t.out.wait_for(r"^ready$")
        pid, out = t.pid, t.out
        obs = h.observer("attach", "--cuda-calls", "always", "-v", "-p", pid, path=root)
        obs.err.wait_for(rf"attached \d+ probes to process {pid}$")
        t.signal(signal.SIGUSR1)
    out.wait_for(r"^done device_count=")

    killed_ns = time.time_ns()
    os.kill(pid, signal.SIGKILL)
    if mode == "attach":
        assert t.finish() == -signal.SIGKILL
    # The observer ends by itself; `run` reports the command's death as 128 + signal.
    assert obs.finish() == (128 + signal.SIGKILL if mode == "run" else 0), obs.err.text
    assert_no_sanitizer_report(obs.err.text)

    s = only_session(root)
    a = check_root(s, pid=pid, status="incomplete", end_cause="signal",
                   attached_mid_run=mode == "attach")
    assert a["exit_signal"] == signal.SIGKILL and a["exit_signal_name"] == "KILL", a
    assert "exit_code" not in a
    check_cuda_attrs(a, device_count_from(out.text))
    check_health(s)
    # Noticed within ~1-2 s: the session's end and its final batch follow the kill closely.
    assert killed_ns <= s.root["end_ns"] < killed_ns + 2_000_000_000
    assert s.final["written_ns"] < killed_ns + 2_000_000_000


@pytest.mark.parametrize("mode", ["run", "attach"])
def test_target_exit_code(h, bpf, mode):
    root = h.spool_root()
    if mode == "run":
        obs = h.observer("run", "--cuda-calls", "always", "--", CUDA_CALLS, "--exit", "3", path=root)
        assert obs.finish() == 3, obs.err.text         # run returns the command's status
        out = obs.out.text
    else:
        t = h.start([CUDA_CALLS, "--wait", "--exit", "3"])
        t.out.wait_for(r"^ready$")
        obs = h.observer("attach", "--cuda-calls", "always", "-v", "-p", t.pid, path=root)
        obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
        t.signal(signal.SIGUSR1)
        assert t.finish() == 3
        assert obs.finish() == 0, obs.err.text
        out = t.out.text
    assert_no_sanitizer_report(obs.err.text)

    s = only_session(root)
    a = check_root(s, pid=s.batches[0]["pid"], status="incomplete", end_cause="exit",
                   attached_mid_run=mode == "attach")
    assert a["exit_code"] == 3 and "exit_signal" not in a, a
    check_cuda_attrs(a, device_count_from(out))
    check_health(s)


def test_exit_code_when_the_main_thread_leaves_first(h, bpf):
    """The main thread ends alone and another thread exits the process later (os._exit from
    a worker thread, exit_group racing with threads still leaving): /proc shows the process
    as a zombie all along. The session ends when the last thread leaves, with its code."""
    root = h.spool_root()
    t = h.start([CUDA_CALLS, "--wait", "--leader-leaves", "--exit", "3"])
    t.out.wait_for(r"^ready$")
    obs = h.observer("attach", "--cuda-calls", "always", "-v", "-p", t.pid, path=root)
    obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
    t.signal(signal.SIGUSR1)
    t.out.wait_for(r"^leader leaves$")
    while proc_state(t.pid) != "Z":
        time.sleep(0.01)
    # The observer looks at its targets every 100 ms: a second in this state is ten looks
    # that could end the session too early. A pass does not depend on it.
    time.sleep(1)
    assert "ended" not in obs.err.text, obs.err.text
    t.signal(signal.SIGUSR1)
    assert t.finish() == 3
    assert obs.finish() == 0, obs.err.text
    assert_no_sanitizer_report(obs.err.text)
    s = only_session(root)
    a = check_root(s, pid=t.pid, status="incomplete", end_cause="exit", attached_mid_run=True)
    assert a["exit_code"] == 3 and "exit_signal" not in a, a


# ---- the observer is killed -----------------------------------------------------------------

def test_observer_sigkill_leaves_target_fast(h, bpf, subreaper):
    root = h.spool_root(expect_final=False)     # killed: no final batch can be written
    # --hold --loop: after its calls the target waits for SIGUSR1, then launches kernels
    # until the next SIGUSR1 and prints how many.
    obs = h.observer("run", "--cuda-calls", "always", "-v", "--flush-interval", "0.2", "--", CUDA_CALLS, "--hold",
                     "--loop", path=root)
    pid = target_pid_from_log(obs)
    h.orphans.append(pid)
    obs.out.wait_for(r"^done device_count=")
    spool = root / "spool"
    deadline = time.monotonic() + 10
    while not any(spool.glob("*.json")):        # a first batch is on disk
        assert time.monotonic() < deadline, "no spool batch within 10 s"
        time.sleep(0.05)

    obs.signal(signal.SIGKILL)
    assert obs.wait() == -signal.SIGKILL
    # Its uprobes went with it; the target is neither stopped nor slowed down.
    assert_running_normally(pid)
    os.kill(pid, signal.SIGUSR1)            # start launching
    time.sleep(0.5)                         # a measurement window, not a synchronisation
    os.kill(pid, signal.SIGUSR1)            # stop
    looped = int(obs.out.wait_for(r"^looped (\d+)$").group(1))
    status = reap(pid)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    # A probed launch costs a uprobe trap (>= 1 us); unprobed, well under 0.5 us.
    assert looped > 1_000_000, f"only {looped} launches in 0.5 s: still probed?"

    sessions = read_spool(root, expect_final=False)
    assert len(sessions) == 1
    s = next(iter(sessions.values()))
    assert s.final is None
    assert s.root["status"] == "open" and s.root["attrs"]["pid"] == pid


# ---- what `run` hands to its command -------------------------------------------------------

def test_run_keeps_signal_dispositions(h, bpf):
    """The command runs as it would without the observer: a SIGINT ignored by whoever
    started cirron-probe stays ignored; SIGPIPE, which the observer itself ignores, does not
    become ignored."""
    direct = h.start([CUDA_CALLS, "--hold"], preexec_fn=ignore_sigint)
    direct.out.wait_for(r"^done device_count=")
    expected = sig_ignored_mask(direct.pid)
    direct.signal(signal.SIGUSR1)
    assert direct.finish() == 0
    assert expected & (1 << (signal.SIGINT - 1))
    assert not expected & (1 << (signal.SIGPIPE - 1))

    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "always", "-v", "--", CUDA_CALLS, "--hold", path=root,
                     preexec_fn=ignore_sigint)
    pid = target_pid_from_log(obs)
    obs.out.wait_for(r"^done device_count=")
    got = sig_ignored_mask(pid)
    os.kill(pid, signal.SIGUSR1)
    assert obs.finish() == 0, obs.err.text
    assert got == expected, f"SigIgn {got:#x} under run, {expected:#x} without"
    s = only_session(root)
    assert s.root["status"] == "ok" and s.root["attrs"]["exit_code"] == 0


def ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# ---- the observer dies while `run` holds its target ----------------------------------------

@pytest.mark.parametrize("delay_ms", [100, 200, 300])
def test_observer_sigkill_while_target_held(h, bpf, subreaper, delay_ms):
    """`run` stops its target at exec and at each library load until the probes are in
    (with a cold symbol cache, resolving libtorch's symbols holds it ~0.2 s). If the observer
    is SIGKILLed then, its watchdog resumes the target: the import must finish."""
    if not Path("/usr/lib/python3/dist-packages/torch").exists():
        unavailable("python3-torch is not installed")
    code = "import torch; print('imported', flush=True)"
    obs = h.observer("run", "--output", "none", "--", "/usr/bin/python3", "-c", code)
    deadline = time.monotonic() + 5
    children = Path(f"/proc/{obs.pid}/task/{obs.pid}/children")
    while not children.read_text().split():
        assert time.monotonic() < deadline, "run started no command"
        time.sleep(0.005)
    # The command is the first child; the watchdog, if any, comes after it.
    pid = int(children.read_text().split()[0])
    h.orphans.append(pid)
    time.sleep(delay_ms / 1000)     # somewhere in the imports, cold cache: likely held
    obs.signal(signal.SIGKILL)
    assert obs.wait() == -signal.SIGKILL
    status = reap(pid, timeout=60)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, proc_state(pid))
    assert "imported" in obs.out.text


def test_observer_sigkill_while_run_holds_at_a_library_load(h, bpf, subreaper):
    """`run` holds its command (SIGSTOP from BPF) at a library load while it has one thread.
    If the observer is SIGKILLed then, its watchdog resumes the command: training goes on to
    its end. (attach and watch hold nothing: tests/e2e/test_job_first.py.)"""
    if not Path("/usr/lib/python3/dist-packages/torch").exists():
        unavailable("python3-torch is not installed")
    train = Path(__file__).resolve().parents[1] / "workloads" / "train.py"
    env = dict(os.environ, CIRRON_TEST_HOLD_MS="60000")
    obs = h.observer("run", "-v", "--output", "none", "--", "/usr/bin/python3", train,
                     "--epochs", "1", "--batches", "2", env=env)
    m = obs.err.wait_for(r"pid (\d+): held at a library load", timeout=120)
    pid = int(m.group(1))
    h.orphans.append(pid)
    # BPF's SIGSTOP takes effect when the thread next returns to user space, which may come
    # after the observer's line: wait for the stop, as the observer's watchdog would see it
    deadline = time.monotonic() + 20 * TIME_SCALE
    while proc_state(pid) != "T":
        assert time.monotonic() < deadline, f"pid {pid} not stopped: {proc_state(pid)}"
        time.sleep(0.01)
    obs.signal(signal.SIGKILL)
    assert obs.wait() == -signal.SIGKILL
    status = reap(pid, timeout=120)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, proc_state(pid))

