# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""`cirron-probe watch`, the node agent: jobs started after it and before it, a crowd of
trivial Python processes it must ignore cheaply, --match, targets that crash, its own
restart, a job in another root (its own dynamic linker), and the systemd unit."""
import json
import os
import re
import signal
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import (BIN, ROOT, TIME_SCALE, free_port, assert_no_sanitizer_report, read_spool,
                      unavailable)
from test_distributed import DDP, EPOCHS, BATCHES, LAUNCH, TORCHRUN
from test_torch_tree import HOST_PYTHON, TRAIN, check_well_formed, named

UNIT = ROOT / "dist" / "cirron-probe-watch.service"
CRAFTED = ROOT / "tests" / "workloads" / "map_crafted.py"
CROWD = 200
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def host_torch(bpf):
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")


@pytest.fixture
def jobs(tmp_path):
    """The workloads, copied to a directory of this test's own: its path in their command
    lines lets `--match` pick this test's jobs out of whatever else runs torch on the machine
    (other tests, other users). Returns (directory, --match regex)."""
    d = tmp_path / "jobs"
    d.mkdir()
    for f in (TRAIN, DDP, LAUNCH, TORCHRUN, CRAFTED):
        shutil.copy(f, d / f.name)
    return d, re.escape(str(d))


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


def start_watch(h, root, *args, san=False):
    w = h.observer("watch", "-v", *args, path=root, san=san)
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    return w


def stop_watch(w, sig=signal.SIGINT):
    # before it exits the agent closes the uprobe links of the targets that ended, one kernel
    # grace period each (~0.1 s, more on a loaded machine): a few hundred of them after a
    # dozen jobs
    w.signal(sig)
    assert w.finish(300) == 0, w.err.text[-3000:]
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


def test_crowd_ignored_and_a_job_started_later_traced(h, host_torch, jobs):
    """A job of two processes (two DDP ranks) and 200 `python3 -c pass` start while the agent
    watches: both ranks traced completely, no session for the crowd, and what the crowd cost
    the agent."""
    d, match = jobs
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    cpu0 = cpu_seconds(w.pid)
    crowd_pids = crowd()
    report(f"a crowd of {CROWD} python3 -c pass", w, cpu0)
    cpu1 = cpu_seconds(w.pid)
    job = h.start([HOST_PYTHON, d / LAUNCH.name, "--nproc", "2", d / DDP.name])
    more = crowd(100)
    assert job.finish(240) == 0, job.err.text[-2000:]
    w.err.wait_count(r"session \S+ ended \(exit\)", 2)     # the ranks' last batches
    report("a 2-rank job and 100 more trivial processes", w, cpu1)
    m = stop_watch(w)
    assert m, w.err.text[-2000:]
    traced, ignored, looked_at = map(int, m.groups())
    # the crowd's link-map changes reached the agent, which looked and let them be
    assert looked_at >= CROWD + 100, w.err.text[-2000:]
    # (others' torch jobs on this machine, if any, fail --match: ignored is not asserted)
    assert traced == 2, w.err.text[-2000:]
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


def test_job_running_before_the_agent_is_picked_up(h, host_torch, jobs):
    d, match = jobs
    job = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--batches", "60",
                   "--step-sleep", "50"])
    job.out.wait_for(r"^ready$", timeout=120)
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    assert job.finish(120) == 0
    w.err.wait_for(rf"pid {job.pid}: session \S+ ended \(exit\)")
    stop_watch(w)
    (s,) = read_spool(root).values()
    a = s.root["attrs"]
    assert a["pid"] == job.pid
    assert (a["attached_mid_run"], a["index_origin"]) == (True, "attach"), a
    assert a["end_cause"] == "exit", a
    assert len(named(s, "step")) >= 10
    check_well_formed(s)


def test_job_started_after_the_agent_is_traced(h, host_torch):
    """A job started while the agent watches: found through its dynamic linker (at exec,
    then its link map) and traced while it trains. The kernel matrix runs this one
    (tests/kernels): on kernels without bpf_find_vma or attach cookies it takes the
    fallbacks."""
    root = h.spool_root()
    # a script name of its own, so that other torch jobs on the node are let be (--match)
    script = h.tmp / f"train_{os.getpid()}_{time.monotonic_ns()}.py"
    shutil.copy(TRAIN, script)
    w = start_watch(h, root, "--match", script.name)
    # steps of 50 ms: the agent attaches while it trains, however busy the machine
    job = h.start([HOST_PYTHON, script, "--epochs", "1", "--batches", "60", "--step-sleep", "50"])
    assert job.finish(240) == 0, job.err.text[-2000:]
    w.err.wait_for(rf"pid {job.pid}: session .* ended \(exit\)", timeout=60)
    m = stop_watch(w)
    assert m, w.err.text[-2000:]
    # by pid: other torch processes on the node may be traced too
    (s,) = [x for x in read_spool(root).values() if x.root["attrs"]["pid"] == job.pid]
    a = s.root["attrs"]
    assert (a["attached_mid_run"], a["end_cause"], a["exit_code"]) == (False, "exit", 0), a
    check_well_formed(s)
    assert len(named(s, "step")) >= 10


def steps_in_spool(root, session_suffix=""):
    """Steps written so far by the sessions whose id ends with session_suffix (batches are
    renamed into place whole, so a file that matches the name is complete)."""
    n = 0
    spool = Path(root) / "spool"
    for f in spool.glob("*.json") if spool.is_dir() else ():
        sid = f.name.rsplit(".", 2)[0]
        if sid.endswith(session_suffix):
            n += sum(sp["name"] == "step" for sp in json.loads(f.read_text()).get("spans", []))
    return n


def wait_steps_in_spool(root, n, session_suffix="", timeout=120):
    deadline = time.monotonic() + timeout * TIME_SCALE
    while steps_in_spool(root, session_suffix) < n:
        assert time.monotonic() < deadline, f"fewer than {n} steps in {root} after {timeout} s"
        time.sleep(0.2)     # polling the spool: what is waited for is the steps, not a time


def test_restart_after_a_crash_picks_the_job_up_again(h, host_torch, jobs):
    """The agent is SIGKILLed mid-job (systemd restarts it): the new agent finds the job and
    traces it under a session id of its own; the first agent's batches stay as they were."""
    d, match = jobs
    job = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--step-sleep", "50",
                   "--until-file", d / "stop"])
    root = h.spool_root(expect_final=False)
    w1 = start_watch(h, root, "--match", match)
    job.out.wait_for(r"^ready$", timeout=120)
    w1.err.wait_for(rf"pid {job.pid}: session \S+ started")
    wait_steps_in_spool(root, 1)        # the first agent wrote a batch with a step
    w1.signal(signal.SIGKILL)
    w1.finish(30)
    w2 = start_watch(h, root, "--match", match)
    w2.err.wait_for(rf"pid {job.pid}: session \S+ started", timeout=120)
    wait_steps_in_spool(root, 10, ".2")     # the new agent traces the job's steps
    (d / "stop").touch()
    assert job.finish(120) == 0
    w2.err.wait_for(rf"pid {job.pid}: session \S+ ended \(exit\)")
    stop_watch(w2)
    sessions = read_spool(root, expect_final=False)
    assert len(sessions) == 2, list(sessions)
    first, second = sorted(sessions.values(), key=lambda s: s.id)
    assert second.id == first.id + ".2"
    assert first.final is None and len(named(first, "step")) >= 1
    a = second.root["attrs"]
    assert (a["pid"], a["attached_mid_run"], a["end_cause"]) == (job.pid, True, "exit"), a
    assert len(named(second, "step")) >= 10


