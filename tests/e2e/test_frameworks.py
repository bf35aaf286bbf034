# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Frameworks on the official torch wheel (the venv of tests/scripts/make-venv.sh: pyenv's
CPython 3.11, torch 2.13.0 CPU, transformers, lightning, keras): real training loops
(tests/workloads/frameworks.py) under the real observer with --python-frames always, so
forwards are exact (the model's outermost Module call). The session names the framework and
its version, read from the target's sys.modules.

Mode comes from the model's `training` flag, read at its call (mode_source=module.training),
for every call but the class's first (BPF learns where the flag lies from that one)."""
import os

import pytest

from conftest import ROOT, only_session
from test_torch_tree import check_well_formed, children, named

WORKLOAD = ROOT / "tests" / "workloads" / "frameworks.py"
pytestmark = pytest.mark.timeout(300)


# Runs traced once per framework and arguments: tests that read the same run share it
# (test_hf_trainer, test_hf_trainer_evaluation_under_epoch).
RUNS = {}


def run(h, venv, framework, *args, frames="always"):
    key = (str(venv), framework, args, frames)
    if key in RUNS:
        return RUNS[key]
    root = h.spool_root()
    env = dict(os.environ, HF_HUB_OFFLINE="1", KERAS_BACKEND="torch",
               TRANSFORMERS_NO_ADVISORY_WARNINGS="1")
    p = h.observer("run", "--output", "spool", "--python-frames", frames, "--",
                   str(venv / "bin" / "python"), str(WORKLOAD), framework, *args, path=root,
                   env=env)
    rc = p.finish(280)
    assert rc == 0, f"run exited {rc}:\n{p.err.text[-3000:]}"
    assert "DONE" in p.out.text
    RUNS[key] = only_session(root)
    return RUNS[key]


# HF's outermost Module call is GPT2LMHeadModel (its inner GPT2Model is never a forward of
# its own: runs that named it read the class after the object, or the process, was gone).
GPT2 = "GPT2LMHeadModel"


def model_forwards(s, model, parent=None):
    models = model if isinstance(model, tuple) else (model,)
    return [f for f in named(s, "forward") if f["attrs"].get("module") in models
            and (parent is None or f["parent_id"] == parent["span_id"])]


def check_session(s, framework, version_prefix):
    a = s.root["attrs"]
    assert a["framework"] == framework, a
    assert a["framework_version"].startswith(version_prefix), (a["framework"], a["framework_version"])
    assert a["torch_version"].startswith("2.13.0") and a["python_version"] == "3.11.7", a
    assert a["python_frames"] == "exact", a


@pytest.fixture
def fw_venv(bpf, venv):
    return venv


def test_hf_trainer(h, fw_venv):
    """HF Trainer, a tiny GPT-2 from a config, 2 epochs of 4 batches, an evaluation of 2
    batches after each epoch: one step per optimizer step, each with its batch, forward,
    backward and AdamW step; evaluation forwards (mode=eval) under the epoch."""
    s = run(h, fw_venv, "transformers", "--epochs", "2", "--batches", "4", "--val-batches", "2")
    check_well_formed(s)
    check_session(s, "transformers", "5.")
    epochs = named(s, "epoch")
    assert len(epochs) == 2
    steps = named(s, "step")
    assert [x["index"] for x in steps] == list(range(8))
    for e in epochs:
        assert len(children(s, e, "step")) == 4
    for st in steps:
        kids = children(s, st)
        counts = {n: sum(1 for k in kids if k["name"] == n)
                  for n in ("data_load", "forward", "backward", "optimizer_step")}
        assert counts == {"data_load": 1, "forward": 1, "backward": 1, "optimizer_step": 1}
        (fwd,) = children(s, st, "forward")
        assert fwd["attrs"]["module"] in GPT2 and fwd["attrs"]["mode"] == "train"
        (opt,) = children(s, st, "optimizer_step")
        assert opt["attrs"]["scope"] == "Optimizer.step#AdamW.step"


def check_module_training(s, model):
    """Model calls read `training` at the call (the first calls of a class, before the loader
    has told BPF where the flag lies, fall back to grad mode; none after): train in steps,
    eval under epochs."""
    read = set()
    fwd = sorted(model_forwards(s, model), key=lambda f: f["start_ns"])
    assert fwd
    for f in fwd:
        cls = f["attrs"]["module"]
        assert f["attrs"]["mode_source"] == "module.training" or cls not in read, f
        if f["attrs"]["mode_source"] == "module.training":
            read.add(cls)
        parent = s.spans[f["parent_id"]]["name"]
        assert f["attrs"]["mode"] == ("train" if parent in ("step", "optimizer_step")
                                      else "eval"), (parent, f)
    assert read, "no call read module.training"


def test_hf_trainer_evaluation_under_epoch(h, fw_venv):
    """HF's evaluation loop loads batches with grad on and runs only the model call under
    no_grad: each evaluation batch is one exact forward in mode=eval under its epoch, none in
    a step, and no epoch ends early."""
    s = run(h, fw_venv, "transformers", "--epochs", "2", "--batches", "4", "--val-batches", "2")
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert len(epochs) == 2
    evals = [f for f in model_forwards(s, GPT2) if f["attrs"]["mode"] == "eval"]
    assert len(evals) == 2 * 2, [f["attrs"] for f in named(s, "forward")]
    for e in epochs:
        assert len(children(s, e, "step")) == 4
        evals = [f for f in model_forwards(s, GPT2, e) if f["attrs"]["mode"] == "eval"]
        assert len(evals) == 2
        assert [d for d in children(s, e, "data_load") if not d["attrs"].get("exhausted")], \
            "evaluation batches are data_loads under the epoch"
    for st in named(s, "step"):
        assert all(f["attrs"]["mode"] == "train" for f in children(s, st, "forward"))
    check_module_training(s, GPT2)


def test_hf_trainer_gradient_accumulation(h, fw_venv):
    """gradient_accumulation_steps=2: Trainer fetches the 2 batches of an optimizer step
    (get_batch_samples) before training on them. One step per optimizer step, each with its
    2 data_loads, 2 forwards, 2 backwards and one AdamW step; evaluation under the epoch."""
    s = run(h, fw_venv, "transformers", "--epochs", "2", "--batches", "4", "--accumulate", "2",
            "--val-batches", "2")
    check_well_formed(s)
    check_session(s, "transformers", "5.")
    epochs = named(s, "epoch")
    assert len(epochs) == 2
    steps = named(s, "step")
    assert [x["index"] for x in steps] == list(range(4))
    for e in epochs:
        assert len(children(s, e, "step")) == 2
        assert len([f for f in model_forwards(s, GPT2, e) if f["attrs"]["mode"] == "eval"]) == 2
    for st in steps:
        assert len(children(s, st, "data_load")) == 2
        fwd = model_forwards(s, GPT2, st)
        assert len(fwd) == 2 and all(f["attrs"]["mode"] == "train" for f in fwd)
        assert len(children(s, st, "backward")) == 2
        (opt,) = children(s, st, "optimizer_step")
        assert opt["attrs"]["scope"] == "Optimizer.step#AdamW.step"
    check_module_training(s, GPT2)


def test_lightning(h, fw_venv):
    """Lightning Trainer.fit, accumulate_grad_batches=2, 2 epochs of 4 batches, validation of
    3 batches per epoch (under inference_mode, the model in eval mode). Lightning runs the
    stepping batch's forward and backward in a closure inside optimizer.step: one step per
    optimizer step with its 2 batches, 2 train forwards and 2 backwards (the second pair
    inside the optimizer step), validation forwards in mode=eval under the epoch."""
    s = run(h, fw_venv, "lightning", "--epochs", "2", "--batches", "4", "--accumulate", "2",
            "--val-batches", "3")
    check_well_formed(s)
    check_session(s, "lightning", "2.")
    epochs = named(s, "epoch")
    assert len(epochs) == 2
    steps = named(s, "step")
    assert [x["index"] for x in steps] == list(range(4))
    for st in steps:
        assert len(children(s, st, "data_load")) == 2
        (opt,) = children(s, st, "optimizer_step")
        assert opt["attrs"]["scope"] == "Optimizer.step#SGD.step"
        assert len(children(s, st, "backward")) == 1 and len(children(s, opt, "backward")) == 1
        fwd = model_forwards(s, "Model", st) + model_forwards(s, "Model", opt)
        assert len(fwd) == 2 and all(f["attrs"]["mode"] == "train" for f in fwd)
    for e in epochs:
        assert len(children(s, e, "step")) == 2
        evals = model_forwards(s, "Model", e)
        assert len(evals) == 3 and all(f["attrs"]["mode"] == "eval" for f in evals)
        assert len(children(s, e, "data_load")) == 3, "validation batches under the epoch"
    # every forward is the model's own call: none inferred
    assert all("module" in f["attrs"] for f in named(s, "forward"))
    check_module_training(s, "Model")


@pytest.mark.parametrize("frames", ["always", "off"])
def test_keras(h, fw_venv, frames):
    """Keras 3 on torch (model.fit, 2 epochs of 4 batches, validation of 2 batches): the
    framework, the epochs from Keras's DataLoader, a step per batch (Keras steps its own
    optimizer: boundary=data_load) with one forward of the whole model and one backward,
    validation forwards in mode=eval under the epoch. With Python frames the forward is
    exact (Sequential, a torch Module through a mixin base); Keras passes training=False as
    a call argument and never calls Module.eval(): mode comes from grad mode. Without them
    (the default) the epochs are whole all the same, although Keras never calls the
    loader's last __next__ (it knows the batch count) and disables grad in every training
    step before the backward (its metric updates) as its validation does around the model
    call; the forward is inferred."""
    s = run(h, fw_venv, "keras", "--epochs", "2", "--batches", "4", "--val-batches", "2",
            frames=frames)
    check_well_formed(s)
    if frames == "always":
        check_session(s, "keras", "3.")
    else:
        assert s.root["attrs"]["framework"] == "keras", s.root["attrs"]
        assert s.root["attrs"]["python_frames"] == "off", s.root["attrs"]
    assert not named(s, "optimizer_step"), "Keras steps its own optimizer"
    epochs = named(s, "epoch")
    assert len(epochs) == 2, [e["index"] for e in epochs]
    steps = named(s, "step")
    assert [x["index"] for x in steps] == list(range(8))
    for st in steps:
        assert st["attrs"]["boundary"] == "data_load"
        assert len(children(s, st, "data_load")) == 1
        (fwd,) = children(s, st, "forward")
        assert fwd["attrs"]["mode"] == "train", fwd
        if frames == "always":
            assert fwd["attrs"]["module"] == "Sequential", fwd
        else:
            assert fwd["attrs"]["timing"] == "inferred", fwd
        assert len(children(s, st, "backward")) == 1
    for e in epochs:
        assert len(children(s, e, "step")) == 4
        evals = (model_forwards(s, "Sequential", e) if frames == "always"
                 else children(s, e, "forward"))
        assert len(evals) == 2 and all(f["attrs"]["mode"] == "eval" for f in evals), evals
