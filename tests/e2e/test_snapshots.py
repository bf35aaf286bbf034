# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--snapshots: each epoch's weights and gradients as they were after its last optimizer step,
read from the running job's memory without stopping it. The workloads
(tests/workloads/snapshots.py, frameworks.py --norms) print their own stats with torch right
after each epoch's last step and never wait for the observer: every epoch's record must be
`exact` (no update began before the read ended), with `after_step` the job's own step count,
and its stats equal to torch's (1e-5). Epochs of a few ms and of about a second; the model a
global, a local of main(), an attribute of a trainer object, wrapped in DDP or torch.compile,
two models (a GAN), HF Trainer, Lightning and Keras; Debian's torch 1.13, trixie's 2.6 and
the official 2.13 wheel; with --python-frames off and always. sampled/full safetensors files
open with the safetensors package and hold the job's values."""
import json
import math
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, assert_no_sanitizer_report, only_session, unavailable
from test_torch_tree import HOST_PYTHON

WORKLOAD = ROOT / "tests" / "workloads" / "snapshots.py"
FRAMEWORKS = ROOT / "tests" / "workloads" / "frameworks.py"
PARAMS = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "mix_bf16", "tview", "unused"}
# epochs of a few ms, each followed by a validation of ~25 ms: a job gives a snapshot the
# time between an epoch's last optimizer step and the next epoch's first, and a real one's
# validation or checkpoint takes longer than that (the loader is woken at that step and
# reads in ~0.3 ms, but may wait for a CPU on a loaded 2-core machine)
FAST = ("--epochs", "4", "--batches", "8", "--val-batches", "512")
SLOW = ("--epochs", "3", "--batches", "4", "--batch-sleep", "0.25")    # about a second each

pytestmark = pytest.mark.timeout(300)


class Env:
    def __init__(self, name, argv, script):
        self.name, self.argv, self.script = name, argv, script


@pytest.fixture(params=["host", "trixie", "venv"])
def env(request, bpf):
    if request.param == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return Env("host", [HOST_PYTHON], str(WORKLOAD))
    if request.param == "venv":
        venv = request.getfixturevalue("venv")
        return Env("venv", [str(venv / "bin" / "python")], str(WORKLOAD))
    root = request.getfixturevalue("trixie_root")
    return Env("trixie", ["chroot", str(root), "python3"], "/work/snapshots.py")


def spool_snapshots(root):
    out = []
    for f in sorted((root / "spool").glob("*.json")):
        out += json.loads(f.read_text()).get("snapshots", [])
    return out


class Job:
    """A finished run: the spool and what the job printed."""

    def __init__(self, root, out, err):
        self.root, self.out, self.err = root, out, err
        self.printed, self.steps = {}, {}
        for line in out.splitlines():
            if line.startswith("STATS "):
                _, epoch, model, name, js = line.split(" ", 4)
                self.printed.setdefault((int(epoch), model), {})[name] = json.loads(js)
            elif line.startswith("EPOCH_END "):
                _, epoch, _, steps = line.split()
                self.steps[int(epoch)] = int(steps)
        self.snaps = spool_snapshots(root)


def run_job(h, argv, *observer_args, san=False, env=None):
    root = h.spool_root()
    kw = {"env": env} if env else {}
    p = h.observer("run", "--output", "spool", *observer_args, "--", *argv, san=san, path=root,
                   **kw)
    rc = p.finish(280)
    assert rc == 0, f"run exited {rc}:\n{p.err.text[-3000:]}"
    assert "DONE" in p.out.text
    return Job(root, p.out.text, p.err.text)


def run(h, env, *args, observer=()):
    return run_job(h, [*env.argv, env.script, *args], *observer)


def close(a, b, what):
    if isinstance(b, float) and math.isnan(b):     # a 1-element std: torch nan, JSON null
        assert a is None or math.isnan(a), f"{what}: {a} != nan"
        return
    assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8), f"{what}: {a} != {b}"