def released_once_traced(w, job, stop):
    """The job trains until its session started (however long attaching takes on a loaded
    machine), then ends its epoch and exits 0: what is checked is that it is found."""
    def run():
        try:
            w.err.wait_for(rf"pid {job.pid}: session \S+ started", timeout=120)
        finally:
            stop.touch()
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def test_survives_a_crashing_target_and_traces_the_next(h, host_torch, jobs):
    """The next job starts while the crashed one's probes are being removed (50-80 ms per
    uprobe in the kernel, on the agent's reaper thread): it is found and traced."""
    d, match = jobs
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    doomed = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--batches", "1000",
                      "--step-sleep", "20"])
    doomed.out.wait_for(r"^ready$", timeout=120)
    w.err.wait_for(rf"pid {doomed.pid}: session \S+ started")
    doomed.signal(signal.SIGKILL)
    doomed.finish(30)
    w.err.wait_for(rf"pid {doomed.pid}: session \S+ ended \(signal\)")
    nxt = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--until-file", d / "stop"])
    released_once_traced(w, nxt, d / "stop").join(130)
    assert nxt.finish(120) == 0
    w.err.wait_for(rf"pid {nxt.pid}: session \S+ ended \(exit\)")
    assert w.alive()
    stop_watch(w)
    by_pid = {s.root["attrs"]["pid"]: s for s in read_spool(root).values()}
    assert by_pid[doomed.pid].root["attrs"]["exit_signal_name"] == "KILL"
    assert by_pid[nxt.pid].root["attrs"]["end_cause"] == "exit"


