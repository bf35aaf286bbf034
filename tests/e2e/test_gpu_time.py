# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""GPU time on spans, the whole path without a GPU, under real BPF: the CUPTI companion
(libcirron_cupti.so) injected by `run` (CUDA_INJECTION64_PATH) into a torch loop whose CUDA
work runs on the stand-in driver's fake GPU, with a stand-in libcupti that keeps CUPTI's
documented behaviour and record layouts (tests/workloads/gpu_standin.py): the uprobe's USDT
semaphore turns CUPTI on, batches come, records are joined to their calls and placed on the
spans, and the detach turns CUPTI off and gives it back. Each span is held against what the
fake GPU logged it ran. Without the companion, a bound; with another CUPTI subscriber first,
the companion stands aside and says so; a CPU job with the companion in its environment runs
as without it."""
import os
import re
import signal
import time
from pathlib import Path

import pytest

from conftest import ROOT, only_session
from test_signals import target_pid_from_log

WORKLOAD = ROOT / "tests" / "workloads" / "gpu_standin.py"
COMPANION = ROOT / ".output" / "libcirron_cupti.so"
PY = "/usr/bin/python3"
GPU_US = 200


def wall_minus_mono():
    return time.time_ns() - time.monotonic_ns()


def gpu_log(path):
    """What the fake GPU ran: (kind, launch, start, end, name), CLOCK_MONOTONIC ns."""
    out = []
    for line in Path(path).read_text().splitlines():
        kind, launch, start, end, name = line.split(" ", 4)
        out.append((kind, int(launch), int(start), int(end), name))
    return out


def truth(log, span, offset):
    """The union and the extent of the work launched while span was open."""
    t0, t1 = span["start_ns"] - offset, span["end_ns"] - offset
    iv = sorted((s, e) for _, launch, s, e, _ in log if t0 <= launch < t1)
    busy, cur_s, cur_e = 0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        busy += cur_e - cur_s
    return busy, (iv[-1][1] - iv[0][0]) if iv else 0, len(iv)


def spans_named(s, name):
    return sorted((x for x in s.spans.values() if x["name"] == name), key=lambda x: x["start_ns"])


@pytest.mark.timeout(180)
def test_gpu_time_from_the_start(h, bpf, tmp_path):
    """`run` injects the companion; every step and phase gets the GPU time of the work it
    launched, exact against what the fake GPU ran (the copy in data_load, runtime launches in
    forward and the optimizer step, driver launches in backward), its coverage, its busy
    share, and a step its kernels by GPU time; a span that launched nothing gets nothing."""
    root, log = h.spool_root(), tmp_path / "gpu.log"
    off = wall_minus_mono()
    obs = h.observer("run", "-v", "--", PY, WORKLOAD, "--gpu-us", GPU_US, "--gpu-log", log,
                     san=True, path=root)
    assert obs.finish(150) == 0, obs.err.text
    assert "GPU time from its CUPTI companion" in obs.err.text, obs.err.text
    s = only_session(root)
    work = gpu_log(log)
    assert len(work) == 16 * (3 + 4 + 2 + 1), len(work)
    assert s.health["gpu_companion"] == "active", s.health
    assert s.health["gpu_records_unplaced"] == 0 and s.health["gpu_calls_without_records"] == 0
    assert s.probe("cirron_gpu_batch")["attached"], s.health["probes"]
    steps = spans_named(s, "step")
    assert len(steps) == 16
    # the companion switches on within ms of its load; what ran before that is not seen, so
    # the first step may be partly covered (or bounded), never the others
    first_end = steps[0]["end_ns"]
    for name in ("step", "data_load", "forward", "backward", "optimizer_step"):
        for sp in spans_named(s, name):
            a = sp["attrs"]
            if sp["start_ns"] < first_end:
                assert a.get("gpu_time_source") in ("cupti", "launch_to_sync") or \
                    a.get("gpu_time_coverage") == 0, a
                continue
            busy, extent, n = truth(work, sp, off)
            if not n:       # a loop's last __next__ (exhausted): nothing launched
                assert not any(k.startswith("gpu_") for k in a), (name, a)
                continue
            assert a["gpu_time_source"] == "cupti" and a["gpu_time_coverage"] == 1, (name, a)
            # the clock mapping's error is a few us at most (health's gpu_clock_error_ns)
            tol = 2 * s.health["gpu_clock_error_ns"] + 2000
            assert abs(a["gpu_busy_ns"] - busy) <= tol, (name, a["gpu_busy_ns"], busy)
            assert abs(a["gpu_ns"] - extent) <= tol, (name, a["gpu_ns"], extent)
            assert a["gpu_ns"] >= a["gpu_busy_ns"], a
    for st in steps[1:]:
        a = st["attrs"]
        assert 0 < a["gpu_busy_share"] <= 1, a
        k = a["gpu_kernels"]
        assert set(k) == {"bwd_gemm(float*)", "fwd_gemm(float*, float*)", "adam()", "memcpy"}, k
        assert abs(k["bwd_gemm(float*)"] - 4 * GPU_US * 1000) <= 8000, k
    for sp in spans_named(s, "zero_grad"):
        assert not any(x.startswith("gpu_") for x in sp["attrs"]), sp["attrs"]
    root_a = s.root["attrs"]
    assert root_a["gpu_time_source"] == "cupti" and 0 < root_a["gpu_busy_share"] < 1, root_a
    total = sum(e - st for _, _, st, e, _ in work)     # one GPU, in order: no overlap
    assert 0.85 * total <= root_a["gpu_busy_ns"] <= total + 64 * 1000, (root_a, total)
    # one trap per runtime launch: the runtime's launch probes went once the driver's were in
    assert s.health["driver_calls_from_runtime"] == 0, s.health
    assert root_a["cuda.launches"] == 16 * 9, root_a


@pytest.mark.timeout(180)
def test_bound_without_the_companion(h, bpf, tmp_path):
    """A job without the companion: spans that launched carry gpu_ns_upper, labelled a bound
    (launch_to_sync), never below what ran; nothing reads as measured."""
    root, log = h.spool_root(), tmp_path / "gpu.log"
    off = wall_minus_mono()
    env = dict(os.environ, CIRRON_GPU_COMPANION="off")
    obs = h.observer("run", "--", PY, WORKLOAD, "--gpu-us", GPU_US, "--gpu-log", log,
                     path=root, env=env)
    assert obs.finish(150) == 0, obs.err.text
    s = only_session(root)
    work = gpu_log(log)
    assert "gpu_companion" not in s.health
    bounded = 0
    for name in ("step", "forward", "backward", "optimizer_step"):
        for sp in spans_named(s, name):
            a = sp["attrs"]
            assert "gpu_busy_ns" not in a and "gpu_ns" not in a, a
            if not a.get("cuda.launches"):      # nothing counted on it: nothing to bound
                assert not any(k.startswith("gpu_") for k in a), (name, a)
                continue
            _, extent, n = truth(work, sp, off)
            assert a.get("gpu_time_source") == "launch_to_sync", (name, a)
            assert a["gpu_ns_upper"] >= extent, (name, a["gpu_ns_upper"], extent)
            bounded += 1
    assert bounded >= 16 * 3, bounded


@pytest.mark.timeout(180)
def test_attach_turns_cupti_on_and_detach_off(h, bpf, tmp_path):
    """A job started with the companion (as a fleet's job template sets it) runs dormant; an
    attach raises its semaphore and records flow onto the spans of the attach; at the detach
    the semaphore drops, CUPTI is given back, and a profiler can subscribe again."""
    root, log = h.spool_root(), tmp_path / "gpu.log"
    env = dict(os.environ, CUDA_INJECTION64_PATH=str(COMPANION))
    t = h.start([PY, WORKLOAD, "--wait", "--gpu-us", GPU_US, "--gpu-log", log], env=env)
    t.out.wait_for(r"^ready$")
    maps = Path(f"/proc/{t.pid}/maps").read_text()
    assert str(COMPANION) in maps, "the driver loaded the companion at cuInit"
    obs = h.observer("attach", "-v", "-p", t.pid, "--duration", "6", san=True, path=root)
    obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
    t.signal(signal.SIGUSR1)
    obs.err.wait_for(r"GPU time from its CUPTI companion")
    assert obs.finish(60) == 0, obs.err.text
    t.signal(signal.SIGUSR2)
    m = t.out.wait_for(r"^gate (\d+) subscribed_after (\d+)$", timeout=60)
    assert m.group(1) == "0" and m.group(2) == "1", t.out.text
    assert t.finish() == 0
    s = only_session(root)
    assert s.health["gpu_companion"] == "active", s.health
    timed = [x for x in spans_named(s, "step") if x["status"] == "ok"]
    assert len(timed) >= 3, len(timed)
    # every step but the first (under way at the attach) and those that closed in the last
    # companion rounds before the detach (their records had not come yet: the final batch
    # writes what there is, its coverage said)
    last = timed[-1]["end_ns"]
    inner = [x for x in timed[1:] if x["end_ns"] < last - 500_000_000]
    assert len(inner) >= 3, len(inner)
    for x in inner:
        a = x["attrs"]
        assert a["gpu_time_coverage"] == 1 and a["gpu_busy_ns"] >= 9 * GPU_US * 1000, a
    for x in timed:
        a = x["attrs"]
        assert "gpu_busy_ns" not in a or a["gpu_busy_ns"] > 0, a
        assert a.get("gpu_time_source") in ("cupti", "launch_to_sync") or \
            a.get("gpu_time_coverage") == 0, a


@pytest.mark.timeout(120)
def test_stands_aside_for_another_subscriber(h, bpf, tmp_path):
    """CUPTI already held (a profiler subscribed first): the companion stands aside and says
    so; spans fall back to the bound."""
    root = h.spool_root()
    obs = h.observer("run", "--", PY, WORKLOAD, "--hold-cupti", "--gpu-us", GPU_US, path=root)
    assert obs.finish(100) == 0, obs.err.text
    s = only_session(root)
    assert s.health["gpu_companion"] == "stood aside: another CUPTI subscriber", s.health
    steps = spans_named(s, "step")
    assert steps and all(x["attrs"].get("gpu_time_source") == "launch_to_sync" for x in steps)
    assert all("another CUPTI subscriber" in x["attrs"]["gpu_time_note"] for x in steps)


CPU_JOB = """
import os, torch
x = torch.randn(64, 8); y = torch.randn(64, 1)
m = torch.nn.Linear(8, 1); opt = torch.optim.SGD(m.parameters(), lr=0.1)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)
for epoch in range(2):
    for a, b in data:
        opt.zero_grad(); torch.nn.functional.mse_loss(m(a), b).backward(); opt.step()