def check_stats(got, want, what):
    for k in ("mean", "std", "min", "max", "norm"):
        close(got[k], want[k], f"{what} {k}")
    assert got["count"] == want["count"] and got["nonfinite"] == 0
    # histc's and our bin edges may round an element at a bin edge differently
    assert sum(got["histogram"]) == want["count"]
    assert sum(abs(a - b) for a, b in zip(got["histogram"], want["histogram"])) <= 2, (
        f"{what} histogram {got['histogram']} vs {want['histogram']}")


def brief(s):
    """A record without its parameters, for assertion messages (whole: pytest shortens)."""
    return json.dumps({k: v for k, v in s.items() if k != "params"})


def check_record(s, want, steps, name=lambda n: n, zeroed_unseen=False):
    """One exact record: the state after the epoch's last step, as torch printed it.
    zeroed_unseen: the job zeroes grads right after each step with Module.zero_grad() (HF,
    Lightning), which no probe sees: a record read right after the last step still has the
    grads the job printed as None."""
    assert "error" not in s and s["consistency"] == "exact", f"{brief(s)}"
    assert s["after_step"] == s["epoch_last_step"] == steps, f"{brief(s)}, job: {steps}"
    assert s["mode"] == "stats" and s["bytes_read"] > 0 and s["duration_ms"] >= 0
    got = {name(p["name"]): p for p in s["params"]}
    assert set(got) == set(want), (set(got), set(want))
    for n, p in got.items():
        w = want[n]
        what = f"epoch {s['epoch']} {s.get('model')} {n}"
        check_stats(p["weights"], w["weights"], what)
        if zeroed_unseen and w["grad"] is None:
            continue
        assert p["has_grad"] == (w["grad"] is not None), what
        if w["grad"] is None:
            assert "grad" not in p, what
        else:
            check_stats(p["grad"], w["grad"], f"{what} grad")


def check_end_state(r, want, steps):
    """The state after the epoch's last step: exact (check_record), or its weights exact and
    said so (gradients read while the next update ran: torn, weights_exact; or a whole state
    once a zero_grad had begun: the gradients may not be the step's)."""
    if r["consistency"] == "torn" or "gradients may not be" in r.get("note", ""):
        assert r["consistency"] == "exact" or (r.get("weights_exact") and
                                               "torn" in r["note"]), brief(r)
        assert r["after_step"] == r["epoch_last_step"] == steps, brief(r)
        for n, p in {p["name"]: p for p in r["params"]}.items():
            check_stats(p["weights"], want[n]["weights"], f"epoch {r['epoch']} {n}")
    else:
        check_record(r, want, steps)


def check_epochs(job, models=None, zeroed_unseen=False):
    """Every epoch the job printed has one exact record per model, equal to torch's; models:
    the record's namespace for each printed model name (None: one model, any name)."""
    assert sorted(job.steps) == list(range(len(job.steps))) and job.steps, job.out[-2000:]
    for epoch, steps in job.steps.items():
        recs = [s for s in job.snaps if s["epoch"] == epoch]
        printed = {m: v for (e, m), v in job.printed.items() if e == epoch}
        assert len(recs) == len(printed), f"epoch {epoch}: {[brief(r) for r in recs]}"
        for r in recs:
            m = "-" if models is None else models[r["model"]]
            check_record(r, printed[m], steps, zeroed_unseen=zeroed_unseen)
    return job.snaps


