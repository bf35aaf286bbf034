# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""`cirron-probe watch`, the node agent: jobs started after it and before it, a crowd of
trivial Python processes it must ignore cheaply, --match, targets that crash, its own
restart, a job in another root (its own dynamic linker), and the systemd unit."""
import os
import re
import signal
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT, read_spool, unavailable
from test_distributed import DDP, EPOCHS, BATCHES, LAUNCH, TORCHRUN
from test_torch_tree import HOST_PYTHON, TRAIN, check_well_formed, named, trixie_root  # noqa: F401

UNIT = ROOT / "dist" / "cirron-probe-watch.service"
CROWD = 200
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def host_torch(bpf):
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")


def cpu_seconds(pid):
    """User + system CPU time of a process (all its threads)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid):
    """(VmRSS, VmHWM) in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = [int(re.search(rf"^{k}:\s+(\d+) kB", status, re.M).group(1)) for k in ("VmRSS", "VmHWM")]
    return tuple(k / 1024 for k in kib)


def start_watch(h, root, *args):
    w = h.observer("watch", "-v", *args, path=root)
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    return w


def stop_watch(w, sig=signal.SIGINT):
    w.signal(sig)
    assert w.finish(60) == 0, w.err.text[-3000:]
    return re.search(r"watch: traced (\d+) processes, ignored (\d+) \(--match\), looked at (\d+)",
                     w.err.text)


def crowd(n=CROWD, parallel=20):
    """n trivial Python processes, parallel at a time; their pids."""
    pids = []
    for i in range(0, n, parallel):
        batch = [subprocess.Popen(["python3", "-c", "pass"]) for _ in range(min(parallel, n - i))]
        for p in batch:
            assert p.wait(60) == 0
        pids += [p.pid for p in batch]
    return pids


def report(what, w, cpu_before):
    rss, hwm = memory_mib(w.pid)
    print(f"\nagent during {what}: {cpu_seconds(w.pid) - cpu_before:.3f} s CPU, "
          f"RSS {rss:.1f} MiB (peak {hwm:.1f})")


def test_crowd_ignored_and_a_job_started_later_traced(h, host_torch):
    """A job of two processes (two DDP ranks) and 200 `python3 -c pass` start while the agent
    watches: both ranks traced completely, no session for the crowd, and what the crowd cost
    the agent."""
    root = h.spool_root()
    w = start_watch(h, root)
    cpu0 = cpu_seconds(w.pid)
    crowd_pids = crowd()
    report(f"a crowd of {CROWD} python3 -c pass", w, cpu0)
    cpu1 = cpu_seconds(w.pid)
    job = h.start([HOST_PYTHON, LAUNCH, "--nproc", "2", DDP])
    more = crowd(100)
    assert job.finish(240) == 0, job.err.text[-2000:]
    time.sleep(1.5)     # the ranks' exit events, their last batches
    report("a 2-rank job and 100 more trivial processes", w, cpu1)
    m = stop_watch(w)
    assert m, w.err.text[-2000:]
    traced, ignored, looked_at = map(int, m.groups())
    # the crowd's link-map changes reached the agent, which looked and let them be
    assert looked_at >= CROWD + 100, w.err.text[-2000:]
    assert (traced, ignored) == (2, 0), w.err.text[-2000:]
    sessions = read_spool(root)
    pids = {s.root["attrs"]["pid"] for s in sessions.values()}
    assert not pids & set(crowd_pids + more)
    ranks = sorted(s.root["attrs"]["rank"] for s in sessions.values())
    assert ranks == [0, 1], [s.root["attrs"] for s in sessions.values()]
    for s in sessions.values():
        a = s.root["attrs"]
        assert (a["role"], a["world_size"], a["attached_mid_run"]) == ("rank", 2, False), a
        assert a["end_cause"] == "exit" and a["exit_code"] == 0, a
        check_well_formed(s)
        assert len(named(s, "step")) == EPOCHS * BATCHES
        assert len(named(s, "epoch")) == EPOCHS


def test_job_running_before_the_agent_is_picked_up(h, host_torch):
    job = h.start([HOST_PYTHON, TRAIN, "--epochs", "1", "--batches", "60", "--step-sleep", "50"])
    job.out.wait_for(r"^ready$", timeout=120)
    root = h.spool_root()
    w = start_watch(h, root)
    assert job.finish(120) == 0
    time.sleep(1.5)
    stop_watch(w)
    (s,) = read_spool(root).values()
    a = s.root["attrs"]
    assert a["pid"] == job.pid
    assert (a["attached_mid_run"], a["index_origin"]) == (True, "attach"), a
    assert a["end_cause"] == "exit", a
    assert len(named(s, "step")) >= 10
    check_well_formed(s)


def test_restart_after_a_crash_picks_the_job_up_again(h, host_torch):
    """The agent is SIGKILLed mid-job (systemd restarts it): the new agent finds the job and
    traces it under a session id of its own; the first agent's batches stay as they were."""
    job = h.start([HOST_PYTHON, TRAIN, "--epochs", "1", "--batches", "100", "--step-sleep", "50"])
    root = h.spool_root(expect_final=False)
    w1 = start_watch(h, root)
    job.out.wait_for(r"^ready$", timeout=120)
    w1.err.wait_for(rf"pid {job.pid}: session \S+ started")
    time.sleep(1.5)     # a batch or two
    w1.signal(signal.SIGKILL)
    w1.finish(30)
    w2 = start_watch(h, root)
    w2.err.wait_for(rf"pid {job.pid}: session \S+ started")
    assert job.finish(120) == 0
    time.sleep(1.5)
    stop_watch(w2)
    sessions = read_spool(root, expect_final=False)
    assert len(sessions) == 2, list(sessions)
    first, second = sorted(sessions.values(), key=lambda s: s.id)
    assert second.id == first.id + ".2"
    assert first.final is None and len(named(first, "step")) >= 1
    a = second.root["attrs"]
    assert (a["pid"], a["attached_mid_run"], a["end_cause"]) == (job.pid, True, "exit"), a
    assert len(named(second, "step")) >= 10