mapped = "libcirron_cupti" in open("/proc/self/maps").read()
print("env", os.environ.get("CUDA_INJECTION64_PATH", "-"), "mapped", mapped, flush=True)
"""


@pytest.mark.timeout(180)
def test_cpu_job_with_the_companion_as_without(h, bpf, tmp_path):
    """A CPU torch job under `run` gets the companion in its environment, never loads it (no
    cuInit), and its tree is the same as with the companion off."""
    job = tmp_path / "cpu_job.py"
    job.write_text(CPU_JOB)
    trees = {}
    for mode in ("on", "off"):
        root = h.spool_root()
        env = dict(os.environ, **({"CIRRON_GPU_COMPANION": "off"} if mode == "off" else {}))
        obs = h.observer("run", "--", PY, job, path=root, env=env)
        assert obs.finish(150) == 0, obs.err.text
        m = re.search(r"^env (\S+) mapped (\w+)$", obs.out.text, re.M)
        assert m, obs.out.text
        if mode == "on":
            assert m.group(1) == str(COMPANION) and m.group(2) == "False", m.group(0)
        else:
            assert m.group(1) == "-", m.group(0)
        s = only_session(root)
        trees[mode] = sorted((x["name"], x.get("index")) for x in s.spans.values())
        assert not any(k.startswith("gpu_") for x in s.spans.values() for k in x["attrs"])
        assert "gpu_companion" not in s.health
    assert trees["on"] == trees["off"]
