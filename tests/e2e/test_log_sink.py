# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--output log: a real syslog daemon (Debian's rsyslog, started here with a config of its
own: its own socket and output file under the test's directory, nothing else on the machine
touched) receives one message per closed span, the stdout sink's text, ident cirron-probe,
facility user, severity info; with the spool and stdout sinks at the same time."""
import re
import signal
import time
from pathlib import Path

import pytest

from conftest import ROOT, assert_no_sanitizer_report, only_session, unavailable

RSYSLOGD = Path("/usr/sbin/rsyslogd")
TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
TRAIN = ["/usr/bin/python3", str(ROOT / "tests" / "workloads" / "train.py"), "--epochs", "2",
         "--batches", "4", "--val-batches", "1"]
EXIT_FAILURE_RUNTIME, EXIT_USAGE = 1, 64
pytestmark = pytest.mark.timeout(180)


def wait_until(what, fn, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def rsyslog(h, tmp_path):
    """rsyslogd in the foreground on tmp/log.sock, writing tmp/messages; (socket, file)."""
    if not RSYSLOGD.exists():
        unavailable("rsyslog is not installed (scripts/install-deps.sh installs it)")
    d = tmp_path / "rsyslog"
    d.mkdir()
    sock, out = d / "log.sock", d / "messages"
    conf = d / "rsyslog.conf"
    conf.write_text(
        f'global(workDirectory="{d}")\n'
        'module(load="imuxsock" SysSock.Use="off")\n'
        f'input(type="imuxsock" Socket="{sock}" CreatePath="on")\n'
        'template(name="fields" type="string" string="%programname%|%procid%|'
        '%syslogfacility-text%|%syslogseverity-text%|%msg:2:$%\\n")\n'
        f'*.* action(type="omfile" file="{out}" template="fields")\n')
    p = h.start([str(RSYSLOGD), "-n", "-f", str(conf), "-i", str(d / "rsyslogd.pid")])
    wait_until("rsyslogd's socket", sock.exists)
    yield sock, out
    p.signal(signal.SIGTERM)
    assert p.wait(30) == 0, p.err.text


def test_spans_reach_rsyslog(h, bpf, rsyslog):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")
    sock, out = rsyslog
    root = h.spool_root()
    obs = h.observer("run", "--output", "spool,log,stdout", "--syslog-socket", str(sock),
                     "--", *TRAIN, san=True, path=root)
    assert obs.finish(120) == 0, obs.err.text
    assert_no_sanitizer_report(obs.err.text)
    # the traced job writes to the same stdout: a line of ours may follow a partial one
    printed = re.findall(r"\[cirron\] .*", obs.out.text)
    s = only_session(root)
    assert len(printed) == len(s.spans) > 20

    def logged():
        lines = out.read_text().splitlines() if out.exists() else []
        return len(lines) >= len(printed) and lines
    lines = wait_until("every span in rsyslog's file", logged)
    fields = [ln.split("|", 4) for ln in lines]
    assert {tuple(f[:4]) for f in fields} == {("cirron-probe", str(obs.pid), "user", "info")}
    assert [f[4] for f in fields] == printed     # the same text, in the same order


def test_no_syslog_daemon(h, bpf, tmp_path):
    marker = tmp_path / "started"
    rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "run", "--output", "log",
                                 "--syslog-socket", str(tmp_path / "none.sock"), "--",
                                 "/bin/sh", "-c", f"touch {marker}"])
    assert rc == EXIT_FAILURE_RUNTIME, err
    assert err == (f"cirron-probe: cannot reach syslog at {tmp_path / 'none.sock'}: "
                   "No such file or directory\n"), err
    assert not marker.exists()
    rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "run", "--output", "log,syslog",
                                 "--", "/bin/true"])
    assert rc == EXIT_USAGE and "invalid --output 'log,syslog'" in err, err