@pytest.mark.parametrize("frames", ["off", "always"])
@pytest.mark.parametrize("speed", ["fast", "slow"])
def test_every_epoch_exact(h, env, speed, frames):
    """A global of __main__, epochs of a few ms or of a second, no gate: every epoch's
    record is the state after its last optimizer step."""
    job = run(h, env, *(FAST if speed == "fast" else SLOW),
              observer=("--python-frames", frames))
    snaps = check_epochs(job)
    for s in snaps:
        assert s["model"] == "model" and {p["name"] for p in s["params"]} == PARAMS
        # With Python frames the model may be found by its forward, or (when the first look,
        # at the first backward, comes before the loader has taken in that forward's event)
        # in __main__'s globals; it keeps how its first look found it. Which one is timing.
        assert s["model_found_by"] in (("forward", "main_globals") if frames == "always"
                                       else ("main_globals",)), s["model_found_by"]
        by = {p["name"]: p for p in s["params"]}
        assert by["mix_bf16"]["dtype"] == "bfloat16" and by["tview"]["shape"] == [8, 12]
        assert not by["unused"]["has_grad"] and by["fc1.weight"]["has_grad"]
    sess = only_session(job.root)
    model = sess.root["attrs"]["model"]
    assert model["parameters"] == 12 * 16 + 16 + 16 * 4 + 4 + 16 + 96 + 5
    assert model["by_dtype_device"] == {"float32/cpu": model["parameters"] - 16,
                                        "bfloat16/cpu": 16}
    health = sess.health
    assert health["snapshots"] == len(job.steps) and health["snapshot_bytes_total"] > 0
    assert health["snapshot_reads"] >= len(job.steps)
    # the wakeups cost the job: a few per epoch once its length is known
    assert 0 < health["snapshot_wakeups"] <= 64 + 3 * len(job.steps), health


@pytest.fixture
def busy_cores():
    """Two processes that keep both cores of the CI machine busy while the test runs."""
    hogs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(2)]
    yield
    for p in hogs:
        p.kill()
        p.wait()


@pytest.mark.parametrize("layout", ["table", "found"])
@pytest.mark.parametrize("load", ["quiet", "busy"])
def test_straight_on_to_the_next_epoch(h, env, tmp_path, request, layout, load):
    """No pause at an epoch's end (no validation, nothing printed: the next epoch begins right
    after the last step, so the tree learns the epoch ended only then), with the tensor
    layout from the table, or found in the target with an empty cache (as for a torch newer
    than the binary: the look that finds it runs as the first epoch goes), on a quiet
    machine and with both cores kept busy. Every epoch has the state after its last step,
    never a later one, never an error: exact (weights and gradients equal to torch's), or
    its weights exact with gradients read while the next update ran (consistency torn,
    weights_exact, a note says so). The loader never wins the race to an epoch of a few ms
    by itself: BPF copies this small model where the loop ends (read_from bpf_copy). How
    many records came from BPF's copy is printed."""
    if load == "busy":
        request.getfixturevalue("busy_cores")
    observer = ("--cache-dir", str(tmp_path / "cache"))
    envv = dict(os.environ, CIRRON_TEST_NO_LAYOUT_TABLE="1") if layout == "found" else None
    job = run_job(h, [*env.argv, env.script, "--epochs", "4", "--batches", "8",
                      "--val-batches", "0", "--print-at-end"], *observer, env=envv)
    assert sorted(job.steps) == [0, 1, 2, 3], job.out[-2000:]
    copied = 0
    for epoch, steps in job.steps.items():
        (r,) = [s for s in job.snaps if s["epoch"] == epoch]
        assert "error" not in r, brief(r)
        assert r["epoch_last_step"] == steps and r["layout_source"] == layout, brief(r)
        assert r["after_step"] == steps, brief(r)
        copied += r.get("read_from") == "bpf_copy"
        check_end_state(r, job.printed[(epoch, "-")], steps)
    print(f"{copied} of {len(job.steps)} epochs from BPF's copy ({layout}, {load})")


