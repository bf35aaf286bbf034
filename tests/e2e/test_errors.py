# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Bad input and hostile conditions: each error is one clear line on stderr and its
documented exit code (user/common/exit_codes.h), with no crash and no sanitizer report. All run
the ASan/UBSan build."""
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import CUDA_CALLS, SAN, SPIN, assert_no_sanitizer_report, proc_state, san_env

EXIT_NO_SUCH_PROCESS, EXIT_NO_PERMISSION, EXIT_NO_KNOWN_LIBRARY = 2, 3, 4
EXIT_SPOOL_UNWRITABLE, EXIT_TARGET_GONE, EXIT_USAGE = 5, 6, 64


def test_exit_codes_match_header():
    """The codes these tests expect are the ones user/common/exit_codes.h documents."""
    header = (Path(__file__).resolve().parents[2] / "user" / "common" / "exit_codes.h").read_text()
    for name, code in [("EXIT_NO_SUCH_PROCESS", 2), ("EXIT_NO_PERMISSION", 3),
                       ("EXIT_NO_KNOWN_LIBRARY", 4), ("EXIT_SPOOL_UNWRITABLE", 5),
                       ("EXIT_TARGET_GONE", 6), ("EXIT_USAGE", 64)]:
        assert f"{name} = {code}," in header, name


def one_error_line(err, *needles, prefix="cirron-probe: "):
    """stderr is exactly one line, from cirron-probe, naming the cause."""
    assert_no_sanitizer_report(err)
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    line = lines[0]
    assert line.startswith(prefix), line
    for n in needles:
        assert n.lower() in line.lower(), f"{n!r} not in {line!r}"
    return line


def nonexistent_pid():
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    for pid in range(pid_max - 1, 300, -1):
        if not Path(f"/proc/{pid}").exists():
            return pid
    raise AssertionError("no free pid")


def waiting_target(h):
    t = h.start([CUDA_CALLS, "--wait"])
    t.out.wait_for(r"^ready$")
    return t


def assert_target_unharmed(t):
    """A cuda_calls --wait target still works: it runs its calls and exits 0."""
    assert proc_state(t.pid) in ("R", "S")
    t.signal(signal.SIGUSR1)
    assert t.finish() == 0
    assert "done device_count=" in t.out.text


def no_batches(root):
    return not list((root / "spool").glob("*.json")) if (root / "spool").exists() else True


@pytest.mark.parametrize("cmd", ["attach", "doctor"])
def test_nonexistent_pid(h, built, cmd):
    pid = nonexistent_pid()
    root = h.spool_root()
    spool = ["--path", root] if cmd == "attach" else []    # doctor writes no spool
    rc, out, err = h.run_to_end([SAN, cmd, "-p", pid, *spool, "--cache-dir", h.cache_dir],
                                env=san_env())
    assert rc == EXIT_NO_SUCH_PROCESS, err
    one_error_line(err, "no such process", str(pid))
    assert not (root / "spool").exists()        # checked before anything else


def test_target_gone_during_bpf_load(h, bpf):
    """The target dies after the PID check, while the observer loads BPF: exit 6."""
    t = waiting_target(h)
    root = h.spool_root()
    obs = h.observer("attach", "--cuda-calls", "always", "-vv", "-p", t.pid, san=True, path=root)
    obs.err.wait_for(r"^libbpf: ")             # BPF loading has begun
    t.popen.kill()
    assert t.finish() == -signal.SIGKILL
    rc = obs.finish()
    assert rc == EXIT_TARGET_GONE, obs.err.text
    assert_no_sanitizer_report(obs.err.text)
    last = obs.err.lines[-1]
    assert last == f"cirron-probe: process {t.pid} exited while attaching", obs.err.text
    assert no_batches(root)


def test_target_gone_within_milliseconds(h, bpf):
    """A target that exits within milliseconds of its start: 2 or 6, one line, no crash."""
    root = h.spool_root()
    t = h.start([CUDA_CALLS])                  # its calls take a few ms, then it exits
    reaper = threading.Thread(target=t.popen.wait, daemon=True)
    obs = h.observer("attach", "--cuda-calls", "always", "-p", t.pid, san=True, path=root)
    reaper.start()                             # reaped at once: its pid disappears
    rc = obs.finish()
    reaper.join(10)
    assert rc in (EXIT_NO_SUCH_PROCESS, EXIT_TARGET_GONE), obs.err.text
    if rc == EXIT_NO_SUCH_PROCESS:
        one_error_line(obs.err.text, "no such process", str(t.pid))
    else:
        one_error_line(obs.err.text, f"process {t.pid} exited while attaching")
    assert no_batches(root)


@pytest.fixture
def world_dir():
    """A directory the unprivileged user can use, with its own copy of the binary (the
    checkout itself may sit under a directory only root can enter)."""
    d = Path(tempfile.mkdtemp(prefix="cirron-e2e-", dir="/tmp"))
    d.chmod(0o777)
    shutil.copy2(SAN, d / "cirron-probe-san")
    (d / "cirron-probe-san").chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("cmd", ["attach", "run"])
def test_no_permission(h, root_user, world_dir, cmd):
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.fail("setpriv (util-linux) is needed to drop privileges")
    spin = h.start([SPIN])
    spin.out.wait_for(r"^ready$")
    argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
            world_dir / "cirron-probe-san", cmd, "--path", world_dir / "trace",
            "--cache-dir", world_dir / "cache"]
    argv += ["-p", spin.pid] if cmd == "attach" else ["--", "/bin/echo", "should-not-run"]
    rc, out, err = h.run_to_end(argv, env=san_env())
    assert rc == EXIT_NO_PERMISSION, err
    one_error_line(err, "permission", "root", "CAP_BPF")
    assert "should-not-run" not in out
    assert proc_state(spin.pid) in ("R", "S")


def test_no_known_library(h, bpf):
    spin = h.start([SPIN])
    spin.out.wait_for(r"^ready$")
    root = h.spool_root()
    obs = h.observer("attach", "-p", spin.pid, san=True, path=root)
    assert obs.finish() == EXIT_NO_KNOWN_LIBRARY, obs.err.text
    one_error_line(obs.err.text, f"process {spin.pid}", "no library", "doctor -p")
    assert no_batches(root)                     # no session was started
    assert proc_state(spin.pid) in ("R", "S")


@pytest.mark.parametrize("cmd", ["attach", "run"])
def test_unwritable_path(h, built, cmd):
    regular = h.tmp / "a-regular-file"
    regular.write_text("x")
    bad = regular / "trace"
    if cmd == "attach":
        t = waiting_target(h)
        argv = ["attach", "-v", "-p", t.pid]
    else:
        argv = ["run", "-v"]
    argv += ["--path", bad, "--cache-dir", h.cache_dir]
    if cmd == "run":
        argv += ["--", CUDA_CALLS]
    rc, out, err = h.run_to_end([SAN] + argv, env=san_env())
    assert rc == EXIT_SPOOL_UNWRITABLE, err
    # One line even with -v: nothing was loaded, attached or started before the check.
    one_error_line(err, "cannot write spool", str(bad), "not a directory")
    assert regular.read_text() == "x"
    if cmd == "attach":
        assert_target_unharmed(t)
    else:
        assert "done" not in out                # the command never ran


@pytest.mark.parametrize("cmd", ["attach", "run"])
@pytest.mark.parametrize("value", ["bogus", "spool,bogus", ""])
def test_invalid_output(h, built, cmd, value):
    root = h.spool_root()
    if cmd == "attach":
        t = waiting_target(h)
        argv = ["attach", "-v", "-p", t.pid, "--output", value]
    else:
        argv = ["run", "-v", "--output", value, "--", CUDA_CALLS]
    rc, out, err = h.run_to_end([SAN] + argv + ["--path", root, "--cache-dir", h.cache_dir],
                                env=san_env())
    assert rc == EXIT_USAGE, err
    one_error_line(err, "--output", f"'{value}'", prefix=f"cirron-probe {cmd}: ")
    assert not root.exists()                    # rejected before anything was done
    if cmd == "attach":
        assert_target_unharmed(t)
    else:
        assert "done" not in out


def test_unknown_command(h, built):
    rc, out, err = h.run_to_end([SAN, "frobnicate", "-p", "1"], env=san_env())
    assert rc == EXIT_USAGE
    one_error_line(err, "unknown command 'frobnicate'", "--help")
    assert out == ""


@pytest.mark.parametrize("cmd", ["attach", "doctor"])
def test_missing_pid(h, built, cmd):
    rc, out, err = h.run_to_end([SAN, cmd], env=san_env())
    assert rc == EXIT_USAGE
    one_error_line(err, "-p PID is required", prefix=f"cirron-probe {cmd}: ")


@pytest.mark.parametrize("argv, needle", [
    (["attach", "-p", "notapid"], "invalid PID: notapid"),
    (["attach", "-p", "-5"], "invalid PID"),
    (["run"], "run needs a command"),
    (["run", "-p", "1", "--", "/bin/true"], "run takes a command, not -p"),
    (["attach", "-p", "1", "stray"], "unexpected argument: stray"),
    (["attach", "-p", "1", "--flush-interval", "0"], "invalid --flush-interval: 0"),
    (["attach", "-p", "1", "--duration", "nan"], "invalid --duration: nan"),
])
def test_other_usage_errors(h, built, argv, needle):
    rc, out, err = h.run_to_end([SAN] + argv, env=san_env())
    assert rc == EXIT_USAGE
    one_error_line(err, needle, prefix=f"cirron-probe {argv[0]}: ")


def test_run_nonexistent_command(h, bpf):
    root = h.spool_root()
    rc, out, err = h.run_to_end([SAN, "run", "--path", root, "--cache-dir", h.cache_dir, "--",
                                 "/nonexistent/command", "arg"], env=san_env())
    assert rc == 127, err
    one_error_line(err, "cannot run /nonexistent/command", "no such file or directory")
    assert no_batches(root)


def test_run_not_executable(h, bpf):
    script = h.tmp / "not-executable"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    root = h.spool_root()
    rc, out, err = h.run_to_end([SAN, "run", "--path", root, "--cache-dir", h.cache_dir, "--",
                                 script], env=san_env())
    assert rc == 126, err
    one_error_line(err, f"cannot run {script}", "permission denied")
    assert "ran" not in out


def test_spool_others_may_write_is_refused(h, bpf, tmp_path):
    """The spool root others may write (0777, no sticky bit) with a link planted as its spool
    directory, pointing outside: root refuses to write there, one clear error, exit 5, and
    nothing is written through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "spool").symlink_to(outside)
    rc, out, err = h.run_to_end([SAN, "run", "--path", shared, "--cache-dir", h.cache_dir,
                                 "--", CUDA_CALLS], env=san_env())
    assert rc == EXIT_SPOOL_UNWRITABLE, err
    one_error_line(err, "cannot write spool", str(shared), "other users may write")
    assert list(outside.iterdir()) == []
    assert "done" not in out                    # the command never ran