def check_all_traced(w, root, jobs, mid_run=False):
    """Every job exited 0, its session ended by that exit (waited for in the agent's log,
    then read from the spool), with the agent's own counters in the health block."""
    for j in jobs:
        assert j.finish(180) == 0, j.err.text[-2000:]
    for j in jobs:
        w.err.wait_for(rf"pid {j.pid}: session \S+ ended \(exit\)", timeout=60)
    sessions = read_spool(root).values()
    by_pid = {s.root["attrs"]["pid"]: s for s in sessions}
    assert sorted(by_pid) == sorted(j.pid for j in jobs), w.err.text[-3000:]
    for s in sessions:
        a = s.root["attrs"]
        assert (a["end_cause"], a["exit_code"]) == ("exit", 0), a
        assert a["attached_mid_run"] is mid_run, a
        check_well_formed(s)
        agent = s.health["agent"]
        assert agent["traced"] >= 1 and agent["looked_at"] >= 1, agent
    return by_pid


def test_jobs_back_to_back_and_at_once_all_traced(h, host_torch, jobs):
    """Issue 15: 8 short torch jobs started 1-2 s apart, each while the one before is being
    detached, then 4 at once, under one agent: all 12 traced, each ended by its exit."""
    d, match = jobs
    root = h.spool_root()
    w = start_watch(h, root, "--match", match)
    cpu0 = cpu_seconds(w.pid)
    started, releases = [], []

    def job(i):
        stop = d / f"stop{i}"
        j = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--until-file", stop])
        releases.append(released_once_traced(w, j, stop))
        return j

    for i in range(8):
        started.append(job(i))
        time.sleep(1 + i / 8)   # the workload's shape (jobs 1-2 s apart), not a wait
    started += [job(8 + i) for i in range(4)]
    for th in releases:
        th.join(130)
    by_pid = check_all_traced(w, root, started)
    report("12 short torch jobs", w, cpu0)
    m = stop_watch(w)
    assert m and int(m.group(1)) == 12, w.err.text[-3000:]
    steps = [len(named(s, "step")) for s in by_pid.values()]
    print(f"steps seen per job (6 run): {steps}")


def test_control_ring_overflow_finds_the_burst(h, host_torch, jobs):
    """A control ring of one page (CIRRON_TEST_CONTROL_RING_KB, tests only) holds ~20 events.
    With the agent stopped, 40 process starts fill it for certain, and the link-map events of
    3 torch jobs started after them are lost: the agent sees the loss when it runs again,
    looks at every process in /proc, and traces the 3 jobs (missed, then recovered)."""
    d, match = jobs
    root = h.spool_root()
    env = dict(os.environ, CIRRON_TEST_CONTROL_RING_KB="4")
    w = h.observer("watch", "-v", "--match", match, path=root, env=env)
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    w.signal(signal.SIGSTOP)
    try:
        crowd(40)
        burst = [h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1", "--until-file",
                          d / f"stop{i}"]) for i in range(3)]
        for j in burst:     # torch imported, training: every event of theirs was lost
            j.out.wait_for(r"^ready$", timeout=120)
    finally:
        w.signal(signal.SIGCONT)
    w.err.wait_for(r"control events lost \(ring full\): looking at every process again")
    releases = [released_once_traced(w, j, d / f"stop{i}") for i, j in enumerate(burst)]
    for j in burst:
        w.err.wait_for(rf"pid {j.pid}: found by a rescan of /proc after lost events")
    for th in releases:
        th.join(130)
    by_pid = check_all_traced(w, root, burst, mid_run=True)
    for s in by_pid.values():
        agent = s.final["health"]["agent"]
        assert agent["recovered"] == 3 and agent["control_events_lost"] >= 20, agent
        assert agent["rescans"] >= 1, agent
        assert s.final["health"]["control_drops"] >= 20
        assert len(named(s, "step")) >= 1
    m = stop_watch(w)
    assert m and int(m.group(1)) == 3, w.err.text[-3000:]


@pytest.mark.parametrize("traced", [True, False])
def test_match_selects_by_command_line(h, host_torch, jobs, traced):
    d, own = jobs
    root = h.spool_root()
    match = own + r"/train\.py --epochs 1" if traced else own + "/no-such-job"
    w = start_watch(h, root, "--match", match, "-v")     # -vv: says which it ignored
    job = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1"])
    assert job.finish(120) == 0
    if traced:
        w.err.wait_for(rf"pid {job.pid}: session \S+ ended \(exit\)")
    else:
        w.err.wait_for(rf"pid {job.pid}: command line does not match --match", timeout=60)
    m = stop_watch(w)
    assert m, w.err.text
    # others' torch jobs on this machine fail --match too: ignored is at least ours
    if traced:
        assert int(m.group(1)) == 1, w.err.text
    else:
        assert int(m.group(1)) == 0 and int(m.group(2)) >= 1, w.err.text
    sessions = read_spool(root, allow_empty=True)
    assert [s.root["attrs"]["pid"] for s in sessions.values()] == ([job.pid] if traced else [])