def test_survives_a_crashing_target_and_traces_the_next(h, host_torch):
    root = h.spool_root()
    w = start_watch(h, root)
    doomed = h.start([HOST_PYTHON, TRAIN, "--epochs", "1", "--batches", "1000",
                      "--step-sleep", "20"])
    doomed.out.wait_for(r"^ready$", timeout=120)
    w.err.wait_for(rf"pid {doomed.pid}: session \S+ started")
    doomed.signal(signal.SIGKILL)
    doomed.finish(30)
    w.err.wait_for(rf"pid {doomed.pid}: session \S+ ended \(signal\)")
    nxt = h.start([HOST_PYTHON, TRAIN, "--epochs", "1"])
    assert nxt.finish(120) == 0
    w.err.wait_for(rf"pid {nxt.pid}: session \S+ ended \(exit\)")
    assert w.alive()
    stop_watch(w)
    by_pid = {s.root["attrs"]["pid"]: s for s in read_spool(root).values()}
    assert by_pid[doomed.pid].root["attrs"]["exit_signal_name"] == "KILL"
    assert by_pid[nxt.pid].root["attrs"]["end_cause"] == "exit"


@pytest.mark.parametrize("match,traced", [(r"train\.py --epochs 1", True), ("no-such-job", False)])
def test_match_selects_by_command_line(h, host_torch, match, traced):
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    job = h.start([HOST_PYTHON, TRAIN, "--epochs", "1"])
    assert job.finish(120) == 0
    time.sleep(1.5)
    m = stop_watch(w)
    assert m and (int(m.group(1)), int(m.group(2))) == ((1, 0) if traced else (0, 1)), w.err.text
    sessions = read_spool(root, allow_empty=True)
    assert [s.root["attrs"]["pid"] for s in sessions.values()] == ([job.pid] if traced else [])


