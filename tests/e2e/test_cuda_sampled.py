# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--cuda-calls: sampled windows (the default) estimate the totals of a launch-bound loop
with a known count per step at a few hits per step, after an exact head (the process's first
second, or first 20000 calls): a run that ends inside the head has exact totals; off attaches
no per-call probe; the driver API (a stand-in libcuda.so.1) is counted with a runtime/driver
split, and a runtime's own driver calls are not counted twice."""
import os
import signal

import pytest

from conftest import ROOT, only_session
from test_signals import target_pid_from_log

CUDA_STEPS = ROOT / ".output" / "tests" / "cuda_steps"
DRIVER_CALLS = ROOT / ".output" / "tests" / "cuda_driver_calls"
PER_STEP = 1000
PER_CALL = ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMalloc", "cudaFree", "cudaMemcpy")


def run_steps(h, root, *args, windows=0):
    """cuda_steps under `run`, stopped once `windows` CUDA windows have closed (or at once,
    once it has stepped); returns its printed totals and the session."""
    obs = h.observer("run", "-vv", "--output", "spool,stdout", *args, "--", CUDA_STEPS,
                     PER_STEP, path=root)
    pid = target_pid_from_log(obs)
    obs.out.wait_for(r"^ready$")
    if windows:
        # windows come at least a second apart, more where linking probes is slow
        obs.err.wait_for(rf"pid {pid}: CUDA window {windows} off", timeout=40)
    os.kill(pid, signal.SIGUSR1)
    m = obs.out.wait_for(r"^steps=(\d+) launches=(\d+) rate=")
    assert obs.finish() == 0, obs.err.text      # run exits with its command's status
    return int(m.group(1)), int(m.group(2)), only_session(root)


@pytest.mark.timeout(120)
def test_sampled_estimates(h, bpf):
    root = h.spool_root()
    steps, launches, s = run_steps(h, root, windows=2)
    a = s.root["attrs"]
    # Per-call totals are estimates, named so; synchronize stays probed, exact.
    assert "cuda.launches" not in a and "cuda.kernels" not in a, a
    assert a["cuda.sync_calls"] == steps
    sampled = a["cuda.sampled"]
    assert sampled["windows"] >= 2 and sampled["scaled_by"] == "calls", sampled
    assert 0 < sampled["window_ns"] < sampled["span_ns"]
    est = a["cuda.launches_est"]
    assert abs(est - launches) <= 0.2 * launches, (est, launches, sampled)
    assert abs(a["cuda.kernels_est"]["cirron_step_kernel"] - est) <= 1
    assert abs(a["cuda.memcpy_calls_est"] - steps) <= 0.2 * steps, (a, steps)
    assert abs(a["cuda.memcpy_bytes_h2d_est"] - 256 * steps) <= 0.2 * 256 * steps
    # The point of sampling: O(10) hits per step at 1000 launches per step (always: 1002).
    hits = s.health["uprobe_hits"]
    assert hits / steps < 100, (hits, steps)
    assert s.health["cuda_windows"] == sampled["windows"]
    # Counted calls never exceed the probes' hits: a call is counted at its entry or not.
    launch_hits = s.probe("cudaLaunchKernel")["hits"]
    assert round(est / sampled["scale"]) <= launch_hits


def run_for(h, root, per_step, launch_ns, seconds):
    """cuda_steps at the default level, stopping by itself after `seconds`; returns its
    printed totals and the session."""
    obs = h.observer("run", "-vv", "--output", "spool", "--", CUDA_STEPS, per_step, launch_ns,
                     seconds, path=root)
    m = obs.out.wait_for(r"^steps=(\d+) launches=(\d+) rate=", timeout=60 + 2 * seconds)
    assert obs.finish() == 0, obs.err.text
    return int(m.group(1)), int(m.group(2)), only_session(root)


@pytest.mark.timeout(60)
def test_default_short_run_exact(h, bpf):
    """A 0.1 s client (10 launches, a copy and a synchronize per 1 ms step) ends inside the
    exact head: exact totals at the default level, no estimates."""
    root = h.spool_root()
    steps, launches, s = run_for(h, root, 10, 100000, 0.1)
    a = s.root["attrs"]
    assert launches == 10 * steps and steps >= 10, (steps, launches)
    assert a["cuda.launches"] == launches and a["cuda.memcpy_calls"] == steps, a
    assert a["cuda.memcpy_bytes_h2d"] == 256 * steps and a["cuda.sync_calls"] == steps
    assert a["cuda.kernels"] == {"cirron_step_kernel": launches}
    assert not any(k.endswith("_est") for k in a), a
    sampled = a["cuda.sampled"]
    assert sampled["totals"] == "exact" and sampled["windows"] == 0, sampled
    assert 0 < sampled["exact_head_ns"] <= sampled["span_ns"], sampled


