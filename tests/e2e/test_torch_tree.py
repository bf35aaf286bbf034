# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The training structure of real PyTorch loops (tests/workloads/train.py) under the real
observer: exact counts of epochs, steps and their children, nesting, and time containment."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (DEBIAN_TORCH, ROOT, TRIXIE_ROOT, only_session, unavailable,
                      venv_python_minor)

TRAIN = ROOT / "tests" / "workloads" / "train.py"
HOST_PYTHON = "/usr/bin/python3"      # Debian's, the one python3-torch imports under


def debian_stack():
    """(torch major, python minor) of Debian's python3 and python3-torch here, read from their
    files: bookworm's 1.13 and 3.11 on the host, trixie's 2.6 and 3.13 in the arm64 guest
    (tests/kernels). (1, 11) where they are missing: the host target is unavailable then."""
    m = re.search(r"python3\.(\d+)$", os.path.realpath(HOST_PYTHON))
    try:
        v = re.search(r"__version__ = '(\d+)\.",
                      (DEBIAN_TORCH / "torch" / "version.py").read_text())
    except OSError:
        v = None
    return (int(v.group(1)) if v else 1), (int(m.group(1)) if m else 11)


HOST_TORCH_MAJOR, HOST_PYTHON_MINOR = debian_stack()


class Target:
    """Where the training script runs: the host's Python 3.11 + torch 1.13, a Debian trixie
    root (Python 3.13 + torch 2.6) entered with chroot, the observer outside, pyenv's
    CPython 3.11.7 with Debian's torch 1.13 (PYTHONPATH), or the venv on pyenv's CPython with
    the official torch 2.13 CPU wheel."""

    def __init__(self, name, argv, torch_major, python_minor):
        self.name, self.argv = name, argv
        self.torch_major, self.python_minor = torch_major, python_minor


@pytest.fixture(params=["host", "trixie", "pyenv", "venv"])
def target(request, bpf):
    if request.param == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return Target("host", [HOST_PYTHON, str(TRAIN)], HOST_TORCH_MAJOR, HOST_PYTHON_MINOR)
    if request.param == "pyenv":    # env execs in place: the pid stays (attach tests)
        py = request.getfixturevalue("pyenv_python")
        return Target("pyenv", ["env", f"PYTHONPATH={DEBIAN_TORCH}", str(py), str(TRAIN)], 1, 11)
    if request.param == "venv":
        venv = request.getfixturevalue("venv")
        return Target("venv", [str(venv / "bin" / "python"), str(TRAIN)], 2,
                      venv_python_minor(venv))
    root = request.getfixturevalue("trixie_root")
    return Target("trixie", ["chroot", str(root), "python3", "/work/train.py"], 2, 13)


# Runs traced once per stack and arguments: tests that read the same run share it
# (test_no_mixed_precision_without_autocast, test_python_frames_off_attaches_no_cpython_probe).
RUNS = {}


def trace(h, target, *train_args, observer_args=(), timeout=180):
    key = (tuple(map(str, target.argv)), train_args, tuple(observer_args))
    if key in RUNS:
        return RUNS[key]
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", *observer_args, "--", *target.argv,
                   *train_args, path=root)
    rc = p.finish(timeout)
    assert rc == 0, f"run exited {rc}:\n{p.err.text}"
    assert "DONE" in p.out.text
    RUNS[key] = only_session(root)
    return RUNS[key]


def children(s, span, name=None):
    # by parent, indexed once per session (a scan per call made a loop over a long run's
    # steps quadratic: 50 s for 6500 steps); same spans, same order as s.spans
    index = getattr(s, "children_index", None)
    if index is None or index[0] is not s.spans or index[1] != len(s.spans):
        by_parent = {}
        for c in s.spans.values():
            by_parent.setdefault(c["parent_id"], []).append(c)
        index = s.children_index = (s.spans, len(s.spans), by_parent)
    return [c for c in index[2].get(span["span_id"], ()) if name is None or c["name"] == name]