def test_torchrun_in_another_root(h, bpf, trixie_root):  # noqa: F811
    """torchrun with 3 ranks in the trixie root: its own dynamic linker, probed when its first
    process starts. The launcher is a session with role=launcher, each rank one of its own."""
    for f in (DDP, TORCHRUN):
        shutil.copy(f, trixie_root / "work" / f.name)
    root = h.spool_root()
    w = start_watch(h, root)
    cpu0 = cpu_seconds(w.pid)
    job = h.start(["chroot", trixie_root, "python3", "/work/torchrun_nolibuv.py",
                   "--nproc_per_node", "3", "/work/ddp_train.py"])
    assert job.finish(240) == 0, job.err.text[-2000:]
    time.sleep(1.5)
    report("a 3-rank torchrun job", w, cpu0)
    stop_watch(w)
    assert re.search(r"watching the processes that \S*trixie\S*/ld-linux", w.err.text), w.err.text
    sessions = read_spool(root).values()
    roles = sorted(s.root["attrs"]["role"] for s in sessions)
    assert roles == ["launcher", "rank", "rank", "rank"], [s.root["attrs"] for s in sessions]
    for s in sessions:
        if s.root["attrs"]["role"] == "rank":
            assert len(named(s, "step")) == EPOCHS * BATCHES
            check_well_formed(s)


def test_venv_torchrun_picked_up(h, bpf, venv):
    """The official torch 2.13 wheel in a venv on pyenv's CPython, 3 ranks under the venv's
    own torchrun, started after the agent: every rank traced, the launcher tagged."""
    root = h.spool_root()
    # only this job (torch processes of other test runs on the machine are left alone)
    w = start_watch(h, root, "--match", re.escape(str(DDP)))
    job = h.start([str(venv / "bin" / "torchrun"), "--standalone", "--nproc_per_node", "3",
                   str(DDP)])
    assert job.finish(240) == 0, job.err.text[-2000:]
    # the agent saw each exit and wrote the session's final batch
    ended = re.compile(r"session \S+ ended \(exit\)")
    deadline = time.monotonic() + 60
    while sum(1 for ln in list(w.err.lines) if ended.search(ln)) < 4:
        assert time.monotonic() < deadline, w.err.text[-3000:]
        time.sleep(0.1)
    stop_watch(w)
    sessions = read_spool(root).values()
    roles = sorted(s.root["attrs"]["role"] for s in sessions)
    assert roles == ["launcher", "rank", "rank", "rank"], [s.root["attrs"] for s in sessions]
    for s in sessions:
        if s.root["attrs"]["role"] == "rank":
            assert s.root["attrs"]["torch_version"].startswith("2.13.0")
            assert len(named(s, "step")) == EPOCHS * BATCHES
            check_well_formed(s)


def test_systemd_unit_runs_as_written(h, bpf, tmp_path):
    """The unit's ExecStart, with the spool under tmp, is a valid watch command line."""
    text = UNIT.read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    argv = shlex.split(line[len("ExecStart="):])
    assert argv[:2] == ["/usr/local/bin/cirron-probe", "watch"], argv
    assert re.search(r"^Restart=always$", text, re.M) and re.search(r"^KillSignal=SIGTERM$",
                                                                    text, re.M)
    argv[0] = str(BIN)
    argv[argv.index("--path") + 1] = str(tmp_path / "spool-root")
    w = h.start(argv + ["--duration", "2"])
    assert w.finish(60) == 0, w.err.text
    if shutil.which("systemd-analyze"):
        r = subprocess.run(["systemd-analyze", "verify", str(UNIT)], capture_output=True,
                           text=True, timeout=60)
        for complaint in ("Unknown key", "Failed to parse", "Invalid", "bad-setting"):
            assert complaint not in r.stderr, r.stderr


def test_bad_match_is_a_usage_error(h, built):
    rc, out, err = h.run_to_end([BIN, "watch", "--match", "(unclosed"])
    assert rc == 64 and "invalid --match" in err, err
    rc, out, err = h.run_to_end([BIN, "watch", "-p", "1"])
    assert rc == 64, err
