# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""CUDA totals at the default level: every call counted in BPF maps, exact on the session and
on every span, for the patterns a GPU training job makes (tests/workloads/cuda_patterns.py,
through the real libcudart: no GPU here, the calls fail, their probes fire): launches in
forward, backward, optimizer step and validation forwards, a copy in data_load, a rare large
cudaMalloc, a burst of 20k launches, a process with no training steps, a launch-bound C
client; --cuda-calls off attaches no per-call probe; the driver API (a stand-in libcuda.so.1)
is counted with a runtime/driver split, a runtime's own driver calls are not counted twice,
and what allocations hold is followed through their frees."""
import json
import os
import re
import signal
import subprocess

import pytest

from conftest import ROOT, only_session
from test_signals import target_pid_from_log

CUDA_STEPS = ROOT / ".output" / "tests" / "cuda_steps"
DRIVER_CALLS = ROOT / ".output" / "tests" / "cuda_driver_calls"
PATTERNS = ROOT / "tests" / "workloads" / "cuda_patterns.py"
PER_STEP = 1000
PER_CALL = ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMalloc", "cudaFree", "cudaMemcpy")


def run_steps(h, root, *args):
    """cuda_steps under `run`, stopped once it has stepped; returns its printed totals and
    the session."""
    obs = h.observer("run", "-vv", "--output", "spool,stdout", *args, "--", CUDA_STEPS,
                     PER_STEP, path=root)
    pid = target_pid_from_log(obs)
    obs.out.wait_for(r"^ready$")
    os.kill(pid, signal.SIGUSR1)
    m = obs.out.wait_for(r"^steps=(\d+) launches=(\d+) rate=")
    assert obs.finish() == 0, obs.err.text      # run exits with its command's status
    return int(m.group(1)), int(m.group(2)), only_session(root)


def run_for(h, root, per_step, launch_ns, seconds):
    """cuda_steps at the default level, stopping by itself after `seconds`; returns its
    printed totals and the session."""
    obs = h.observer("run", "-vv", "--output", "spool", "--", CUDA_STEPS, per_step, launch_ns,
                     seconds, path=root)
    m = obs.out.wait_for(r"^steps=(\d+) launches=(\d+) rate=", timeout=60 + 2 * seconds)
    assert obs.finish() == 0, obs.err.text
    return int(m.group(1)), int(m.group(2)), only_session(root)


@pytest.mark.timeout(120)
def test_default_long_run_exact(h, bpf):
    """A 3 s launch-bound client (1000 launches, a copy and a synchronize a step, as fast as
    it can: a few hundred thousand launches a second): exact totals at the default level,
    no estimate anywhere."""
    root = h.spool_root()
    steps, launches, s = run_for(h, root, 1000, 0, 3)
    a = s.root["attrs"]
    assert steps > 10 and launches == 1000 * steps, (steps, launches)
    assert a["cuda.launches"] == launches and a["cuda.memcpy_calls"] == steps, a
    assert a["cuda.memcpy_bytes_h2d"] == 256 * steps and a["cuda.sync_calls"] == steps
    assert a["cuda.kernels"] == {"cirron_step_kernel": launches}
    assert not any(k.endswith("_est") for k in a) and "cuda.sampled" not in a, a
    # one hit per call: the launches, the copies, each synchronize's entry and return
    assert s.probe("cudaLaunchKernel")["hits"] == launches
    assert s.health["ringbuf_drops"] == 0


@pytest.mark.timeout(120)
def test_off_and_sampled_retired(h, bpf):
    root = h.spool_root()
    steps, launches, s = run_steps(h, root, "--cuda-calls", "off")
    a = s.root["attrs"]
    assert a["cuda.sync_calls"] == steps
    assert not any(k.startswith("cuda.launches") for k in a), a
    syms = {p["symbol"] for p in s.health["probes"]}
    assert not syms & set(PER_CALL), syms
    assert s.health["probes_failed"] == 0

    # the retired level still starts (a fleet's unit may name it), counting every call
    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "sampled", "--output", "spool", "--", CUDA_STEPS,
                     10, 0, 0.2, path=root)
    m = obs.out.wait_for(r"^steps=(\d+) launches=(\d+) rate=")
    assert obs.finish() == 0, obs.err.text
    assert "--cuda-calls sampled is retired" in obs.err.text, obs.err.text
    assert only_session(root).root["attrs"]["cuda.launches"] == int(m.group(2))


def test_cuda_detail_needs_calls(h, built):
    rc, _, err = h.run_to_end([ROOT / "cirron-probe", "run", "--cuda-detail",
                               "--cuda-calls", "off", "--", "true"])
    assert rc == 64 and "--cuda-calls always" in err, err


def children(s, span, name):
    return [c for c in s.spans.values() if c["parent_id"] == span["span_id"] and c["name"] == name]


def count(sp, key):
    return sp["attrs"].get(f"cuda.{key}", 0)


@pytest.fixture(params=["host", "venv"])
def python(request, bpf):
    if request.param == "host":
        return "/usr/bin/python3"
    return str(request.getfixturevalue("venv") / "bin" / "python")


@pytest.mark.timeout(180)
def test_patterns_on_their_spans(h, python, tmp_path):
    """Every pattern lands exactly on the span it was made in, at the default level, and
    every step says how many launches each kernel made in it."""
    root, expect = h.spool_root(), tmp_path / "expect.json"
    obs = h.observer("run", "--output", "spool", "--", python, PATTERNS, "--burst", "20000",
                     "--expect", expect, path=root)
    assert obs.finish(150) == 0, obs.err.text
    e = json.loads(expect.read_text())
    s = only_session(root)
    a = s.root["attrs"]
    assert a["cuda.launches"] == e["launches"] and a["cuda.memcpy_calls"] == e["memcpy"], a
    assert a["cuda.memcpy_bytes_h2d"] == e["memcpy"] * e["copy"]
    assert a["cuda.malloc_calls"] == 1 and a["cuda.malloc_bytes"] == 1 << 30, a
    assert a["cuda.sync_calls"] == e["sync"] and "cuda.reserved_bytes" not in a, a
    steps = sorted((x for x in s.spans.values() if x["name"] == "step"),
                   key=lambda x: x["start_ns"])
    assert len(steps) == e["steps"]
    for st in steps:
        i = st["index"]
        fwd = e["fwd"] + (e["burst"] if i == 1 else 0)
        (dl,) = children(s, st, "data_load")
        (f,) = children(s, st, "forward")
        (b,) = children(s, st, "backward")
        (o,) = children(s, st, "optimizer_step")
        assert (count(dl, "memcpy_calls"), count(dl, "memcpy_bytes_h2d")) == (1, e["copy"]), dl
        assert count(dl, "launches") == 0, dl
        assert count(f, "launches") == fwd, (i, f["attrs"])
        assert count(b, "launches") == e["bwd"], (i, b["attrs"])
        assert count(b, "malloc_calls") == (1 if i == e["big_malloc_step"] else 0), b["attrs"]
        assert (count(o, "launches"), count(o, "sync_calls")) == (e["opt"], 1), o["attrs"]
        assert count(st, "launches") == fwd + e["bwd"] + e["opt"], (i, st["attrs"])
        assert count(st, "malloc_bytes") == (1 << 30 if i == e["big_malloc_step"] else 0)
        # each step's launches per kernel, exact: the three phases' kernels, by name
        assert st["attrs"]["cuda.kernels"] == {"cudaGetDeviceCount": fwd,
                                               "cudaGetLastError": e["bwd"],
                                               "cudaPeekAtLastError": e["opt"]}, st["attrs"]
        assert st["attrs"]["cuda.kernels_count"] == 3, st["attrs"]
    evals = [x for x in s.spans.values() if x["name"] == "forward"
             and x["attrs"].get("mode") == "eval"]
    assert len(evals) == 2 * 2 and all(count(x, "launches") == e["fwd"] for x in evals), evals
    # nothing was counted twice or lost between the spans: steps and validation make it all
    assert sum(count(x, "launches") for x in steps + evals) == a["cuda.launches"]
    assert s.probe("cudaLaunchKernel")["hits"] == e["launches"]
    assert "cuda.kernels_unsplit" not in a, a
    assert sum(a["cuda.kernels"].values()) == a["cuda.launches"], a["cuda.kernels"]


@pytest.mark.timeout(120)
def test_process_without_steps(h, bpf, tmp_path):
    """torch imported, no training: the session's totals are exact all the same."""
    root, expect = h.spool_root(), tmp_path / "expect.json"
    obs = h.observer("run", "--output", "spool", "--", "/usr/bin/python3", PATTERNS,
                     "--no-steps", "5000", "--expect", expect, path=root)
    assert obs.finish(100) == 0, obs.err.text
    e = json.loads(expect.read_text())
    s = only_session(root)
    a = s.root["attrs"]
    assert (a["cuda.launches"], a["cuda.memcpy_calls"]) == (e["launches"], e["memcpy"]), a
    assert not [x for x in s.spans.values() if x["name"] == "step"]


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
    assert a["cuda.graphs"] == {"graph 0x3000": 2, "graph 0x5000": 1}, a   # by executable graph
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
    # The driver probes saw the runtime's calls too, and left them out, but for launches: those
    # count at the driver (one trap each), the runtime's launch probe being out.
    assert s.probe("cuLaunchKernel")["hits"] == 50
    assert not [p for p in s.health["probes"] if p["symbol"] == "cudaLaunchKernel"], \
        s.health["probes"]
    assert s.health["driver_calls_from_runtime"] == 2 + 1 + 1 + 1
    assert s.health["probes_failed"] == 0