def test_links_planted_in_the_spool_are_never_followed(h, bpf, tmp_path):
    """Links planted in a spool under the names temporary batch files used to have (which
    root opened with O_TRUNC, following links): the batches land whole, mode 0640, and the
    file the links point at is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    t = waiting_target(h)
    root = h.spool_root()
    spool = root / "spool"
    spool.mkdir(parents=True, mode=0o750)
    stat = Path(f"/proc/{t.pid}/stat").read_text()
    ticks = stat[stat.rindex(")") + 2:].split()[19]
    sid = f"{os.uname().nodename}-{t.pid}-{ticks}"
    planted = [spool / f".{sid}.{seq:08d}.tmp" for seq in range(4)]
    planted.append(spool / ".write-test.tmp")
    for link in planted:
        link.symlink_to(victim)
    obs = h.observer("attach", "-v", "-p", t.pid, path=root, san=True)
    obs.err.wait_for(rf"pid {t.pid}: session {sid} started")
    assert_target_unharmed(t)
    assert obs.finish(60) == 0, obs.err.text
    assert_no_sanitizer_report(obs.err.text)
    assert victim.read_text() == "precious\n"
    batches = list(spool.glob(f"{sid}.*.json"))
    assert batches and all((b.stat().st_mode & 0o7777) == 0o640 for b in batches)
    assert all(link.is_symlink() for link in planted)
    for link in planted:            # (the spool's own check at the end wants batches only)
        link.unlink()
