# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The training idioms of PyTorch 2.x (issue 26), each a loop of its own
(tests/workloads/idiom_*.py), under the real observer at the default level and with
--python-frames sampled|always: torch.compile (a model, a function, a whole step; inductor's
default, max-autotune-no-cudagraphs, fullgraph), AMP (autocast + GradScaler, a skipped step),
activation checkpointing (reentrant and not), FSDP2 and DDP on gloo under torchrun, and
evaluation with model.eval() but no no_grad(). Exact counts and nesting; the rules are in
docs/tree.md ("PyTorch 2.x idioms").

Stacks: the venv (official torch 2.13 wheel, pyenv's CPython 3.11) and the trixie root
(Debian's torch 2.6, Python 3.13) where its torch has the feature: trixie has no C++ compiler,
so its torch.compile runs use backend="aot_eager" (dynamo and AOTAutograd, no inductor), and
FSDP2 needs a newer torch than 2.6 on the CPU.

One traced run serves every test that reads it (RUNS caches the sessions per workload,
stack and level): a compiled run takes 10-60 s on a 2-core machine.

The names the rules give (issue 26):
- `compile` spans (attr `recompile`, where the build tells it), one per frame dynamo compiled
  (the wheel: each cache entry; Debian's 2.6: each compile dynamo ran), under the step or the
  epoch (validation) where it happened, inside a forward's time; `compile {backward=true}`
  inside a backward for a backward graph compiled there; the step's `compile_ns`.
- inductor's helper processes: sessions with `role=helper` and `helper_of` (the job's pid),
  never jobs; `trace` lists the job alone.
- a step whose optimizer step GradScaler skipped: `skipped=true` and no optimizer_step.
- a recomputed forward (activation checkpointing): a `forward` inside the backward with
  `recompute=true`.
- a compiled model's exact forward: `module` is the model's own class, `compiled=true`.
"""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, ROOT, free_port, read_spool
from test_torch_tree import check_well_formed, children, named

W = ROOT / "tests" / "workloads"
EPOCHS, BATCHES, VAL = 2, 4, 2
STEPS = EPOCHS * BATCHES
LEVELS = {
    "off": (),
    # windows come at most once a second: the loops sleep 300 ms a step (--step-sleep)
    "sampled": ("--python-frames", "sampled", "--sample-every", "2"),
    "always": ("--python-frames", "always"),
}
SLEEP = {"off": (), "sampled": ("--step-sleep", "300"), "always": ()}

pytestmark = pytest.mark.timeout(400)

# (stack, script, args, level, torchrun, observer args) -> (sessions, the job's stdout, spool
# root, seconds the run took)
RUNS = {}


@pytest.fixture(scope="module", autouse=True)
def first_compiles(tmp_path_factory):
    """Inductor's caches of this run only: each graph's first compile here is a first one,
    as in a job started in a fresh container, whatever this machine compiled before (a
    cache hit skips AOTAutograd's traced backward, a miss runs it)."""
    old = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("inductor-cache"))
    yield
    if old is None:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    else:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = old


@pytest.fixture
def venv_stack(bpf, venv):
    """(name, argv of python, argv of torchrun, where the job sees the workloads)"""
    return ("venv", [str(venv / "bin" / "python")],
            [str(venv / "bin" / "torchrun"), "--standalone"], W)


@pytest.fixture
def trixie_stack(bpf, trixie_root):
    py = ["chroot", str(trixie_root), "python3"]
    # trixie's torch lacks libuv (torchrun_nolibuv.py); --standalone does not resolve there
    return ("trixie", py, py + ["/work/torchrun_nolibuv.py", "--master_port", "PORT"], "/work")


def stack_of(request, name):
    return request.getfixturevalue(f"{name}_stack")


def traced(h, stack, level, script, *args, torchrun=False, extra=(), env=()):
    """The sessions of one run of SCRIPT ARGS under `cirron-probe run` at LEVEL (cached).
    env: (name, value) pairs for the observer's environment."""
    name, py, trun, wdir = stack
    key = (name, script, args, level, torchrun, extra, env)
    if key in RUNS:
        return RUNS[key]
    if torchrun:
        trun = [a if a != "PORT" else str(free_port()) for a in trun]
        argv = trun + ["--nproc_per_node", "2", f"{wdir}/{script}"]
    else:
        argv = py + [f"{wdir}/{script}"]
    argv += [*args, "--epochs", str(EPOCHS), "--batches", str(BATCHES),
             "--val-batches", str(VAL), *SLEEP[level]]
    root = h.spool_root()
    started = time.monotonic()
    p = h.observer("run", "--output", "spool", *LEVELS[level], *extra, "--", *argv, path=root,
                   env=dict(os.environ, **dict(env)))
    rc = p.finish(360)
    assert rc == 0, f"run exited {rc}:\n{p.err.text[-3000:]}"
    assert "DONE" in p.out.text, p.out.text[-2000:]
    RUNS[key] = (read_spool(root), p.out.text, root, time.monotonic() - started)
    return RUNS[key]


def jobs(sessions):
    """Sessions that are jobs: not a helper process of one (inductor's)."""
    return [s for s in sessions.values() if s.root["attrs"].get("role") != "helper"]


def the_job(sessions):
    found = jobs(sessions)
    assert len(found) == 1, [(s.id, s.root["attrs"].get("role"), s.root["attrs"].get("comm"))
                             for s in sessions.values()]
    return found[0]


def ranks(sessions):
    by_rank = {s.root["attrs"]["rank"]: s for s in sessions.values()
               if s.root["attrs"]["role"] == "rank"}
    assert sorted(by_rank) == [0, 1], {s.id: s.root["attrs"]["role"] for s in sessions.values()}
    return by_rank


def descendants(s, span, name=None):
    out, todo = [], [span]
    while todo:
        for c in children(s, todo.pop()):
            todo.append(c)
            if name is None or c["name"] == name:
                out.append(c)
    return out


def ancestors(s, span):
    out = []
    while span["parent_id"] is not None:
        span = s.spans[span["parent_id"]]
        out.append(span)
    return out


def count(s, span, name):
    return len(children(s, span, name))


def exact(f):
    return "timing" not in f["attrs"]


def within(inner, outer):
    return outer["start_ns"] <= inner["start_ns"] and inner["end_ns"] <= outer["end_ns"]


def check_training(s, per_step=None, boundary="optimizer_step"):
    """EPOCHS epochs of BATCHES steps; each step exactly per_step's children (name -> count),
    its forwards in mode train."""
    per_step = per_step or {"data_load": 1, "forward": 1, "backward": 1, "optimizer_step": 1}
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert [e["index"] for e in epochs] == list(range(EPOCHS)), \
        [(e["index"], len(children(s, e, "step"))) for e in epochs]
    steps = named(s, "step")
    assert [st["index"] for st in steps] == list(range(STEPS))
    for e in epochs:
        assert len(children(s, e, "step")) == BATCHES, e["index"]
    for st in steps:
        got = {n: count(s, st, n) for n in per_step}
        assert got == per_step, f"step {st['index']}: {got}"
        assert all(f["attrs"]["mode"] == "train" for f in children(s, st, "forward"))
        if boundary:
            assert st["attrs"].get("boundary") == boundary, (st["index"], st["attrs"])
    return epochs, steps


def check_validation(s, epochs, evaluations=1):
    """Each epoch: its training loop's end, then `evaluations` passes of VAL batches, each an
    eval forward under the epoch, and each pass's own end: data_loads under the epoch."""
    for e in epochs:
        evals = children(s, e, "forward")
        assert len(evals) == evaluations * VAL, (e["index"], [f["attrs"] for f in evals])
        assert all(f["attrs"]["mode"] == "eval" for f in evals)
        loads = sorted(children(s, e, "data_load"), key=lambda d: d["start_ns"])
        assert len(loads) == 1 + evaluations * (VAL + 1), (e["index"], len(loads))
        if evaluations == 1:    # the training loop's end comes first
            assert loads[0]["attrs"].get("exhausted") is True, loads[0]["attrs"]


def check_frames(s, level):
    """With Python frames: sampled steps have exact forwards (some, not all); always: every
    model forward is exact."""
    fwd = [f for st in named(s, "step") for f in children(s, st, "forward")]
    if level == "always":
        assert all(exact(f) for f in fwd), [f["attrs"] for f in fwd if not exact(f)]
        assert s.root["attrs"]["python_frames"] == "exact"
    elif level == "sampled":
        assert s.root["attrs"]["python_frames"] == "sampled"
        assert s.health["python_sampled_steps"] >= 1


# ---- torch.compile ---------------------------------------------------------------------------

# (target, mode, level) run on the venv; trixie runs (aot_eager) take mode "default" only
COMPILE_VENV = [
    ("model", "default", "off"), ("model", "default", "sampled"), ("model", "default", "always"),
    ("model", "max-autotune", "off"), ("model", "fullgraph", "always"),
    ("function", "default", "off"), ("function", "default", "always"),
    ("function", "fullgraph", "off"),
    ("step", "default", "off"), ("step", "default", "always"), ("step", "max-autotune", "off"),
]
COMPILE_TRIXIE = [("model", "default", "off"), ("model", "default", "always"),
                  ("function", "default", "off"), ("step", "default", "off")]
COMPILE = [pytest.param("venv", *c, id=f"venv-{'-'.join(c)}") for c in COMPILE_VENV] + \
          [pytest.param("trixie", *c, id=f"trixie-{'-'.join(c)}") for c in COMPILE_TRIXIE]


def compile_run(h, request, stack_name, target, mode, level, *more):
    stack = stack_of(request, stack_name)
    backend = ("--backend", "aot_eager") if stack_name == "trixie" else ()
    sessions, out, root, _ = traced(h, stack, level, "idiom_compile.py", "--target", target,
                                    "--mode", mode, *backend, *more)
    m = re.search(r"^DONE compiled_frames=(\d+) in_steps=([\d,]+) in_validation=([\d,]+) "
                  r"compile_runs=(\d+) runs_in_steps=([\d,]+) runs_in_validation=([\d,]+)$",
                  out, re.M)
    assert m, out
    # What each build tells: the wheel (symbol table kept) each frame dynamo compiled into
    # code (create_cache_entry, recompilations told); Debian's 2.6 (stripped) each compile
    # dynamo ran, through its own scope (_compile.compile_inner): those that end without
    # code (a frame traced, then skipped) included, recompilations not told.
    g = 1 if stack_name == "venv" else 4
    truth = (int(m[g]), [int(v) for v in m[g + 1].split(",")],
             [int(v) for v in m[g + 2].split(",")])
    return sessions, truth, root


@pytest.mark.parametrize("stack_name,target,mode,level", COMPILE)
def test_compile_steps(h, request, stack_name, target, mode, level):
    """Each training step holds its batch, one forward (mode=train), its backward and its
    optimizer step; validation forwards (mode=eval) under the epoch. A compiled train step
    (optimizer inside) has no optimizer_step: dynamo traces Optimizer.step's record_function
    away, so nothing announces it; its steps begin at the DataLoader batches."""
    sessions, _, _ = compile_run(h, request, stack_name, target, mode, level)
    s = the_job(sessions)
    if target == "step":
        epochs, steps = check_training(
            s, {"data_load": 1, "forward": 1, "backward": 1, "optimizer_step": 0},
            boundary="data_load")
    else:
        epochs, steps = check_training(s)
    check_validation(s, epochs)
    if target == "step" and level == "always":
        # the model runs inside the compiled step: its forwards are inferred (below)
        assert s.root["attrs"]["python_frames"] == "exact"
    else:
        check_frames(s, level)
    if level == "off":
        return
    for st in steps:
        (fwd,) = children(s, st, "forward")
        if not exact(fwd):
            continue
        if target == "model":   # the user's model class, not dynamo's wrapper
            assert fwd["attrs"]["module"] == "Sequential" and fwd["attrs"]["compiled"] is True
        elif target == "function":  # the compiled loss (an OptimizedModule) is no forward
            assert fwd["attrs"]["module"] == "Sequential" and "compiled" not in fwd["attrs"]
    if target == "step" and level == "always":
        # the model call is inside the compiled step: no Module call to see; inferred
        assert all(not exact(f) for st in steps for f in children(s, st, "forward"))


@pytest.mark.parametrize("stack_name,target,mode,level", COMPILE)
def test_compile_spans(h, request, stack_name, target, mode, level):
    """One `compile` span per frame dynamo compiled (its own count, printed by the job),
    from its exact start (the wheel), where it happened: the training step's (inside its
    forward's time) or the epoch's validation; recompilations (a frame compiled again: grad mode and module.training are
    guarded, so validation recompiles a model) say so; a step says how long it compiled
    (`compile_ns`, with the backward graph's compile where torch names it: 2.6's
    `backward._backward_impl`, a `compile {backward=true}` inside the backward)."""
    sessions, (total, in_steps, in_validation), _ = compile_run(h, request, stack_name,
                                                                target, mode, level)
    s = the_job(sessions)
    every = named(s, "compile")
    compiles = [c for c in every if not c["attrs"].get("backward")]
    assert len(compiles) == total, [(c["parent_id"], c["attrs"]) for c in every]
    for c in every:
        assert c["end_ns"] > c["start_ns"]
        if stack_name == "venv":
            # its start exact at every level: dynamo's callback (Python frames), else its
            # wait counter (torch >= 2.5), never inferred from the last quiet point
            assert "timing" not in c["attrs"], c["attrs"]
        if c["attrs"].get("backward"):
            assert any(a["name"] == "backward" for a in ancestors(s, c)), c
    steps, epochs = named(s, "step"), named(s, "epoch")
    for st, n in zip(steps, in_steps):
        mine = [c for c in compiles if st in ancestors(s, c)]
        assert len(mine) == n, (st["index"], n, len(mine))
        spent = sum(c["end_ns"] - c["start_ns"] for c in every if st in ancestors(s, c))
        if spent:
            assert st["attrs"]["compile_ns"] == spent, (st["index"], st["attrs"])
        else:
            assert "compile_ns" not in st["attrs"], (st["index"], st["attrs"])
    for e, n in zip(epochs, in_validation):
        mine = [c for c in compiles if e in ancestors(s, c)
                and not any(a["name"] == "step" for a in ancestors(s, c))]
        assert len(mine) == n, (e["index"], n, len(mine))
        if target == "model":   # inside the evaluation forward it compiled
            for c in mine:
                assert any(within(c, f) for f in children(s, e, "forward")), c
    if stack_name == "trixie":
        # nothing in a stripped 2.6 build tells which frame a compile was for
        assert all("recompile" not in c["attrs"] for c in compiles)
    elif target in ("model", "function"):
        # one frame: the first compile, then recompilations of it
        assert [c["attrs"].get("recompile") for c in compiles] == \
            [False] + [True] * (total - 1)
    # a model's (or a whole step's) first compile runs inside step 0's forward
    if target != "function":
        first = min(compiles, key=lambda c: c["start_ns"])
        (fwd,) = children(s, steps[0], "forward")
        assert within(first, fwd), (first, fwd)


@pytest.mark.parametrize("stack_name,target,mode,level",
                         [p for p in COMPILE if p.values[0] == "venv" and p.values[3] == "off"])
def test_compile_helpers_are_not_jobs(h, request, stack_name, target, mode, level):
    """Inductor's helper processes (its CPU ISA probes, `python -c ... cdll.LoadLibrary(...)`,
    and compile workers, `torch/_inductor/compile_worker/__main__.py`) load libtorch: they
    are the job's helpers, not jobs. `trace` lists one session."""
    sessions, _, root = compile_run(h, request, stack_name, target, mode, level)
    job = the_job(sessions)
    for s in sessions.values():
        if s is job:
            continue
        a = s.root["attrs"]
        assert a["role"] == "helper" and a["helper_of"] == job.root["attrs"]["pid"], a
        assert not named(s, "epoch") and not named(s, "step")
    r = subprocess.run([str(BIN), "trace", str(root)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(re.findall(r"^session ", r.stdout, re.M)) == 1, r.stdout[:3000]


def test_compile_recompiles_for_a_smaller_batch(h, request):
    """Each epoch's last batch is half a batch: dynamo recompiles the model once for it, in
    epoch 0's last step (automatic dynamic shapes); that compile says it is a recompilation."""
    sessions, (total, in_steps, _), _ = compile_run(h, request, "venv", "model", "default",
                                                    "off", "--ragged")
    assert in_steps == [1, 0, 0, 1, 0, 0, 0, 0], in_steps
    s = the_job(sessions)
    check_training(s)
    steps = named(s, "step")
    late = [c for c in named(s, "compile") if steps[3] in ancestors(s, c)]
    assert len(late) == 1 and late[0]["attrs"]["recompile"] is True, late
    assert len(named(s, "compile")) == total


def test_compile_attach_after_compiling(h, venv_stack):
    """attach to a compiled model's job once it has compiled (its first epoch printed): the
    steps seen are whole (batch, forward, backward, optimizer step), none lost to the
    compiled region's own grad-mode switches."""
    t = h.start([*venv_stack[1], str(W / "idiom_compile.py"), "--target", "model",
                 "--epochs", "100000", "--batches", "4", "--step-sleep", "20"])
    t.out.wait_for(r"^epoch 0:", timeout=240)
    root = h.spool_root()
    obs = h.observer("attach", "-p", t.pid, "--output", "spool,stdout", path=root)
    obs.out.wait_for(r"^\[cirron\] step\[21\] ", timeout=120)   # the job runs until killed
    obs.signal(signal.SIGINT)
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    t.popen.kill()
    s = the_job(read_spool(root))
    steps = [st for st in named(s, "step") if st["status"] == "ok"]
    assert len(steps) >= 20, len(steps)
    for st in steps[1:-1]:
        got = {n: count(s, st, n) for n in ("data_load", "forward", "backward", "optimizer_step")}
        assert got == {"data_load": 1, "forward": 1, "backward": 1, "optimizer_step": 1}, got


# ---- AMP ---------------------------------------------------------------------------------------

AMP = [pytest.param(st, lv, id=f"{st}-{lv}") for st in ("venv", "trixie") for lv in LEVELS]
# bf16 without a scaler: torch 2.13's autocast switches grad on and off in C++ under no_grad
# (the venv's validation without Python frames lost its forwards before the caller rule)
AMP_BF16 = [pytest.param(st, lv, id=f"{st}-{lv}") for st in ("venv", "trixie") for lv in LEVELS]
SKIP = 2        # the step whose gradient gets a NaN: GradScaler skips its optimizer step


def amp_run(h, request, stack_name, level, *args):
    stack = stack_of(request, stack_name)
    sessions, out, _, _ = traced(h, stack, level, "idiom_amp.py", *args)
    return the_job(sessions), out


@pytest.mark.parametrize("stack_name,level", AMP)
def test_amp_grad_scaler_skipped_step(h, request, stack_name, level):
    """fp16 autocast + GradScaler; step 2's gradient holds a NaN, so GradScaler skips its
    optimizer step (optimizer.step is never called; update() lowers the scale): still one
    step per batch, that one marked skipped with no optimizer_step; validation under
    no_grad() + autocast keeps every eval forward."""
    s, out = amp_run(h, request, stack_name, level, "--dtype", "fp16", "--skip-step", str(SKIP))
    assert "DONE skipped=1" in out
    per = {"data_load": 1, "forward": 1, "backward": 1}
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert len(epochs) == EPOCHS
    steps = named(s, "step")
    assert [st["index"] for st in steps] == list(range(STEPS))
    for st in steps:
        assert {n: count(s, st, n) for n in per} == per, st["index"]
        skipped = st["index"] == SKIP
        assert count(s, st, "optimizer_step") == (0 if skipped else 1), st["index"]
        assert bool(st["attrs"].get("skipped")) == skipped, (st["index"], st["attrs"])
    check_validation(s, epochs)
    check_frames(s, level)
    assert s.root["attrs"]["mixed_precision"] is True


@pytest.mark.parametrize("stack_name,level", AMP_BF16)
def test_amp_bf16_without_scaler(h, request, stack_name, level):
    """bf16 autocast, no GradScaler (bf16 recipes go without): plain steps, every eval
    forward of the no_grad() + autocast validation under its epoch."""
    s, _ = amp_run(h, request, stack_name, level, "--dtype", "bf16", "--no-scaler")
    epochs, _ = check_training(s)
    check_validation(s, epochs)
    check_frames(s, level)
    assert not [st for st in named(s, "step") if st["attrs"].get("skipped")]


# ---- activation checkpointing ------------------------------------------------------------------

BLOCKS = 3
CKPT = [pytest.param(st, r, lv, id=f"{st}-{r}-{lv}") for st in ("venv", "trixie")
        for r in ("reentrant", "no-reentrant") for lv in LEVELS]


@pytest.mark.parametrize("stack_name,mode,level", CKPT)
def test_checkpoint_recompute_inside_backward(h, request, stack_name, mode, level):
    """torch.utils.checkpoint around each of 3 blocks: one step per batch with one forward,
    one backward (the reentrant variant's nested backwards inside it) and one optimizer step;
    the forwards recomputed during backward are inside the backward span (recompute=true),
    never forwards of the step: with Python frames, exactly 3 per backward of a step whose
    forward was seen."""
    stack = stack_of(request, stack_name)
    sessions, _, _, _ = traced(h, stack, level, "idiom_checkpoint.py", f"--{mode}",
                               "--blocks", str(BLOCKS))
    s = the_job(sessions)
    epochs, steps = check_training(s)
    check_validation(s, epochs)
    check_frames(s, level)
    for st in steps:
        (bwd,) = children(s, st, "backward")
        (fwd,) = children(s, st, "forward")
        for b in descendants(s, st, "backward"):
            assert b is bwd or bwd in ancestors(s, b), "a nested backward outside the step's"
        redo = descendants(s, bwd, "forward")
        assert all(f["attrs"].get("recompute") is True and f["attrs"]["mode"] == "train"
                   for f in redo), [f["attrs"] for f in redo]
        if level != "off" and exact(fwd):
            assert len(redo) == BLOCKS, (st["index"], len(redo))
            assert all(f["attrs"]["module"] == "Block" for f in redo)
        elif level == "off":
            assert not redo


# ---- FSDP2 and DDP -----------------------------------------------------------------------------

# DDP's forward collectives are the forward's, FSDP2's forward scopes too (an exact forward
# holds what begins while it runs)
SHARDED = [pytest.param("venv", "fsdp2", lv, id=f"venv-fsdp2-{lv}") for lv in LEVELS] + \
          [pytest.param(st, "ddp", lv, id=f"{st}-ddp-{lv}")
           for st, lv in (("venv", "off"), ("venv", "sampled"), ("venv", "always"),
                          ("trixie", "off"), ("trixie", "always"))]


@pytest.mark.parametrize("stack_name,wrap,level", SHARDED)
def test_sharded_per_rank_trees(h, request, stack_name, wrap, level):
    """2 ranks on gloo under torchrun: per rank, one step per batch with its forward (exact:
    DDP's and FSDP's own scopes begin it), backward and optimizer step; FSDP's forward-side
    scopes (pre/post_forward, all-gathers) inside the forward, its backward-side ones
    (pre_backward, reduce-scatters) inside the backward; every collective_wait inside a
    forward, backward or optimizer step, none loose in the step; validation forwards
    (mode=eval) under the epoch."""
    stack = stack_of(request, stack_name)
    sessions, _, _, _ = traced(h, stack, level, "idiom_sharded.py", "--wrap", wrap,
                               torchrun=True)
    for rank, s in ranks(sessions).items():
        epochs, steps = check_training(s)
        check_validation(s, epochs)
        check_frames(s, level)
        for st in steps:
            (fwd,) = children(s, st, "forward")
            (bwd,) = children(s, st, "backward")
            assert exact(fwd), (rank, st["index"], fwd["attrs"])
            loose = [c["name"] for c in children(s, st)
                     if c["name"] not in ("data_load", "forward", "backward", "optimizer_step",
                                          "zero_grad")]
            assert not loose, (rank, st["index"], loose)
            if wrap == "fsdp2":
                fw = [d["name"] for d in descendants(s, fwd) if d["name"].startswith("FSDP::")]
                bw = [d["name"] for d in descendants(s, bwd) if d["name"].startswith("FSDP::")]
                assert any(n.startswith("FSDP::pre_forward") for n in fw), fw
                assert not any("backward" in n for n in fw), fw
                assert any(n.startswith("FSDP::pre_backward") for n in bw), bw
            else:
                assert len(descendants(s, bwd, "collective_wait")) >= 1
        for e in epochs:
            for f in children(s, e, "forward"):
                assert exact(f), (rank, f["attrs"])
                if wrap == "fsdp2":
                    assert [d for d in descendants(s, f) if d["name"].startswith("FSDP::")]


# ---- evaluation with model.eval() and no no_grad() ----------------------------------------------

EVAL = [pytest.param(st, lv, id=f"{st}-{lv}") for st in ("venv", "trixie") for lv in LEVELS]


@pytest.mark.parametrize("stack_name,level", EVAL)
def test_eval_mode_without_no_grad(h, request, stack_name, level):
    """model.eval() and a validation loop with grad on (nothing calls backward): its batches
    are validation batches under the epoch, each with an eval forward (inferred without
    Python frames, from module.training with them); the epochs stay EPOCHS (as inference_mode
    validation's)."""
    stack = stack_of(request, stack_name)
    sessions, _, _, _ = traced(h, stack, level, "idiom_evalmode.py")
    s = the_job(sessions)
    epochs, _ = check_training(s)
    check_validation(s, epochs)
    check_frames(s, level)
    if level == "always":
        for e in epochs:
            assert all(f["attrs"]["mode_source"] == "module.training"
                       for f in children(s, e, "forward"))


@pytest.mark.parametrize("verdicts", ["as-usual", "late"])
@pytest.mark.parametrize("stack_name", ["venv", "trixie"])
def test_eval_mode_mid_epoch_with_frames(h, request, stack_name, verdicts):
    """Evaluation every 2 training batches (model.eval(), grad on), with --python-frames
    always: module.training tells the evaluation's batches from the training loop's end, so
    an evaluation does not begin an epoch. (Without Python frames nothing tells a mid-epoch
    evaluation run with grad on from an epoch's end: a documented limit, not tested.)
    Every forward's mode is read from module.training, the first one's too. late: the loader
    judges no class before the job's 12th forward (its first epoch has 8), as when it is
    starved of CPU: BPF reads `training` from the first call on all the same (before it did,
    an epoch was split in three on 2 busy cores, and in four with this)."""
    stack = stack_of(request, stack_name)
    env = (("CIRRON_TEST_VERDICT_AFTER", "12"),) if verdicts == "late" else ()
    sessions, _, _, _ = traced(h, stack, "always", "idiom_evalmode.py", "--eval-every", "2",
                               env=env)
    s = the_job(sessions)
    epochs, steps = check_training(s)
    for e in epochs:
        evals = [f for f in descendants(s, e, "forward") if f["attrs"]["mode"] == "eval"]
        assert len(evals) == (BATCHES // 2) * VAL, (e["index"], len(evals))
        assert all(s.spans[f["parent_id"]]["name"] == "epoch" for f in evals)
        assert all(f["attrs"]["mode_source"] == "module.training"
                   for f in descendants(s, e, "forward")), e["index"]