@pytest.mark.parametrize("load", ["quiet", "busy"])
def test_straight_on_attached(h, env, tmp_path, request, load):
    """The same loop going straight on, attached mid-run (the job never waits for it) and
    detached after a few epochs: once the observer has found the model (its first look, as
    training goes on after the attach: epochs that ended before it came back hold a later
    state that says so), every epoch has the state after its last step, equal to what torch
    printed for one epoch of the job (exact, or its weights with the grads labelled torn, as
    above), epoch after epoch with none left out (after_step counts
    from the attach: each record is matched to the job's epoch by its values, which change
    at every step). Quiet, and with both cores kept busy."""
    if load == "busy":
        request.getfixturevalue("busy_cores")
    # the job ends at its next epoch's end once this exists (seen from a chroot: its root's)
    stop = (f"/tmp/snapshots-stop-{tmp_path.name}" if env.name == "trixie"
            else str(tmp_path / "stop"))
    stop_here = Path(env.argv[1] + stop) if env.name == "trixie" else Path(stop)
    job = h.start([*env.argv, env.script, "--epochs", "100000", "--batches", "8",
                   "--val-batches", "0", "--print-at-end", "--stop-file", stop])
    job.out.wait_for(r"^TRAINING", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-p", job.pid, "--output", "spool,stdout", "--cache-dir",
                     tmp_path / "cache", path=root, cache=False)    # an empty symbol cache
    obs.out.wait_for(r"^\[cirron\] epoch\[20\] ", timeout=180)
    obs.signal(signal.SIGINT)
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    stop_here.write_text("")
    assert job.finish(280) == 0 and "DONE" in job.out.text
    stop_here.unlink()
    done = Job(root, job.out.text, "")
    norms = {e: v["fc1.weight"]["weights"]["norm"] for (e, _), v in done.printed.items()}
    matched, early = [], 0
    for r in sorted(done.snaps, key=lambda r: r["epoch"]):
        if "error" in r:    # only the epoch under way at the detach may have none
            assert "detached" in r["error"] and r["epoch"] == max(
                x["epoch"] for x in done.snaps), brief(r)
            continue
        if not matched and "first look" in r.get("note", ""):
            assert r["after_step"] > r["epoch_last_step"], brief(r)
            early += 1
            continue
        got = {p["name"]: p for p in r["params"]}["fc1.weight"]["weights"]["norm"]
        (epoch,) = [e for e, n in norms.items() if math.isclose(n, got, rel_tol=1e-6)]
        check_end_state(r, done.printed[(epoch, "-")], r["epoch_last_step"])
        matched.append(epoch)
    assert len(matched) >= 10 and matched == list(range(matched[0], matched[0] + len(matched))), \
        matched
    copied = sum(r.get("read_from") == "bpf_copy" for r in done.snaps)
    print(f"{copied} of {len(matched)} epochs from BPF's copy, {early} before the first look "
          f"came back (attached, {load})")


@pytest.mark.parametrize("val", [0, 2])
def test_bpf_copy_at_each_loop_end(h, env, val):
    """BPF's copy where a loop ends, alone: with CIRRON_TEST_SNAP_COPY_ONLY the loader makes
    no read of the target once BPF holds a copy plan, so the records of the epochs after the
    first are BPF's copies, made in the job's thread at the next loader's first __next__
    (val 0: the next epoch begins at once) or as grad is disabled for validation (val 2).
    Each equals torch's numbers, weights and grads (the grads found by BPF through each
    parameter's TensorImpl and AutogradMeta, on each torch build)."""
    envv = dict(os.environ, CIRRON_TEST_SNAP_COPY_ONLY="1")
    job = run_job(h, [*env.argv, env.script, "--epochs", "4", "--batches", "8",
                      "--val-batches", str(val), "--print-at-end"], env=envv)
    assert sorted(job.steps) == [0, 1, 2, 3], job.out[-2000:]
    took = []
    for epoch in (0, 1, 2):
        steps = job.steps[epoch]
        (r,) = [s for s in job.snaps if s["epoch"] == epoch]
        if epoch == 0 and "error" not in r and r["after_step"] > steps:
            # epoch 0 ended before the first look came back with the plan (2 busy cores, on
            # CI): the next state read, a later one, labelled so
            assert "later" in r.get("note", ""), brief(r)
            continue
        assert "error" not in r and r["after_step"] == steps, brief(r)
        if epoch == 0 and r.get("read_from") != "bpf_copy":
            continue    # the plan comes from a first read: it may have ended the epoch
        assert r.get("read_from") == "bpf_copy" and r["consistency"] == "exact", brief(r)
        assert "note" not in r, brief(r)
        check_record(r, job.printed[(epoch, "-")], steps)
        took.append(r["bpf_copy_us"])
    assert took and min(took) > 0, took
    # once per epoch at most: never a copy per step
    assert len(took) <= only_session(job.root).health["snapshot_bpf_copies"] <= 4
    print(f"BPF's copies took {', '.join(f'{us:.1f}' for us in took)} us in the job's thread")