def test_nccl_collectives_counted(h, bpf):
    """Seven kinds of collective through a stand-in libnccl.so.2 (tests/targets/nccl_calls.c):
    counted in calls and bytes (elements x the ncclDataType_t's size), each also a span."""
    root = h.spool_root()
    obs = h.observer("run", "--", ROOT / ".output" / "tests" / "nccl_calls", san=True, path=root)
    assert obs.finish() == 0, obs.err.text
    s = only_session(root)
    a = s.root["attrs"]
    assert a["libraries"] == ["nccl"], a["libraries"]
    assert a["cuda.nccl_calls"] == 9, a
    assert a["cuda.nccl_bytes"] == 3 * 4000 + 1024 + 512 + 800 + 40 + 7 + 7, a
    names = sorted(x["name"] for x in s.spans.values() if x["name"].startswith("nccl."))
    assert names == sorted(["nccl.all_reduce"] * 3 + ["nccl.reduce_scatter", "nccl.all_gather",
                                                      "nccl.broadcast", "nccl.reduce",
                                                      "nccl.send", "nccl.recv"]), names
    # off leaves them counted: they are not per-call CUDA probes
    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "off", "--", ROOT / ".output" / "tests" /
                     "nccl_calls", path=root)
    assert obs.finish() == 0, obs.err.text
    assert only_session(root).root["attrs"]["cuda.nccl_calls"] == 9


