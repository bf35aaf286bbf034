# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Loops as real code writes them (tests/workloads/loops.py) under the real observer, on the
host (Python 3.11 + torch 1.13) and in the trixie root (Python 3.13 + torch 2.6): closure
optimizers, two optimizers per batch, updates by hand with and without a DataLoader,
inference_mode validation, and a run that switches from updates by hand to an optimizer.
Exact counts and nesting."""
from pathlib import Path

import pytest

from conftest import ROOT, only_session, unavailable
from test_torch_tree import (HOST_PYTHON, HOST_PYTHON_MINOR, HOST_TORCH_MAJOR, Target,
                             check_well_formed, children, named)

LOOPS = ROOT / "tests" / "workloads" / "loops.py"
EPOCHS, BATCHES, VAL, MAX_ITER = 2, 3, 2, 3

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=["host", "trixie"])
def target(request, bpf):
    if request.param == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return Target("host", [HOST_PYTHON, str(LOOPS)], HOST_TORCH_MAJOR, HOST_PYTHON_MINOR)
    root = request.getfixturevalue("trixie_root")
    return Target("trixie", ["chroot", str(root), "python3", "/work/loops.py"], 2, 13)


def run_loop(h, target, loop):
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--", *target.argv, "--loop", loop,
                   "--epochs", str(EPOCHS), "--batches", str(BATCHES),
                   "--val-batches", str(VAL), "--max-iter", str(MAX_ITER), path=root)
    rc = p.finish(180)
    assert rc == 0, f"run exited {rc}:\n{p.err.text}"
    assert "DONE" in p.out.text
    s = only_session(root)
    check_well_formed(s)
    return s


def kids(s, span, name):
    return len(children(s, span, name))


def boundaries(s):
    return [st["attrs"].get("boundary") for st in named(s, "step")]


def exhausted(s):
    return [d for d in named(s, "data_load") if d["attrs"].get("exhausted")]


def test_closure_optimizer_lbfgs(h, target):
    s = run_loop(h, target, "lbfgs")
    steps = named(s, "step")
    assert len(steps) == EPOCHS * BATCHES, "one step per optimizer.step(closure)"
    assert boundaries(s) == ["optimizer_step"] * len(steps)
    for st in steps:
        opts = children(s, st, "optimizer_step")
        assert len(opts) == 1 and not kids(s, st, "backward") and not kids(s, st, "forward")
        o = opts[0]
        assert o["attrs"]["optimizer"] == "LBFGS.step" and "truncated" not in o["attrs"]
        # tolerance 0: exactly max_iter closure calls, each zero_grad + forward + backward
        assert kids(s, o, "backward") == MAX_ITER
        assert kids(s, o, "zero_grad") == MAX_ITER
        fw = children(s, o, "forward")
        assert len(fw) == MAX_ITER and all(f["attrs"]["mode"] == "train" for f in fw)


def test_two_optimizers_per_batch_gan(h, target):
    s = run_loop(h, target, "gan")
    epochs = named(s, "epoch")
    assert len(epochs) == EPOCHS
    steps = named(s, "step")
    assert len(steps) == EPOCHS * BATCHES, "one step per batch"
    for st in steps:
        assert kids(s, st, "data_load") == 1
        assert kids(s, st, "backward") == 2
        assert kids(s, st, "forward") == 2
        opts = children(s, st, "optimizer_step")
        assert [o["attrs"]["optimizer"] for o in opts] == ["Adam.step", "Adam.step"]
    assert boundaries(s) == ["optimizer_step"] * len(steps)
    for e in epochs:
        assert len(children(s, e, "step")) == BATCHES
        assert [d["attrs"].get("exhausted") for d in children(s, e, "data_load")] == [True]


def test_manual_updates_without_dataloader(h, target):
    s = run_loop(h, target, "manual")
    steps = named(s, "step")
    assert len(steps) == EPOCHS * BATCHES, "one step per backward"
    assert boundaries(s) == ["backward"] * len(steps)
    assert not named(s, "data_load") and not named(s, "optimizer_step")
    for st in steps:
        assert kids(s, st, "backward") == 1
    # the first backward has nothing before it to infer a forward from
    assert [kids(s, st, "forward") for st in steps] == [0] + [1] * (len(steps) - 1)


def test_manual_updates_with_dataloader(h, target):
    s = run_loop(h, target, "manual-dl")
    epochs = named(s, "epoch")
    assert len(epochs) == EPOCHS
    steps = named(s, "step")
    assert len(steps) == EPOCHS * BATCHES, "one step per batch"
    assert boundaries(s) == ["data_load"] * len(steps)
    for st in steps:
        assert (kids(s, st, "data_load"), kids(s, st, "forward"), kids(s, st, "backward")) == \
            (1, 1, 1)
    for e in epochs:
        assert len(children(s, e, "step")) == BATCHES
    assert len(exhausted(s)) == EPOCHS


def test_inference_mode_validation(h, target):
    s = run_loop(h, target, "inference")
    epochs = named(s, "epoch")
    assert len(epochs) == EPOCHS, "validation must not start epochs"
    assert len(named(s, "step")) == EPOCHS * BATCHES
    for st in named(s, "step"):
        assert kids(s, st, "data_load") == 1 and kids(s, st, "optimizer_step") == 1
    for e in epochs:
        loads = children(s, e, "data_load")
        # the training iterator's end, VAL validation batches, the validation iterator's end
        assert [bool(d["attrs"].get("exhausted")) for d in loads] == \
            [True] + [False] * VAL + [True], e["index"]
        evals = [f for f in children(s, e, "forward") if f["attrs"]["mode"] == "eval"]
        assert len(evals) == VAL


def test_optimizer_appears_later(h, target):
    s = run_loop(h, target, "mixed")
    epochs = named(s, "epoch")
    assert len(epochs) == 2 * EPOCHS
    steps = named(s, "step")
    assert len(steps) == 2 * EPOCHS * BATCHES
    n = EPOCHS * BATCHES
    assert boundaries(s) == ["data_load"] * n + ["optimizer_step"] * n
    for i, st in enumerate(steps):
        assert kids(s, st, "data_load") == 1 and kids(s, st, "backward") == 1
        assert kids(s, st, "optimizer_step") == (1 if i >= n else 0)