def test_torchrun_in_another_root(h, bpf, trixie_root, tmp_path):  # noqa: F811
    """torchrun with 3 ranks in the trixie root: its own dynamic linker, probed when its first
    process starts. The launcher is a session with role=launcher, each rank one of its own."""
    inside = f"/work/{tmp_path.name}-{os.getpid()}"     # its own: --match picks its processes
    (trixie_root / inside[1:]).mkdir(exist_ok=True)
    for f in (DDP, TORCHRUN):
        shutil.copy(f, trixie_root / inside[1:] / f.name)
    root = h.spool_root()
    w = start_watch(h, root, "--match", re.escape(inside + "/"))
    cpu0 = cpu_seconds(w.pid)
    job = h.start(["chroot", trixie_root, "python3", f"{inside}/torchrun_nolibuv.py",
                   "--master_port", str(free_port()), "--nproc_per_node", "3",
                   f"{inside}/ddp_train.py"])
    assert job.finish(240) == 0, job.err.text[-2000:]
    w.err.wait_count(r"session \S+ ended \(exit\)", 4)
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
    shutil.rmtree(trixie_root / inside[1:], ignore_errors=True)


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
    # the package's path; `make install` writes PREFIX's into the unit it installs
    assert argv[:2] == ["/usr/bin/cirron-probe", "watch"], argv
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


def craft(d):
    """Libraries named like the ones the agent traces, each broken its own way, from a real
    small ELF (zlib): garbage behind an ELF magic, section headers past the end of the file,
    a symbol table claiming billions of one-byte symbols, one claiming 2^40 symbols of the
    right size, one whose data lies past the end of the file."""
    import struct
    base = Path("/usr/lib/x86_64-linux-gnu/libz.so.1").read_bytes()
    shoff, = struct.unpack_from("<Q", base, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", base, 0x3A)
    dynsym = next(shoff + i * shentsize for i in range(shnum)
                  if struct.unpack_from("<I", base, shoff + i * shentsize + 4)[0] == 11)

    def patched(*edits):
        b = bytearray(base)
        for off, fmt, value in edits:
            struct.pack_into(fmt, b, off, value)
        return bytes(b)

    d.mkdir()
    (d / "libcudart.so.13").write_bytes(b"\x7fELF\x02\x01\x01" + os.urandom(65536))
    (d / "libtorch_cpu.so").write_bytes(patched((0x28, "<Q", len(base) + (1 << 30))))
    (d / "libc10.so").write_bytes(patched((dynsym + 0x20, "<Q", 0xffffffffff00),
                                          (dynsym + 0x38, "<Q", 1)))
    (d / "libtorch_python.so").write_bytes(patched((dynsym + 0x20, "<Q", 24 << 40)))
    (d / "libnccl.so.2").write_bytes(patched((dynsym + 0x18, "<Q", len(base) + 4096)))
    return sorted(p.name for p in d.iterdir())


def test_crafted_libraries_cost_bounded_time_and_say_why(h, bpf, jobs):
    """A process maps crafted libraries named like libcudart, libtorch, libc10, NCCL: the
    agent reads them (as root) in bounded time and memory, skips each with a reason, and
    goes on tracing the next job."""
    d, match = jobs
    names = craft(d / "crafted")
    root = h.spool_root()
    w = start_watch(h, root, "--match", match, san=True)     # ASan + UBSan
    cpu0 = cpu_seconds(w.pid)
    hostile = h.start([HOST_PYTHON, d / "map_crafted.py", d / "crafted"])
    hostile.out.wait_for(r"^ready$", timeout=60)
    for name in names:
        w.err.wait_for(rf"pid {hostile.pid}: skipped \S*/crafted/{re.escape(name)}: ", timeout=60)
    cost = cpu_seconds(w.pid) - cpu0
    rss, hwm = memory_mib(w.pid)
    print(f"\nagent on {len(names)} crafted libraries: {cost:.3f} s CPU, peak RSS {hwm:.1f} MiB")
    assert cost < 10 and hwm < 256, (cost, hwm)
    hostile.signal(signal.SIGUSR1)
    assert hostile.finish() == 0
    nxt = h.start([HOST_PYTHON, d / TRAIN.name, "--epochs", "1"])
    check_all_traced(w, root, [nxt])
    assert w.alive()
    stop_watch(w)
    assert_no_sanitizer_report(w.err.text)
    print("\n".join(ln for ln in w.err.text.splitlines() if "skipped" in ln))