def named(s, name):
    return sorted((x for x in s.spans.values() if x["name"] == name), key=lambda x: x["start_ns"])


def check_well_formed(s):
    for sp in s.spans.values():
        assert sp["status"] == "ok", f"{sp['name']} {sp['span_id']}: {sp['status']}"
        assert sp["end_ns"] >= sp["start_ns"]
        if sp["parent_id"] is None:
            continue
        p = s.spans[sp["parent_id"]]
        assert p["start_ns"] <= sp["start_ns"] and sp["end_ns"] <= p["end_ns"], (
            f"{sp['name']} [{sp['start_ns']},{sp['end_ns']}] outside "
            f"{p['name']} [{p['start_ns']},{p['end_ns']}]")


def check_steps(s, steps, per_step):
    """Every step has exactly these children (name -> count), forwards in mode train."""
    got = named(s, "step")
    assert len(got) == steps, [x["index"] for x in got]
    assert [x["index"] for x in got] == list(range(steps))
    for st in got:
        kids = children(s, st)
        counts = {n: sum(1 for k in kids if k["name"] == n) for n in per_step}
        assert counts == per_step, f"step {st['index']}: {counts}"
        for f in children(s, st, "forward"):
            assert f["attrs"]["mode"] == "train"
        assert s.spans[st["parent_id"]]["name"] == "epoch"


STEP = {"data_load": 1, "forward": 1, "backward": 1, "optimizer_step": 1}

# torch imports take seconds, more under the observer's first (cold cache) attach
pytestmark = pytest.mark.timeout(240)


def test_plain_loop(h, target):
    s = trace(h, target, "--epochs", "2", "--batches", "6")
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert [e["index"] for e in epochs] == [0, 1]
    check_steps(s, 12, STEP)
    for e in epochs:
        assert len(children(s, e, "step")) == 6
    for d in named(s, "data_load"):
        assert d["attrs"]["data_load_ns"] == d["end_ns"] - d["start_ns"]
    a = s.root["attrs"]
    assert a["framework"] == "torch" and int(a["torch_version"].split(".")[0]) == target.torch_major
    assert a["python_version"].startswith(f"3.{target.python_minor}.")
    assert a["device"] == "cpu" and a["cuda_count"] == 0
    assert a["attached_mid_run"] is False and a["index_origin"] == "start"
    assert a["python_frames"] == "off"


def test_gradient_accumulation(h, target):
    s = trace(h, target, "--epochs", "2", "--batches", "6", "--accumulate", "3")
    check_well_formed(s)
    assert len(named(s, "epoch")) == 2
    check_steps(s, 4, {"data_load": 3, "forward": 3, "backward": 3, "optimizer_step": 1})


def test_train_and_validation(h, target):
    s = trace(h, target, "--epochs", "2", "--batches", "4", "--val-batches", "3")
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert len(epochs) == 2, "the validation loader must not start epochs"
    check_steps(s, 8, STEP)
    for e in epochs:
        evals = [f for f in children(s, e, "forward") if f["attrs"]["mode"] == "eval"]
        assert len(evals) == 3, f"epoch {e['index']}: {len(evals)} eval forwards"


def test_generator_loop_without_dataloader(h, target):
    s = trace(h, target, "--loop", "generator", "--epochs", "2", "--batches", "6",
              observer_args=("--epoch-steps", "4"))
    check_well_formed(s)
    assert not named(s, "data_load")
    assert len(named(s, "step")) == 12
    assert [len(children(s, e, "step")) for e in named(s, "epoch")] == [4, 4, 4]
    for st in named(s, "step"):
        assert len(children(s, st, "backward")) == 1
        assert len(children(s, st, "optimizer_step")) == 1


def test_nested_user_regions(h, target):
    s = trace(h, target, "--epochs", "1", "--batches", "4", "--regions")
    check_well_formed(s)
    compute, loss = named(s, "compute"), named(s, "loss")
    assert len(compute) == 4 and len(loss) == 4
    for c, l in zip(compute, loss):
        assert l["parent_id"] == c["span_id"]
        assert s.spans[c["parent_id"]]["name"] == "step"


