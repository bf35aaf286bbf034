# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Targets that change under the observer: threads coming and going, a process replacing
its image with exec, under `run` and `attach`. Counts stay exact; sessions end cleanly."""
import signal

from conftest import CALLS, CUDA_CALLS, EXPECTED_HITS, only_session, read_spool
from cuda_expect import N_LAUNCH, N_MEMCPY, check_cuda_attrs, device_count_from
from test_cuda import attach_and_wait


def probe_hits(s):
    return {p["symbol"]: (p["hits"], p["return_hits"]) for p in s.health["probes"]
            if p["group"] == "cudart" and p["symbol"] in EXPECTED_HITS}


def test_threads_coming_and_going(h, bpf):
    """3 waves of 4 threads, each thread making every call once, joined after each wave:
    13 passes, every call counted, uprobes in place for threads born after the attach."""
    root = h.spool_root()
    p = h.observer("run", "--cuda-calls", "always", "--", CUDA_CALLS, "--threads", "4", "--waves", "3", san=True,
                   path=root)
    assert p.finish(60) == 0, p.err.text
    s = only_session(root)
    passes = 1 + 4 * 3
    for sym, (hits, ret_hits) in probe_hits(s).items():
        want = EXPECTED_HITS[sym]
        assert (hits, ret_hits) == (want[0] * passes, want[1] * passes), sym
    a = s.root["attrs"]
    assert a["cuda.launches"] == N_LAUNCH * passes
    assert a["cuda.memcpy_calls"] == N_MEMCPY * passes
    assert a["cuda.malloc_calls"] == CALLS["malloc"] * passes
    assert s.health["ringbuf_drops"] == 0


def test_exec_under_run_starts_a_new_session(h, bpf):
    """`run` follows an exec: the old image's session ends with end_cause=exec, the new
    image is a session of its own, each with exactly its own calls."""
    root = h.spool_root()
    p = h.observer("run", "--cuda-calls", "always", "--", CUDA_CALLS, "--exec-self", "--exit", "3", san=True, path=root)
    assert p.finish(60) == 3, p.err.text
    sessions = sorted(read_spool(root).values(), key=lambda s: s.root["start_ns"])
    assert len(sessions) == 2, [s.id for s in sessions]
    first, second = sessions
    assert first.root["attrs"]["pid"] == second.root["attrs"]["pid"]
    assert first.root["attrs"]["end_cause"] == "exec"
    assert second.root["attrs"]["end_cause"] == "exit"
    assert second.root["attrs"]["exit_code"] == 3
    for s in sessions:
        check_cuda_attrs(s.root["attrs"], s.root["attrs"]["cuda_count"])
        assert probe_hits(s) == {k: v for k, v in EXPECTED_HITS.items() if k in probe_hits(s)}


def test_exec_under_attach_ends_the_session(h, bpf):
    """`attach` follows an exec without holding the process (no watchdog would let it go if
    the observer died): the old image's session ends (end_cause=exec) with exactly the calls
    made before; the new image, traced as soon as its probes are in, may have run ahead."""
    root = h.spool_root()
    t = h.start([CUDA_CALLS, "--wait", "--exec-self", "--exit", "5"])
    t.out.wait_for(r"^ready$")
    obs = attach_and_wait(h, t, "--cuda-calls", "always", path=root)
    t.signal(signal.SIGUSR1)
    assert obs.finish(60) == 0, obs.err.text
    assert t.finish() == 5
    sessions = sorted(read_spool(root).values(), key=lambda s: s.root["start_ns"])
    first = sessions[0]
    assert first.root["attrs"]["end_cause"] == "exec"
    check_cuda_attrs(first.root["attrs"], device_count_from(t.out.text))
    assert probe_hits(first)["cudaLaunchKernel"] == EXPECTED_HITS["cudaLaunchKernel"]
    assert len(sessions) <= 2
    for later in sessions[1:]:
        assert later.root["attrs"]["pid"] == t.pid and later.id != first.id
        # none if it made its calls before its probes were in (no CUDA call seen: no totals);
        # never the old image's links firing in it (PROBE_F_IMAGE)
        assert later.root["attrs"].get("cuda.launches", 0) <= N_LAUNCH