@pytest.mark.parametrize("where,found_by,names", [
    ("local", "frame_locals", {"net"}),
    ("attr", "attribute", {"trainer.model"}),
    ("attr-step", "attribute", {"trainer.model"}),
    ("ddp", "frame_locals", {"net"}),
    ("gan", "frame_locals", {"gen", "critic"}),
])
def test_model_where_code_keeps_it(h, env, where, found_by, names):
    """A local of main(), an attribute of a trainer object (its loop uses self.model: no
    frame holds the model itself; or hands it, with the optimizer, to a step function whose
    parameters hold them at most looks: the trainer's name all the same, every epoch),
    wrapped in DDP (its inner module's names), a GAN's two models each in its own
    namespace."""
    job = run(h, env, *FAST, "--where", where)
    models = {"gen": "gen", "critic": "critic"} if where == "gan" else None
    snaps = check_epochs(job, models)
    assert {s["model"] for s in snaps} == names, snaps
    assert {s["model_found_by"] for s in snaps} == {found_by}
    if where == "gan":
        a = only_session(job.root).root["attrs"]["model"]
        assert sorted(a["models"]) == ["critic", "gen"], a


def test_torch_compile(h, venv):
    """torch.compile's OptimizedModule: the module under _orig_mod, its own names."""
    env = Env("venv", [str(venv / "bin" / "python")], str(WORKLOAD))
    job = run(h, env, *FAST, "--where", "compile")
    for s in check_epochs(job):
        assert {p["name"] for p in s["params"]} == PARAMS


def test_last_epoch_then_exit(h, env):
    """The job exits right after its last epoch's stats: that epoch's record is the state
    after its last step (read when the step ended, the epoch's length known by then), or
    says why not."""
    job = run(h, env, *FAST, "--exit-at-end")
    last = max(job.steps)
    job.steps.pop(last)
    check_epochs(job)
    (rec,) = [s for s in job.snaps if s["epoch"] == last]
    if "error" in rec:
        assert "ended before" in rec["error"], rec
    else:
        check_record(rec, job.printed[(last, "-")], job.steps.get(last, rec["epoch_last_step"]))


FRAMEWORK_NAMES = {"transformers": "transformer.wte.weight", "lightning": "net.0.weight"}


@pytest.mark.parametrize("framework", ["transformers", "lightning"])
def test_frameworks(h, venv, framework):
    """HF Trainer (the model in its Trainer and the training loop's locals) and Lightning
    (the LightningModule its Trainer holds): every epoch exact, torch's own numbers; grads
    where the job still had them at its epoch-end callback (both zero them right after each
    step: HF with Module.zero_grad(), which no probe sees; Lightning's epoch end is seen only
    when the next epoch begins, so its record is the read made right after the last step)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_NO_ADVISORY_WARNINGS="1")
    job = run_job(h, [str(venv / "bin" / "python"), str(FRAMEWORKS), framework, "--epochs",
                      "3", "--batches", "8", "--norms"], env=env)
    for s in check_epochs(job, zeroed_unseen=True):
        assert FRAMEWORK_NAMES[framework] in {p["name"] for p in s["params"]}


@pytest.mark.parametrize("frames", ["off", "always"])
def test_keras(h, venv, frames):
    """A Keras 3 model on the torch backend (no torch optimizer: Keras updates by hand under
    no_grad, and disables grad for its metric updates before each backward): found, with the
    torch parameters that hold its variables, and every epoch's record exact and equal to
    torch's numbers, with Python frames and without (after_step 0: no optimizer step)."""
    env = dict(os.environ, KERAS_BACKEND="torch")
    job = run_job(h, [str(venv / "bin" / "python"), str(FRAMEWORKS), "keras", "--epochs", "3",
                      "--batches", "8", "--norms"], "--python-frames", frames, env=env)
    assert sorted(job.steps) == [0, 1, 2], job.out[-2000:]
    for epoch, steps in job.steps.items():
        recs = [s for s in job.snaps if s["epoch"] == epoch]
        assert len(recs) == 1, f"epoch {epoch}: {[brief(r) for r in recs]}"
        check_record(recs[0], job.printed[(epoch, "-")], steps,
                     name=lambda n: n.rsplit(".", 1)[-1])