def test_dataloader_workers(h, target):
    s = trace(h, target, "--epochs", "2", "--batches", "6", "--workers", "2", timeout=180)
    check_well_formed(s)    # only_session: the workers made no session of their own
    assert len(named(s, "epoch")) == 2
    check_steps(s, 12, STEP)


def test_cpu_autocast_sets_mixed_precision(h, target):
    s = trace(h, target, "--epochs", "1", "--batches", "3", "--amp")
    assert s.root["attrs"]["mixed_precision"] is True
    assert s.root["attrs"]["mixed_precision_source"] == "autocast"
    check_steps(s, 3, STEP)


def test_no_mixed_precision_without_autocast(h, target):
    s = trace(h, target, "--epochs", "1", "--batches", "2")
    assert "mixed_precision" not in s.root["attrs"] or s.root["attrs"]["mixed_precision"] is False


def stop_file(h, target):
    """A path the trainer's --until-file can see: (as the test writes it, as the job reads it)."""
    if target.name == "trixie":
        host = TRIXIE_ROOT / "work" / f"stop-{os.getpid()}"
        host.unlink(missing_ok=True)
        return host, f"/work/{host.name}"
    return h.tmp / "stop", str(h.tmp / "stop")


def test_attach_five_seconds_into_training(h, target):
    """Attached five seconds in, detached once the observer printed its sixth step: the job
    trains until told to stop, so no clock decides how many steps the observer sees."""
    stop, stop_there = stop_file(h, target)
    trainer = h.start(target.argv + ["--epochs", "1", "--batches", "20",
                                     "--until-file", stop_there])
    trainer.out.wait_for("^ready$", timeout=90)
    time.sleep(5)
    root = h.spool_root()
    obs = h.observer("attach", "-p", str(trainer.pid), "--output", "spool,stdout",
                     path=root)     # chroot execs python3: the same pid
    obs.out.wait_for(r"^\[cirron\] step\[5\] ", timeout=120)
    obs.signal(signal.SIGINT)
    assert obs.finish(60) == 0, obs.err.text
    stop.touch()
    assert trainer.finish(120) == 0
    stop.unlink()
    s = only_session(root)
    assert s.root["attrs"]["attached_mid_run"] is True
    assert s.root["attrs"]["index_origin"] == "attach"
    steps = named(s, "step")
    assert len(steps) >= 6, "the observer printed a sixth step"
    assert [x["index"] for x in steps] == list(range(len(steps))), "indices count from attach"
    for sp in s.spans.values():
        if sp["parent_id"] is None or sp["status"] == "open":
            continue
        p = s.spans[sp["parent_id"]]
        assert p["start_ns"] <= sp["start_ns"]
    full = [st for st in steps if st["status"] == "ok"]
    for st in full[1:]:     # the first may be partial (attached mid-step)
        assert len(children(s, st, "backward")) == 1
        assert len(children(s, st, "optimizer_step")) == 1


def test_cuda_counters_land_on_their_spans(h, bpf):
    """Real libcudart calls from the training loop (no GPU: they fail, their probes fire): a
    4096-byte copy before each forward, a 1000-byte allocation after each backward. Host
    only: the trixie root has no CUDA runtime."""
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    host = Target("host", [HOST_PYTHON, str(TRAIN)], HOST_TORCH_MAJOR, HOST_PYTHON_MINOR)
    s = trace(h, host, "--epochs", "1", "--batches", "4",
              "--cuda-calls", observer_args=("--cuda-calls", "always"))
    check_well_formed(s)
    steps = named(s, "step")
    assert len(steps) == 4
    for st in steps:
        assert st["attrs"].get("cuda.memcpy_bytes") == 4096, st["attrs"]
        assert st["attrs"].get("cuda.malloc_bytes") == 1000, st["attrs"]
        (fwd,) = children(s, st, "forward")
        assert fwd["attrs"].get("cuda.memcpy_bytes") == 4096, fwd["attrs"]
        assert "cuda.malloc_bytes" not in fwd["attrs"]
        for name in ("data_load", "backward", "optimizer_step"):
            (sp,) = children(s, st, name)
            assert "cuda.memcpy_bytes" not in sp["attrs"], (name, sp["attrs"])
            assert "cuda.malloc_bytes" not in sp["attrs"], (name, sp["attrs"])
    a = s.root["attrs"]
    assert a["cuda.memcpy_bytes_h2d"] == 4 * 4096 and a["cuda.malloc_calls"] == 4