@pytest.mark.timeout(120)
def test_default_long_run_estimates(h, bpf):
    """A 10 s launch-bound client: the exact head, then windows; estimates within 10% of
    what it printed, and they say how they were made."""
    root = h.spool_root()
    steps, launches, s = run_for(h, root, 1000, 0, 10)
    a = s.root["attrs"]
    assert "cuda.launches" not in a and "cuda.kernels" not in a, a
    sampled = a["cuda.sampled"]
    assert sampled["totals"] == "estimated" and sampled["windows"] >= 1, sampled
    assert sampled["estimate"] == "head + (count - head) x scale", sampled
    assert 0 < sampled["exact_head_ns"] < 1.5e9, sampled
    assert abs(a["cuda.launches_est"] - launches) <= 0.1 * launches, (a, launches)
    assert abs(a["cuda.kernels_est"]["cirron_step_kernel"] - launches) <= 0.1 * launches
    assert abs(a["cuda.memcpy_calls_est"] - steps) <= 0.1 * steps, (a, steps)
    assert a["cuda.sync_calls"] == steps


@pytest.mark.timeout(120)
def test_always_exact_and_off(h, bpf):
    root = h.spool_root()
    steps, launches, s = run_steps(h, root, "--cuda-calls", "always")
    a = s.root["attrs"]
    assert a["cuda.launches"] == launches and a["cuda.sync_calls"] == steps
    assert a["cuda.kernels"] == {"cirron_step_kernel": launches}
    assert not any(k.endswith("_est") for k in a) and "cuda.sampled" not in a

    root = h.spool_root()
    steps, launches, s = run_steps(h, root, "--cuda-calls", "off")
    a = s.root["attrs"]
    assert a["cuda.sync_calls"] == steps
    assert not any(k.startswith("cuda.launches") for k in a), a
    syms = {p["symbol"] for p in s.health["probes"]}
    assert not syms & set(PER_CALL), syms
    assert s.health["probes_failed"] == 0


def test_cuda_detail_needs_always(h, built):
    rc, _, err = h.run_to_end([ROOT / "cirron-probe", "run", "--cuda-detail",
                               "--cuda-calls", "sampled", "--", "true"])
    assert rc == 64 and "--cuda-calls always" in err, err


def test_driver_calls_counted_once(h, bpf):
    """40 cuLaunchKernel + 3 cuLaunchKernelEx + 2 cuGraphLaunch, 6 copies, 4 allocations and
    4 frees through the driver; 10 launches, 2 copies, 1 malloc, 1 free, 1 graph launch
    through a runtime that calls the driver for each (tests/targets/cuda_driver_calls.c)."""
    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "always", "--", DRIVER_CALLS, san=True, path=root)
    assert obs.finish() == 0, obs.err.text
    assert "warning" not in obs.err.text, obs.err.text
    s = only_session(root)
    a = s.root["attrs"]
    assert a["libraries"] == ["cudart", "cuda_driver"], a["libraries"]
    assert (a["cuda.launches"], a["cuda.launches_driver"]) == (53, 43), a
    assert (a["cuda.graph_launches"], a["cuda.graph_launches_driver"]) == (3, 2), a
    assert (a["cuda.memcpy_calls"], a["cuda.memcpy_calls_driver"]) == (8, 6), a
    assert a["cuda.memcpy_bytes_h2d"] == 3 * 4096 + 2 * 100
    assert a["cuda.memcpy_bytes_d2h"] == 2 * 1000 and a["cuda.memcpy_bytes_d2d"] == 512
    assert (a["cuda.malloc_calls"], a["cuda.malloc_calls_driver"]) == (5, 4), a
    assert a["cuda.malloc_bytes"] == 4 * (1 << 20) + (64 << 10)
    assert (a["cuda.free_calls"], a["cuda.free_calls_driver"]) == (5, 4), a
    # What the process holds: 4 x 1 MiB (the peak), 3 freed, then 64 KiB through the runtime,
    # freed; a free of an address never allocated gives nothing back.
    assert a["cuda.reserved_peak_bytes"] == 4 << 20, a
    assert a["cuda.reserved_bytes"] == 1 << 20, a
    assert a["cuda.free_bytes"] == (3 << 20) + (64 << 10), a
    # The driver probes saw the runtime's calls too, and left them out.
    assert s.probe("cuLaunchKernel")["hits"] == 50
    assert s.health["driver_calls_from_runtime"] == 10 + 2 + 1 + 1 + 1
    assert s.health["probes_failed"] == 0