KERNELS = {"kernel_a(float*)": 5, "kernel_b(int, int)": 3, "driver_kernel()": 4,
           "lib_kernel(float)": 2}


def test_kernels_named(h, bpf):
    """Launches counted under their kernels' demangled names, learnt from the calls that make
    what a launch passes (tests/targets/cuda_driver_calls.c --names): runtime launches by
    CUDA 13 kernel handle (__cudaRegisterFunction, __cudaGetKernel), driver launches by a
    module's CUfunction (cuModuleGetFunction) and a library kernel's (cuLibraryGetKernel,
    cuKernelGetFunction); trace names the top kernels."""
    root = h.spool_root()
    obs = h.observer("run", "--", DRIVER_CALLS, "--names", san=True, path=root)
    assert obs.finish() == 0, obs.err.text
    a = only_session(root).root["attrs"]
    assert a["cuda.kernels"] == KERNELS, a["cuda.kernels"]
    assert a["cuda.launches"] == 14 and a["cuda.launches_driver"] == 6, a
    out = subprocess.run([str(ROOT / "cirron-probe"), "trace", str(root)], capture_output=True,
                         text=True, timeout=60).stdout
    assert re.search(r"^kernels: 4 kernels, 14 launches, all named; top: kernel_a\(float\*\) 5, "
                     r"driver_kernel\(\) 4, kernel_b\(int, int\) 3, lib_kernel\(float\) 2$",
                     out, re.M), out
    # the report's table, most launched first; Perfetto's session slice carries them
    html = h.tmp / "report.html"
    subprocess.run([str(ROOT / "cirron-probe"), "report", str(root), "-o", str(html)],
                   check=True, timeout=60)
    rows = re.findall(r"<tr><td>([^<]*)</td><td>(\d+)</td><td>[\d.]+%</td></tr>",
                      html.read_text())
    assert rows == [("kernel_a(float*)", "5"), ("driver_kernel()", "4"),
                    ("kernel_b(int, int)", "3"), ("lib_kernel(float)", "2")], rows
    pf = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--format", "perfetto", str(root)],
                        capture_output=True, text=True, timeout=60, check=True).stdout
    events = json.loads(pf)
    events = events["traceEvents"] if isinstance(events, dict) else events
    (sess,) = [e for e in events if e.get("name") == "cirron.session" and e.get("ph") == "X"]
    assert sess["args"]["cuda.kernels"] == KERNELS, sess["args"]


def test_kernels_named_in_detail_marks(h, bpf):
    """--cuda-detail's mark of each launch names its kernel as cuda.kernels does."""
    root = h.spool_root()
    obs = h.observer("run", "--cuda-detail", "--", DRIVER_CALLS, "--names", path=root)
    assert obs.finish() == 0, obs.err.text
    s = only_session(root)
    launched = {}
    for m in s.root["marks"]:
        if "kernel" in m:
            launched[m["kernel"]] = launched.get(m["kernel"], 0) + 1
    assert launched == KERNELS, launched


def test_kernels_named_attached(h, bpf):
    """Attached after the kernels were registered and a CUfunction made: a handle made after
    the attach is named by its host stub's symbol; a CUfunction made before says so."""
    root = h.spool_root()
    t = h.start([DRIVER_CALLS, "--names", "--wait"])
    t.out.wait_for(r"^ready$")
    obs = h.observer("attach", "-v", "-p", t.pid, san=True, path=root)
    obs.err.wait_for(rf"attached \d+ probes to process {t.pid}$")
    t.signal(signal.SIGUSR1)
    assert t.finish() == 0 and obs.finish() == 0, obs.err.text
    k = only_session(root).root["attrs"]["cuda.kernels"]
    unnamed = [n for n in k if n.endswith(" (unnamed: made before attach)")]
    assert len(unnamed) == 1 and k[unnamed[0]] == 4, k
    assert (k["stub_a"], k["stub_b"], k["lib_kernel(float)"]) == (5, 3, 2), k
