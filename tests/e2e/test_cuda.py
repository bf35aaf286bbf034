# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The CUDA runtime probes on a real libcudart client, traced with `run` and `attach`:
exact call counts, bytes and kernel names in the spool; --cuda-detail marks."""
import signal
from collections import Counter

import pytest

from conftest import CUDA_CALLS, assert_no_sanitizer_report, only_session
from cuda_expect import (DETAIL_SEQUENCE, check_cuda_attrs, check_health, check_root,
                         device_count_from)


def start_waiting_target(h):
    """cuda_calls --wait: maps libcudart, prints "ready", calls nothing before SIGUSR1."""
    t = h.start([CUDA_CALLS, "--wait"])
    t.out.wait_for(r"^ready$")
    return t


def attach_and_wait(h, t, *args, san=False, path=None):
    """Attaches to t and returns once the observer says its probes are in."""
    obs = h.observer("attach", "-v", "-p", t.pid, *args, san=san, path=path)
    obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
    return obs


def test_run_counts(h, bpf):
    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "always", "--output", "spool,stdout", "--", CUDA_CALLS, san=True, path=root)
    assert obs.finish() == 0
    assert_no_sanitizer_report(obs.err.text)
    assert "warning" not in obs.err.text, obs.err.text
    ndev = device_count_from(obs.out.text)

    s = only_session(root)
    a = check_root(s, pid=s.batches[0]["pid"], status="ok", end_cause="exit",
                   attached_mid_run=False)
    assert a["exit_code"] == 0 and "exit_signal" not in a
    check_cuda_attrs(a, ndev)
    check_health(s)
    # counters only without --cuda-detail (the values the target printed are marks too)
    assert [m for m in s.root["marks"] if "value" not in m] == []
    # The stdout sink: one line for the closed session span, with the final totals.
    lines = [l for l in obs.out.lines if l.startswith("[cirron] cirron.session - ")]
    assert len(lines) == 1, obs.out.text
    for part in ("cuda.launches=57", "cuda.memcpy_bytes_h2d=12288", "exit_code=0",
                 '"cirron_test_kernel_a":50', '"cirron_test_kernel_b":7'):
        assert part in lines[0], lines[0]


def test_attach_counts(h, bpf):
    root = h.spool_root()
    t = start_waiting_target(h)
    obs = attach_and_wait(h, t, "--cuda-calls", "always", san=True, path=root)
    t.signal(signal.SIGUSR1)
    assert t.finish() == 0
    # The observer notices the exit by itself and ends with the session.
    assert obs.finish() == 0, obs.err.text
    assert_no_sanitizer_report(obs.err.text)
    assert "warning" not in obs.err.text, obs.err.text
    assert f"pid {t.pid}: session" in obs.err.text and "ended (exit)" in obs.err.text

    s = only_session(root)
    a = check_root(s, pid=t.pid, status="ok", end_cause="exit", attached_mid_run=True)
    assert a["exit_code"] == 0
    check_cuda_attrs(a, device_count_from(t.out.text))
    check_health(s)
    assert [m for m in s.root["marks"] if "value" not in m] == []


@pytest.mark.parametrize("mode", ["run", "attach"])
def test_cuda_detail_marks(h, bpf, mode):
    root = h.spool_root()
    if mode == "run":
        obs = h.observer("run", "--cuda-detail", "--", CUDA_CALLS, path=root)
        assert obs.finish() == 0, obs.err.text
        out = obs.out.text
    else:
        t = start_waiting_target(h)
        obs = attach_and_wait(h, t, "--cuda-detail", path=root)
        t.signal(signal.SIGUSR1)
        assert t.finish() == 0
        assert obs.finish() == 0, obs.err.text
        out = t.out.text
    assert_no_sanitizer_report(obs.err.text)

    s = only_session(root)
    r = s.root
    a = check_root(s, pid=s.batches[0]["pid"], status="ok", end_cause="exit",
                   attached_mid_run=mode == "attach")
    check_cuda_attrs(a, device_count_from(out))     # counters are kept in detail mode too
    check_health(s)
    marks = [m for m in r["marks"] if "value" not in m]     # printed values aside
    assert "marks_dropped" not in a
    # One mark per call, in the order the target made them, with kernel names and bytes.
    got = [(m["name"], {k: v for k, v in m.items() if k not in ("name", "ts_ns", "tid")})
           for m in marks]
    if got != DETAIL_SEQUENCE:
        pytest.fail(f"marks differ from the calls made: {Counter(m['name'] for m in marks)}")
    assert {m["tid"] for m in marks} == {s.batches[0]["pid"]}   # all from the main thread
    ts = [m["ts_ns"] for m in marks]
    assert ts == sorted(ts)
    slack = 1_000_000       # 1 ms: mark times are mapped from the monotonic clock
    assert r["start_ns"] - slack <= ts[0] and ts[-1] <= r["end_ns"] + slack
    # Ring-buffer events of this session: one per call, one per return of the probes with a
    # return probe (memcpy, the syncs, cudaGetDeviceCount) and the device count report.
    returns = sum(p["return_hits"] for p in s.health["probes"] if p["group"] == "cudart")
    assert s.health["events"] == len(DETAIL_SEQUENCE) + returns + 1
