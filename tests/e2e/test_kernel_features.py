# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Kernel features (user/attach/kernel_features.c) on this machine's kernel: the path chosen per
feature in doctor and health, the fallbacks for older kernels taken on purpose
(CIRRON_KERNEL_WITHOUT=cookie,find_vma: probe ids from a (pid, address) map, returns by
stack pointer, watch finding ld.so from /proc) with the same exact results, and the refusal
below the minimum (exit 9, one line naming the feature). The older kernels themselves boot
in the kernel matrix (tests/kernels, make test-kernels)."""
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import (BIN, CUDA_CALLS, SAN, assert_no_sanitizer_report, only_session, read_spool,
                      san_env)
from cuda_expect import check_cuda_attrs, check_health, check_root, device_count_from
from test_errors import one_error_line
from test_torch_tree import HOST_PYTHON, TRAIN, STEP, check_steps, check_well_formed, children, named
from test_watch import host_torch, start_watch, stop_watch  # noqa: F401

EXIT_KERNEL_UNSUPPORTED = 9
FALLBACKS = {"CIRRON_KERNEL_WITHOUT": "cookie,find_vma"}
# perf links, one per probe, with cookies (Linux 5.15 to 6.5)
PERF_LINKS = {"CIRRON_KERNEL_WITHOUT": "uprobe_multi"}


def test_exit_code_matches_header():
    header = (Path(__file__).resolve().parents[2] / "user" / "common" / "exit_codes.h").read_text()
    assert f"EXIT_KERNEL_UNSUPPORTED = {EXIT_KERNEL_UNSUPPORTED}," in header


@pytest.mark.parametrize("feature, needle", [("btf", "kernel BTF"),
                                             ("ringbuf", "BPF ring buffer")])
def test_below_the_minimum_one_line_and_exit_9(h, bpf, tmp_path, feature, needle):
    marker = tmp_path / "ran"
    rc, out, err = h.run_to_end([SAN, "run", "--", "touch", marker],
                                env=dict(san_env(), CIRRON_KERNEL_WITHOUT=feature))
    assert rc == EXIT_KERNEL_UNSUPPORTED, err
    one_error_line(err, needle, "lacks")
    assert not marker.exists(), "the command must not start when nothing can be observed"


def kernel_lines(text):
    return [l.strip() for l in text.splitlines()
            if l.strip().startswith(("probe ids:", "uprobe links:",
                                     "watch finds dynamic linkers:"))]


def test_doctor_says_which_path_and_why(h, bpf):
    rc, out, err = h.run_to_end([BIN, "doctor", "-p", str(os.getpid())])
    assert rc in (0, 4), err      # 4: pytest maps no library probes/ knows
    assert kernel_lines(out) == ["probe ids: attach cookies (bpf_get_attach_cookie)",
                                 "uprobe links: uprobe_multi (one per file and batch)",
                                 "watch finds dynamic linkers: in BPF at exec (bpf_find_vma)"], out
    rc, out, err = h.run_to_end([BIN, "doctor", "-p", str(os.getpid())],
                                env=dict(os.environ, **FALLBACKS))
    assert kernel_lines(out) == [
        "probe ids: probed-address map (no bpf_get_attach_cookie: turned off by "
        "CIRRON_KERNEL_WITHOUT)",
        "uprobe links: one perf link per probe (no uprobe_multi: needs attach cookies)",
        "watch finds dynamic linkers: from /proc at each new executable (no bpf_find_vma: "
        "turned off by CIRRON_KERNEL_WITHOUT)"], out


@pytest.mark.parametrize("fallbacks", [None, "perf", "all"], ids=["cookies", "perf_links",
                                                                  "fallbacks"])
@pytest.mark.parametrize("mode", ["run", "attach"])
def test_cuda_counts_exact_either_way(h, bpf, mode, fallbacks):
    """Every CUDA probe's entry and return hits, bytes and launches per kernel: the same with
    probe ids from the address map as with cookies, and with one perf link per probe as with
    uprobe_multi links."""
    root = h.spool_root()
    env = dict(san_env(), **{None: {}, "perf": PERF_LINKS, "all": FALLBACKS}[fallbacks])
    if mode == "run":
        obs = h.observer("run", "--cuda-calls", "always", "--", CUDA_CALLS, san=True, path=root,
                         env=env)
        assert obs.finish() == 0, obs.err.text
        out = obs.out
    else:
        t = h.start([CUDA_CALLS, "--wait"])
        t.out.wait_for(r"^ready$")
        obs = h.observer("attach", "-v", "--cuda-calls", "always", "-p", t.pid, san=True,
                         path=root, env=env)
        obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
        t.signal(signal.SIGUSR1)
        assert t.finish() == 0
        assert obs.finish() == 0, obs.err.text
        out = t.out
    assert_no_sanitizer_report(obs.err.text)
    s = only_session(root)
    pid = s.batches[0]["pid"]
    a = check_root(s, pid=pid, status="ok", end_cause="exit", attached_mid_run=mode == "attach")
    check_cuda_attrs(a, device_count_from(out.text))
    check_health(s)
    k = s.health["kernel"]
    assert k["release"] == os.uname().release
    if fallbacks == "all":
        assert (k["probe_ids"], k["uprobe_links"], k["ldso_discovery"]) == \
            ("address_map", "perf", "procfs"), k
        assert "CIRRON_KERNEL_WITHOUT" in k["reason"], k
    else:
        assert (k["probe_ids"], k["ldso_discovery"]) == ("cookie", "bpf_find_vma"), k
        assert k["uprobe_links"] == ("perf" if fallbacks else "uprobe_multi"), k


@pytest.mark.timeout(240)
def test_fallback_python_frames_always(h, host_torch):
    """The Python tier's nested calls (every module call's entry and return) paired by stack
    pointer instead of cookie: exact forwards as with cookies."""
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--python-frames", "always", "--", HOST_PYTHON,
                   TRAIN, "--epochs", "1", "--batches", "4", path=root,
                   env=dict(os.environ, **FALLBACKS))
    assert p.finish(180) == 0, p.err.text
    s = only_session(root)
    check_well_formed(s)
    check_steps(s, 4, STEP)
    for st in named(s, "step"):
        (fwd,) = children(s, st, "forward")
        assert "timing" not in fwd["attrs"] and fwd["attrs"]["module"] == "Sequential"
    probe = [x for x in s.health["probes"] if x["symbol"].startswith("slot_tp_call")]
    assert len(probe) == 1 and probe[0]["return_hits"] == probe[0]["hits"] >= 4 * 5, probe
    assert s.health["kernel"]["probe_ids"] == "address_map"


@pytest.mark.timeout(300)
def test_fallback_watch_finds_a_job_started_later(h, host_torch):
    """No bpf_find_vma, no cookies: the agent learns of the job's executable at exec, finds
    its ld.so in /proc, probes it in every process, and traces the job from its start."""
    root = h.spool_root()
    # a script name of its own, so that other torch jobs on the node are let be (--match)
    script = h.tmp / f"train_{os.getpid()}_{time.monotonic_ns()}.py"
    shutil.copy(TRAIN, script)
    os.environ.update(FALLBACKS)    # start_watch passes the environment on
    try:
        w = start_watch(h, root, "--match", script.name)
    finally:
        for k in FALLBACKS:
            del os.environ[k]
    # steps of 50 ms: the agent attaches while it trains, however busy the machine
    job = h.start([HOST_PYTHON, script, "--epochs", "1", "--batches", "60", "--step-sleep", "50"])
    assert job.finish(240) == 0, job.err.text[-2000:]
    w.err.wait_for(rf"pid {job.pid}: session .* ended \(exit\)", timeout=60)
    m = stop_watch(w)
    assert m, w.err.text[-2000:]
    (s,) = [x for x in read_spool(root).values() if x.root["attrs"]["pid"] == job.pid]
    a = s.root["attrs"]
    assert (a["attached_mid_run"], a["end_cause"], a["exit_code"]) == (False, "exit", 0), a
    check_well_formed(s)
    assert len(named(s, "step")) >= 10
    assert s.health["kernel"]["ldso_discovery"] == "procfs"
