# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Epochs where real loops part from ours (issue 44): tests/workloads/epoch_loops.py under the
real observer, from the start (`run`) and attached mid-run, on the host (Debian's torch 1.13),
the trixie root (Debian's 2.6) and the venv (the official 2.13 wheel):

- gan: a new iterator over the same DataLoader begins an epoch whatever the loop does per
  batch (two backwards before the first of two optimizer steps, a forward with no backward,
  pictures dumped under no_grad) or between epochs (state dicts saved; 2 loader workers shut
  down and forked again): each epoch's StopIteration __next__ is its `exhausted` data_load,
  never a second data_load of the next epoch's first step.
- sliced: no DataLoader; a validation under no_grad() + model.eval() after each epoch ends
  it, as an `eval` span under the epoch over the validation's time; with Python frames its
  forwards (mode=eval) are inside it. Parameters updated by hand after clip_grad_norm_ (its
  own no_grad region on torch 2), or an SGD step.
Exact counts against what the job did and printed."""
import re
import signal
from pathlib import Path

import pytest

from conftest import ROOT, read_spool, unavailable
from test_torch_tree import HOST_PYTHON, check_well_formed, children, named

W = ROOT / "tests" / "workloads"
EPOCHS, BATCHES, VAL = 3, 4, 3
SLACK_NS = 1_000_000    # the job's wall clock against the observer's (mapped from BPF's)

pytestmark = pytest.mark.timeout(300)


def stack_argv(request, name):
    """The argv that runs epoch_loops.py on a stack (its fixtures made)."""
    request.getfixturevalue("bpf")
    if name == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return [HOST_PYTHON, str(W / "epoch_loops.py")]
    if name == "venv":
        return [str(request.getfixturevalue("venv") / "bin" / "python"),
                str(W / "epoch_loops.py")]
    return ["chroot", str(request.getfixturevalue("trixie_root")), "python3",
            "/work/epoch_loops.py"]


def the_job(sessions):
    """The one session that is a job; any other is a helper of it (a loader worker)."""
    jobs = [s for s in sessions.values() if s.root["attrs"].get("role") != "helper"]
    assert len(jobs) == 1, {s.id: s.root["attrs"].get("role") for s in sessions.values()}
    for s in sessions.values():
        if s is not jobs[0]:
            assert s.root["attrs"]["helper_of"] == jobs[0].root["attrs"]["pid"]
    return jobs[0]


def run(h, argv, *args, level="off"):
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--python-frames", level, "--", *argv, *args,
                   path=root)
    assert p.finish(240) == 0, p.err.text[-3000:]
    assert "DONE" in p.out.text, p.out.text[-2000:]
    return the_job(read_spool(root)), p.out.text


def attached(h, argv, *args, epochs=3):
    """The job runs epochs until killed; attached once its first epoch is over, detached
    once epoch[epochs] closed (epoch[0] is the one the attach came into)."""
    job = h.start([*argv, *args, "--epochs-forever", "--step-sleep", "20"])
    job.out.wait_for(r"^EPOCH 0 ", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-p", job.pid, "--output", "spool,stdout", path=root)
    obs.out.wait_for(rf"^\[cirron\] epoch\[{epochs}\] ", timeout=180)
    obs.signal(signal.SIGINT)
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    job.popen.kill()
    s = the_job(read_spool(root))
    assert s.root["attrs"]["attached_mid_run"] is True
    return s


def whole_epochs(s):
    """Epochs seen from their start to their end: closed, after the one attached into."""
    return [e for e in named(s, "epoch") if e["status"] == "ok" and e["index"] >= 1]


# ---- gan ----------------------------------------------------------------------------------------

def check_gan_steps(s, steps, frames=False):
    for st in steps:
        got = {n: len(children(s, st, n)) for n in ("data_load", "backward", "optimizer_step")}
        assert got == {"data_load": 1, "backward": 3, "optimizer_step": 2}, (st["index"], got)
        assert [o["attrs"]["optimizer"] for o in children(s, st, "optimizer_step")] == \
            ["Adam.step", "Adam.step"]
        fwd = children(s, st, "forward")
        if frames:  # 4 model calls a batch, a 5th for the picture at an epoch's first batch
            assert len(fwd) in (4, 5) and all("timing" not in f["attrs"] for f in fwd), \
                (st["index"], [f["attrs"] for f in fwd])


def check_gan_epochs(s, epochs):
    """Each epoch: its BATCHES steps, then its loop's end, the one data_load under it."""
    for e in epochs:
        steps = children(s, e, "step")
        assert len(steps) == BATCHES, (e["index"], [len(children(s, x, "step")) for x in epochs])
        loads = children(s, e, "data_load")
        assert [d["attrs"].get("exhausted") for d in loads] == [True], \
            (e["index"], [d["attrs"] for d in loads])
        assert loads[0]["start_ns"] >= max(st["end_ns"] for st in steps)


GAN = [pytest.param(st, lv, extra, id="-".join((st, lv) + extra).replace("--", ""))
       for st, lv, extra in (("host", "off", ()), ("trixie", "off", ()), ("venv", "off", ()),
                             ("venv", "always", ()), ("host", "always", ()),
                             ("host", "off", ("--persistent",)),
                             ("venv", "off", ("--workers", "0")),
                             ("trixie", "off", ("--data", "sqlite")))]


@pytest.mark.parametrize("stack_name,level,extra", GAN)
def test_gan_epochs_from_the_start(h, request, stack_name, level, extra):
    """3 epochs of 4 batches: 3 epochs, 12 steps of one batch, 3 backwards and 2 optimizer
    steps each, every epoch's StopIteration __next__ its exhausted data_load."""
    argv = stack_argv(request, stack_name)
    s, out = run(h, argv, "--loop", "gan", "--epochs", str(EPOCHS), "--batches", str(BATCHES),
                 *extra, level=level)
    assert out.count("EPOCH ") == EPOCHS
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert [e["index"] for e in epochs] == list(range(EPOCHS))
    steps = named(s, "step")
    assert [st["index"] for st in steps] == list(range(EPOCHS * BATCHES))
    check_gan_steps(s, steps, frames=level == "always")
    check_gan_epochs(s, epochs)


@pytest.mark.parametrize("stack_name", ["host", "trixie", "venv"])
def test_gan_epochs_attached(h, request, stack_name):
    """Attached mid-run: every epoch seen whole holds its 4 steps and its loop's end."""
    s = attached(h, stack_argv(request, stack_name), "--loop", "gan", "--batches",
                 str(BATCHES))
    epochs = whole_epochs(s)
    assert len(epochs) >= 2, [(e["index"], e["status"]) for e in named(s, "epoch")]
    check_gan_epochs(s, epochs)
    check_gan_steps(s, [st for e in epochs for st in children(s, e, "step")])


# ---- sliced: no DataLoader ---------------------------------------------------------------------

def validations(out):
    return {int(m[1]): (int(m[2]), int(m[3]))
            for m in re.finditer(r"^VAL (\d+) start_ns=(\d+) end_ns=(\d+)$", out, re.M)}


def check_sliced_epochs(s, epochs, optimizer, frames=False, val=None):
    """Each epoch: BATCHES steps, then one eval span, which ends it; val: the job's own
    validation times by epoch index (from the start only), inside their eval span."""
    for e in epochs:
        steps = children(s, e, "step")
        assert len(steps) == BATCHES, (e["index"], [len(children(s, x, "step")) for x in epochs])
        for st in steps:
            assert len(children(s, st, "backward")) == 1, st["index"]
            assert len(children(s, st, "optimizer_step")) == (1 if optimizer else 0)
        (ev,) = children(s, e, "eval")
        assert ev["start_ns"] >= max(st["end_ns"] for st in steps)
        assert ev["end_ns"] == e["end_ns"], "the evaluation ends the epoch"
        assert ev["end_ns"] > ev["start_ns"]
        if val is not None:
            start, end = val[e["index"]]
            assert ev["start_ns"] - SLACK_NS <= start and end <= ev["end_ns"] + SLACK_NS, \
                (ev["start_ns"], ev["end_ns"], start, end)
        fwd = children(s, ev, "forward")
        if frames:
            assert len(fwd) == VAL and ev["attrs"]["forwards"] == VAL, [f["attrs"] for f in fwd]
            assert all(f["attrs"]["mode"] == "eval" for f in fwd)
        else:
            assert not fwd


SLICED = [pytest.param(st, lv, opt, id=f"{st}-{lv}-{opt}")
          for st, lv, opt in (("host", "off", "hand"), ("trixie", "off", "hand"),
                              ("venv", "off", "hand"), ("venv", "off", "sgd"),
                              ("trixie", "off", "sgd"), ("host", "always", "hand"),
                              ("venv", "always", "hand"), ("venv", "always", "sgd"))]


@pytest.mark.parametrize("stack_name,level,optimizer", SLICED)
def test_validation_ends_epochs_without_dataloader(h, request, stack_name, level, optimizer):
    """3 epochs of 4 steps sliced from a tensor, each followed by a validation of 3 batches
    under no_grad() and model.eval(): 3 epochs, each with its 4 steps and an eval span over the
    validation's time (its 3 forwards inside it with Python frames)."""
    argv = stack_argv(request, stack_name)
    s, out = run(h, argv, "--loop", "sliced", "--epochs", str(EPOCHS), "--batches",
                 str(BATCHES), "--val-batches", str(VAL), "--optimizer", optimizer,
                 level=level)
    check_well_formed(s)
    epochs = named(s, "epoch")
    assert [e["index"] for e in epochs] == list(range(EPOCHS)), \
        [(e["index"], len(children(s, e, "step"))) for e in epochs]
    assert len(named(s, "step")) == EPOCHS * BATCHES
    check_sliced_epochs(s, epochs, optimizer == "sgd", frames=level == "always",
                        val=validations(out))


@pytest.mark.parametrize("stack_name,optimizer", [("host", "hand"), ("venv", "sgd"),
                                                  ("trixie", "hand")])
def test_validation_ends_epochs_attached(h, request, stack_name, optimizer):
    """Attached mid-run (--epoch-steps' default of 1000 far above an epoch): every epoch seen
    whole holds its steps and its evaluation."""
    s = attached(h, stack_argv(request, stack_name), "--loop", "sliced", "--batches",
                 str(BATCHES), "--val-batches", str(VAL), "--optimizer", optimizer)
    epochs = whole_epochs(s)
    assert len(epochs) >= 2, [(e["index"], e["status"]) for e in named(s, "epoch")]
    check_sliced_epochs(s, epochs, optimizer == "sgd")