def test_cap_samples_and_says_so(h, env):
    """A cap below the model's bytes: stats from a sample, and the record says so."""
    job = run(h, env, *FAST, observer=("--snapshot-max-mb", "0.001"))
    assert job.snaps
    for s in job.snaps:
        assert s["sampled_fraction"] < 1 and s["sample_every_blocks"] >= 2
        assert s["bytes_read"] <= 1048 + 8 * 1024 * len(PARAMS) * 2


COMPARE = r"""
import json, sys, torch
from safetensors import safe_open
files, saved, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = torch.load(saved)
for kind, i in (("weights", 0), ("gradients", 1)):
    with safe_open(json.loads(files)[kind], framework="pt") as f:
        names = set(f.keys())
        expect = {n for n, v in want.items() if v[i] is not None}
        assert names == expect, (kind, names, expect)
        for n in names:
            t, w = f.get_tensor(n), want[n][i]
            if every > 1:
                w = w.contiguous().flatten()[::every]
            assert t.dtype == w.dtype and t.shape == w.shape, (n, t.dtype, t.shape, w.shape)
            assert torch.equal(t, w), n
print("SAFETENSORS_OK")
"""


@pytest.mark.parametrize("mode,every", [("full", 1), ("sampled", 10)])
def test_safetensors_files(h, venv, tmp_path, mode, every):
    """In the venv: it has the safetensors package (a pinned dependency of transformers). The
    files of every record of the state after its epoch's last step hold the job's tensors."""
    python = str(venv / "bin" / "python")
    job = run_job(h, [python, str(WORKLOAD), *FAST, "--save", str(tmp_path)], "--snapshots",
                  mode, "--sample-rate", str(1 / every))
    # read at the loop's end only (not ahead): an epoch whose end passed before that read
    # has a later state, which the job's own file of that epoch does not hold
    exact = [s for s in job.snaps if s.get("consistency") == "exact" and
             s["after_step"] == s["epoch_last_step"]]
    assert exact, job.snaps
    for s in exact:
        assert s["after_step"] == job.steps[s["epoch"]]
        files = s["files"]
        assert files["weights"].endswith(f"/snapshots/{s['span_id']}/weights.safetensors")
        r = subprocess.run([python, "-c", COMPARE, json.dumps(files),
                            str(tmp_path / f"epoch{s['epoch']}.pt"), str(every)],
                           capture_output=True, text=True, timeout=120)
        assert "SAFETENSORS_OK" in r.stdout, r.stderr[-2000:]


def test_worker_thread_under_sanitizers(h, bpf):
    """Reads on the worker thread and on the loop's, files written, the session ending while
    one may be under way: the ASan/UBSan build reports nothing, and every record is whole."""
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    job = run_job(h, [HOST_PYTHON, str(WORKLOAD), "--epochs", "6", "--batches", "8"],
                  "--snapshots", "full", san=True)
    assert_no_sanitizer_report(job.err)
    health = only_session(job.root).health
    assert health["snapshots"] == len(job.snaps) == 6, (health, job.snaps)
    for s in job.snaps:
        assert "cancelled" not in s, s
        if "error" not in s:
            assert {p["name"] for p in s["params"]} == PARAMS, s
            assert set(s["files"]) == {"weights", "gradients"}, s