def test_python_frames_always_gives_exact_forwards(h, target):
    """--python-frames always: forward is the outermost module call (CPython's slot_tp_call),
    exact, named by the module's class; the loss module is not a forward."""
    s = trace(h, target, "--epochs", "2", "--batches", "4", "--val-batches", "2",
              observer_args=("--python-frames", "always"))
    check_well_formed(s)
    check_steps(s, 8, STEP)
    for st in named(s, "step"):
        (fwd,) = children(s, st, "forward")
        (data,) = children(s, st, "data_load")
        (bwd,) = children(s, st, "backward")
        assert "timing" not in fwd["attrs"], "an exact forward is not inferred"
        assert fwd["attrs"]["module"] == "Sequential" and fwd["attrs"]["mode"] == "train"
        assert data["end_ns"] <= fwd["start_ns"] and fwd["end_ns"] <= bwd["start_ns"]
    for e in named(s, "epoch"):
        evals = [f for f in children(s, e, "forward") if f["attrs"]["mode"] == "eval"]
        assert len(evals) == 2 and all("timing" not in f["attrs"] for f in evals)
    probe = [p for p in s.health["probes"] if p["symbol"].startswith("slot_tp_call")]
    assert len(probe) == 1 and probe[0]["attached"], s.health["probes"]
    # per step: the model, its 3 submodules, the loss; entry + return each
    assert probe[0]["hits"] >= 8 * 5 and probe[0]["return_hits"] == probe[0]["hits"]
    assert "cpython" in s.root["attrs"]["libraries"]
    assert s.root["attrs"]["python_frames"] == "exact"


def test_python_frames_read_module_training(h, target):
    """With Python frames, a forward's mode is the module's own `training` flag, read in BPF
    at the call (once the loader has found where the class keeps it: the calls before that
    fall back to grad mode, and say so)."""
    s = trace(h, target, "--epochs", "3", "--batches", "2", "--val-batches", "2",
              "--step-sleep", "150", observer_args=("--python-frames", "always"))
    check_well_formed(s)
    check_steps(s, 6, STEP)
    sources = []
    for e in named(s, "epoch"):
        for f in (f for st in children(s, e, "step") for f in children(s, st, "forward")):
            assert f["attrs"]["mode"] == "train"
            sources.append(f["attrs"]["mode_source"])
        evals = children(s, e, "forward")
        assert len(evals) == 2 and all(f["attrs"]["mode"] == "eval" for f in evals)
        sources += [f["attrs"]["mode_source"] for f in evals]
    assert set(sources) <= {"module.training", "grad_mode"}, sources
    # the loader reads the class within ~100 ms; the steps are 150 ms apart
    assert sources[2:] == ["module.training"] * (len(sources) - 2), sources


def test_python_frames_sampled_probes_some_steps(h, target):
    """--python-frames sampled: CPython is probed during one step in every N; those steps
    get an exact forward, the others an inferred one, and the probe is hit only while a
    window's probes are attached (health says how long: the loader's lag in closing a window
    lengthens it, which is what it costs on a busy machine, bench/step_overhead.sh's to
    measure: with this machine's 2 cores mostly taken, the windows were on for 56% of the
    steps' time once)."""
    steps = 250     # ~21 ms each: windows every 20 steps, but at most one a second
    s = trace(h, target, "--epochs", "1", "--batches", str(steps), "--step-sleep", "20",
              observer_args=("--python-frames", "sampled", "--sample-every", "20"))
    check_well_formed(s)
    check_steps(s, steps, STEP)
    exact = []
    for st in named(s, "step"):
        (fwd,) = children(s, st, "forward")
        if "timing" in fwd["attrs"]:
            assert fwd["attrs"]["timing"] == "inferred" and "module" not in fwd["attrs"]
            continue
        (data,) = children(s, st, "data_load")
        (bwd,) = children(s, st, "backward")
        assert fwd["attrs"]["module"] == "Sequential"
        assert data["end_ns"] <= fwd["start_ns"] and fwd["end_ns"] <= bwd["start_ns"]
        exact.append(st["index"])
    sampled = s.health["python_sampled_steps"]
    # one window per 20 steps (the window holds a step or two, as the loader catches up)
    assert 3 <= sampled <= steps // 20 + 1, sampled
    assert 3 <= len(exact) <= 3 * sampled, exact
    # the first sample: the step the loader sees when it has caught up after attaching
    assert exact[0] < steps // 2, exact
    (probe,) = [p for p in s.health["probes"] if p["symbol"].startswith("slot_tp_call")]
    # always: ~11 calls a step (model, 3 submodules, loss, the DataLoader's callables;
    # 1,688 hits for 10 steps, 2,128 for 50, on the host stack). Sampled: only while a
    # window's probes were attached, which health tells (how long they stay is the loader's
    # lag, longer on a busy machine: what that costs is bench/'s to measure, not a timed
    # test's); twice that rate bounds it
    shortest = min(st["end_ns"] - st["start_ns"] for st in named(s, "step"))
    on_steps = s.health["python_sampled_ms"] * 1e6 / shortest + 2 * sampled
    assert 0 < probe["hits"] <= 22 * on_steps, (probe, s.health["python_sampled_ms"])
    assert s.root["attrs"]["python_frames"] == "sampled"


def test_python_frames_off_attaches_no_cpython_probe(h, target):
    s = trace(h, target, "--epochs", "1", "--batches", "2")
    assert not [p for p in s.health["probes"] if p["symbol"].startswith("slot_tp_call")]
    assert all(f["attrs"]["timing"] == "inferred" for f in named(s, "forward"))


def hang_records(s):
    return [r for b in s.batches for r in b.get("hangs", [])]


def test_hang_reported_once_with_open_path(h, target):
    """A batch that takes 3 s to load, where loading usually takes well under a millisecond:
    one warning line and one hang record (written while it hangs) naming the open path; the
    tree is unharmed once training goes on."""
    root = h.spool_root()
    p = h.observer("run", "--hang-min", "1", "--", *target.argv, "--epochs", "1",
                   "--batches", "10", "--stall-batch", "6", "--stall-seconds", "3", path=root)
    assert p.finish(180) == 0, p.err.text
    warnings = [ln for ln in p.err.text.splitlines() if "looks hung" in ln]
    assert len(warnings) == 1, p.err.text
    assert "cirron.session > epoch[0] > data_load (usually" in warnings[0], warnings
    s = only_session(root)
    check_well_formed(s)
    check_steps(s, 10, STEP)
    (rec,) = hang_records(s)
    assert rec["name"] == "data_load" and rec["pending"] is True, rec
    assert [x["name"] for x in rec["open_path"]] == ["cirron.session", "epoch", "data_load"]
    assert rec["threshold_ns"] == 10**9 and rec["median_ns"] < 10**8, rec
    assert rec["open_ns"] >= 10**9
    (step6,) = [st for st in named(s, "step") if st["index"] == 6]
    (data,) = children(s, step6, "data_load")
    assert data["end_ns"] - data["start_ns"] >= 3 * 10**9
    # detected during the stall, from the batch's start (cJSON doubles: ~256 ns)
    assert data["start_ns"] < rec["detected_ns"] < data["end_ns"], (data, rec)
    assert abs(rec["open_path"][-1]["start_ns"] - data["start_ns"]) < 10**3