SHAPES = {"fc1.weight": "16x12", "fc1.bias": "16", "fc2.weight": "4x16", "fc2.bias": "4",
          "mix_bf16": "4x4", "tview": "8x12", "unused": "5"}


def test_trace_shows_snapshots(h, env):
    """trace: per epoch a line (model, exact after step N) and a table of parameter, shape,
    dtype, mean, std, norm and grad norm, the numbers torch printed (to the table's 4
    significant digits)."""
    job = run(h, env, *FAST)
    check_epochs(job)
    rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "trace", str(job.root)])
    assert rc == 0, err
    lines = out.splitlines()
    for epoch, steps in job.steps.items():
        head = [i for i, l in enumerate(lines) if l.startswith(f"snapshot: epoch {epoch}, ")]
        assert len(head) == 1, out
        assert (f"snapshot: epoch {epoch}, model (stats, exact after step {steps}, "
                "7 parameters") in lines[head[0]], lines[head[0]]
        assert lines[head[0] + 1].split() == ["parameter", "shape", "dtype", "mean", "std",
                                              "norm", "grad", "norm"]
        rows = {}
        for l in lines[head[0] + 2:head[0] + 2 + len(PARAMS)]:
            cols = l.split()
            rows[cols[0]] = cols
        assert set(rows) == PARAMS, out
        for name, cols in rows.items():
            want = job.printed[(epoch, "-")][name]
            assert cols[1] == SHAPES[name] and cols[2] == ("bfloat16" if name == "mix_bf16"
                                                            else "float32"), cols
            for got, key in zip(cols[3:6], ("mean", "std", "norm")):
                assert math.isclose(float(got), want["weights"][key], rel_tol=1e-3,
                                    abs_tol=1e-6), (name, key, got, want)
            if want["grad"] is None:
                assert cols[6] == "-", cols
            else:
                assert math.isclose(float(cols[6]), want["grad"]["norm"], rel_tol=1e-3), cols
    # --format json carries the records themselves, full precision
    rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "trace", "--format", "json",
                                 str(job.root)])
    assert rc == 0, err
    (session,) = json.loads(out)
    records = session["snapshots"]
    assert sorted(r["epoch"] for r in records) == sorted(job.steps), records
    for r in records:
        check_record(r, job.printed[(r["epoch"], "-")], job.steps[r["epoch"]])


def test_report_norm_per_layer(h, env, tmp_path):
    """report: a chart of each layer's weight norm at each epoch's end, drawn where torch's
    own numbers put it (the chart is 200 high, 24 below the axis, the maximum 8 from the top),
    and how many epochs are exact."""
    import re

    from test_report import CHROMIUM, check_page, report
    if not CHROMIUM.exists():
        unavailable("chromium is not installed (scripts/install-deps.sh installs it)")
    job = run(h, env, *FAST)
    check_epochs(job)
    page = tmp_path / "report.html"
    report(h, job.root, page)
    dom, got = check_page(tmp_path, page, 1, "snapshots.png")
    series = got["s0-weight-norms"]
    layers = {"fc1", "fc2", "mix_bf16", "tview", "unused"}
    epochs = len(job.steps)
    assert {name for name, _, _ in series} == layers, series
    assert all(pts == pairs == epochs for _, pts, pairs in series), series
    want = {(layer, e): math.sqrt(sum(job.printed[(e, "-")][n]["weights"]["norm"] ** 2
                                      for n in PARAMS if n.split(".")[0] == layer))
            for layer in layers for e in range(epochs)}
    top = max(want.values())
    svg = re.search(r'<svg class="chart" id="s0-weight-norms".*?</svg>', dom, re.S).group(0)
    for name, pts in re.findall(r'data-name="([^"]*)" data-points="\d+" stroke="[^"]*" '
                                r'points="([^"]*)"', svg):
        for e, xy in enumerate(pts.split()):
            y = float(xy.split(",")[1])
            assert abs(y - (176 - want[(name, e)] / top * 168)) < 0.2, (name, e, y)
    assert f"{epochs} of {epochs} exactly the state after the epoch's last optimizer step" in dom