def test_hang_record_survives_target_kill(h, target):
    """Postmortem: the target is killed while it hangs; the spool alone tells where."""
    root = h.spool_root()
    p = h.observer("run", "--hang-min", "1", "--", *target.argv, "--epochs", "1",
                   "--batches", "10", "--stall-batch", "4", "--stall-seconds", "60", path=root)
    p.err.wait_for(r"looks hung", timeout=60)
    pid = int(p.err.wait_for(r"pid (\d+): rank 0: no progress").group(1))
    os.kill(pid, 9)
    assert p.finish(60) == 128 + 9, p.err.text
    s = only_session(root)
    (rec,) = hang_records(s)
    assert rec["name"] == "data_load"
    assert s.root["attrs"]["exit_signal_name"] == "KILL"
    assert [x["name"] for x in rec["open_path"]] == ["cirron.session", "epoch", "data_load"]
    # read back: the hang comes first, then the open path
    r = subprocess.run([str(ROOT / "cirron-probe"), "trace", str(root)], capture_output=True,
                       text=True, timeout=60)
    lines = r.stdout.splitlines()
    assert re.match(r"^hang: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, no progress for \S+ in "
                    r"cirron\.session > epoch\[0\] > data_load \(usually \S+\)$", lines[1]), r.stdout
    assert lines[2] == "open path:", r.stdout
    r = subprocess.run([str(ROOT / "cirron-probe"), "trace", "--format", "json", str(root)],
                       capture_output=True, text=True, timeout=60)
    assert json.loads(r.stdout)[0]["hangs"][0]["name"] == "data_load"


def test_ring_buffer_overload(h, target):
    """Step 5 floods 20000 record_function regions into a 16 KiB ring buffer: events are
    dropped and counted, the spans left open by the gap end once as incomplete, nothing is
    orphaned, and the steps after the flood are whole again."""
    root = h.spool_root()
    gate, gate_there = stop_file(h, target)
    p = h.observer("run", "--output", "spool", "--ringbuf-kb", "16", "--", *target.argv,
                   "--epochs", "1", "--batches", "12", "--burst-step", "5",
                   "--burst-regions", "20000", "--burst-gate", gate_there, "--step-sleep", "20",
                   path=root)
    # The flood overflows the ring for certain only if nothing drains it meanwhile: a fast
    # loader on an idle core keeps up with 40000 events (seen on 2 cores). The test stops its
    # own observer (never the job) from before the flood to after it.
    p.out.wait_for("burst ready")
    p.stop()
    assert p.alive(), p.err.text
    gate.touch()
    p.out.wait_for("burst done")
    p.signal(signal.SIGCONT)
    assert p.finish(180) == 0, p.err.text
    s = only_session(root)
    hl = s.health
    assert hl["ringbuf_drops"] > 0 and hl["events_lost"] == hl["ringbuf_drops"], hl
    # a span, once ended, keeps its end in every later batch (never closed twice)
    ends = {}
    for b in s.batches:
        for sp in b["spans"]:
            if sp["end_ns"] is not None:
                assert ends.setdefault(sp["span_id"], sp["end_ns"]) == sp["end_ns"], sp
    # spans open when events went missing end there as incomplete (a gap between two whole
    # regions leaves none open)
    incomplete = [x for x in s.spans.values() if x["status"] == "incomplete"]
    assert all("events_lost" in x["attrs"] for x in incomplete), incomplete[:3]
    bursts = named(s, "burst")
    assert 0 < len(bursts) < 20000
    # lost boundaries may merge the flood's step with the next ones: indices stay dense
    steps = named(s, "step")
    assert [x["index"] for x in steps] == list(range(len(steps))) and len(steps) >= 8
    assert "events_lost" in steps[5]["attrs"]
    for st in steps[:5] + steps[-3:]:    # before the flood, and again after it
        kids = children(s, st)
        counts = {n: sum(1 for k in kids if k["name"] == n) for n in STEP}
        assert counts == STEP and all(k["status"] == "ok" for k in kids), (st["index"], counts)
        assert "events_lost" not in st["attrs"]
