# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""TensorFlow jobs (the venv of tests/scripts/make-tf-venv.sh: pyenv's CPython 3.11,
tensorflow-cpu 2.21, Keras 3 and tf-keras), the training loops of tests/workloads/tf_loops.py
under the real observer: Keras model.fit with and without validation and callbacks, at
verbose 1 and 2, evaluate and predict, tf-keras, custom tf.GradientTape loops (eager, and the
step in a tf.function), attached mid-run, found by watch, and beside torch in one job.

The tree (docs/tree.md "TensorFlow"): epoch > step > function {data_load} (one compiled call
holds forward, backward and the update: no forward or backward made up inside it), eval runs
(validation, evaluate, predict) with a forward {mode=eval} per batch; marks from what Keras
printed, equal to History's values to the digits printed."""
import json
import os
import re
import shutil
import signal

import pytest

from conftest import ROOT, only_session, read_spool
from test_torch_tree import check_well_formed, children, named

WORKLOAD = ROOT / "tests" / "workloads" / "tf_loops.py"
pytestmark = pytest.mark.timeout(400)


@pytest.fixture
def tf(bpf, tf_venv):
    return tf_venv


def env_of(legacy=False):
    e = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if legacy:
        e["TF_USE_LEGACY_KERAS"] = "1"
    return e


def run(h, venv, *args, legacy=False, obs_args=()):
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", *obs_args, "--",
                   str(venv / "bin" / "python"), str(WORKLOAD), *args, path=root,
                   env=env_of(legacy))
    rc = p.finish(360)
    assert rc == 0, f"run exited {rc}:\n{p.err.text[-3000:]}\n{p.out.text[-2000:]}"
    assert "DONE" in p.out.text, p.out.text[-2000:]
    return only_session(root), p.out.text


def history(out):
    m = re.search(r"^HISTORY (.*)$", out, re.M)
    assert m, out[-2000:]
    return json.loads(m.group(1))


def epoch_marks(span):
    """The values printed at the epoch's end, on the epoch (summaries where the line held
    val_ values, else points), the last of each name."""
    return {m["name"]: m["value"] for m in sorted(span["marks"], key=lambda m: m["ts_ns"])}


def check_root(s, keras_package, keras_prefix):
    a = s.root["attrs"]
    assert a["framework"] == "tensorflow", a
    assert a["tensorflow_version"] == "2.21.0", a
    assert a["keras_package"] == keras_package and a["keras_version"].startswith(keras_prefix), a
    assert a["python_version"] == "3.11.7", a
    assert a["device"] == "cpu" and a["cuda_count"] == 0, a
    assert set(a["libraries"]) >= {"tensorflow", "tensorflow_python"}, a


def check_epochs(s, epochs, steps, val_batches, hist):
    """Epochs and steps exactly; a step is one training call with its batch read inside it;
    the validation under each epoch; the epoch's printed values equal History's."""
    es = named(s, "epoch")
    assert [e["index"] for e in es] == list(range(epochs)), [e["index"] for e in es]
    assert [x["index"] for x in named(s, "step")] == list(range(epochs * steps))
    for i, e in enumerate(es):
        st = children(s, e, "step")
        assert len(st) == steps, (i, len(st))
        for x in st:
            fns = children(s, x, "function")
            assert len(fns) == 1, x
            f = fns[0]
            assert f["attrs"]["mode"] == "train" and f["attrs"]["graph"] is True
            assert f["attrs"]["holds"] == "forward, backward, optimizer_step"
            assert len(children(s, f, "data_load")) == 1, "the batch read inside the call"
            assert not children(s, x, "forward") and not children(s, x, "backward"), \
                "nothing made up inside a compiled step"
        # evaluate() and predict() after fit may sit under its last epoch (docs/tree.md)
        evals = [v for v in children(s, e, "eval") if v["attrs"]["kind"] == "validation"]
        assert len(evals) == (1 if val_batches else 0), evals
        for ev in evals:
            assert ev["attrs"]["kind"] == "validation", ev["attrs"]
            fw = children(s, ev, "forward")
            assert len(fw) == val_batches and ev["attrs"]["batches"] == val_batches
            for f in fw:
                assert f["attrs"]["mode"] == "eval"
                assert len(children(s, f, "data_load")) == 1
        marks = epoch_marks(e)
        for k, values in hist.items():
            assert k in marks, (i, k, marks)
            assert abs(marks[k] - values[i]) < 5.1e-5, (i, k, marks[k], values[i])


def test_keras3_fit_with_validation(h, tf):
    """Keras 3's model.fit, 3 epochs of 5 batches, validation_data of 2 batches, verbose=2:
    the session names TensorFlow and Keras; each epoch its steps and its validation; the
    printed epoch lines' values (val_ ones too) on the epoch, equal to History's; a handful of
    uprobe hits a step."""
    s, out = run(h, tf, "fit", "--epochs", "3", "--batches", "5", "--val-batches", "2")
    check_well_formed(s)
    check_root(s, "keras", "3.")
    check_epochs(s, 3, 5, 2, history(out))
    # TensorFlow's anchors, all calls (validation's and the start's too) over the steps: a
    # handful a step (health's own figure also counts the dynamic linker's hits of a start)
    tf_hits = sum(p["hits"] + p["return_hits"] for p in s.health["probes"]
                  if p["group"] in ("tensorflow", "tensorflow_python") and p["attached"])
    assert tf_hits / s.health["steps"] < 8, (tf_hits, s.health["steps"], s.health["probes"])
    f = children(s, named(s, "step")[0], "function")[0]
    assert f["attrs"]["function"] == "multi_step_on_iterator", f["attrs"]
    assert f["attrs"]["class_source"] == "gradient_traced", f["attrs"]


def test_keras3_fit_progress_bar_and_callbacks(h, tf):
    """verbose=1 (the bar Keras redraws), validation_split, callbacks (EarlyStopping that never
    stops, a LambdaCallback that prints): epochs and steps as before; the bar's last values and
    the val_ ones on each epoch, equal to History's."""
    s, out = run(h, tf, "fit", "--epochs", "2", "--batches", "6", "--val-split", "0.25",
                 "--callbacks", "--verbose", "1")
    check_well_formed(s)
    assert "callback epoch 1 end" in out
    # validation_split keeps the last quarter of the 6 batches' samples: 4.5 batches to
    # train on (5 calls, the last partial), 1.5 to validate on (2 calls)
    check_epochs(s, 2, 5, 2, history(out))


def test_keras3_fit_without_validation_then_evaluate_and_predict(h, tf):
    """No validation: a new training iterator begins each epoch; then evaluate() on new data
    and predict(): eval runs of their own kinds, outside the epochs."""
    s, out = run(h, tf, "fit", "--epochs", "3", "--batches", "4", "--evaluate", "3",
                 "--predict", "2")
    check_well_formed(s)
    check_epochs(s, 3, 4, 0, history(out))
    evals = named(s, "eval")
    assert [e["attrs"]["kind"] for e in evals] == ["evaluate", "predict"], \
        [e["attrs"] for e in evals]
    assert [e["attrs"]["batches"] for e in evals] == [3, 2]
    ev = json.loads(re.search(r"^EVALUATE (.*)$", out, re.M).group(1))
    assert set(ev) >= {"loss", "accuracy"}


def test_tf_keras_fit(h, tf):
    """tf-keras (TF_USE_LEGACY_KERAS=1): one iterator for the whole fit, so each validation
    ends its epoch; its functions are named train_function, test_function, predict_function."""
    s, out = run(h, tf, "fit", "--epochs", "3", "--batches", "4", "--val-batches", "2",
                 "--evaluate", "2", "--predict", "2", legacy=True)
    check_well_formed(s)
    check_root(s, "tf_keras", "2.")
    check_epochs(s, 3, 4, 2, history(out))
    fns = {f["attrs"]["function"] for f in named(s, "function")}
    assert fns == {"train_function"}, fns
    kinds = [e["attrs"]["kind"] for e in named(s, "eval")]
    assert kinds == ["validation"] * 3 + ["evaluate", "predict"], kinds


@pytest.mark.parametrize("function", [False, True], ids=["eager", "tf_function"])
def test_gradient_tape_loop(h, tf, function):
    """A custom loop over a tf.data.Dataset with tf.GradientTape, 2 epochs of 5 batches. Eager:
    a step per gradient, its batch and its backward (tape.gradient runs the backward);
    in a tf.function: a step per call, its batch read before it. Each loop's last read (end of
    sequence) is kept as the epoch's exhausted data_load."""
    args = ["tape", "--epochs", "2", "--batches", "5"] + (["--function"] if function else [])
    s, out = run(h, tf, *args)
    check_well_formed(s)
    es = named(s, "epoch")
    assert len(es) == 2
    for e in es:
        st = children(s, e, "step")
        assert len(st) == 5
        for x in st:
            assert len(children(s, x, "data_load")) == 1
            if function:
                assert len(children(s, x, "function")) == 1
                assert not children(s, x, "backward")
            else:
                assert len(children(s, x, "backward")) == 1
                assert x["attrs"]["unseen"] == "forward, optimizer_step"
        ex = [d for d in children(s, e, "data_load") if d["attrs"].get("exhausted")]
        assert len(ex) == 1, "the loop's end"
    losses = [float(v) for v in re.findall(r"^epoch \d+ loss: ([0-9.]+)$", out, re.M)]
    marks = [m["value"] for sp in s.spans.values() for m in sp["marks"] if m["name"] == "loss"]
    assert sorted(marks) == sorted(losses), (marks, losses)


def test_attach_mid_run(h, tf):
    """A Keras 3 fit that trains until killed, attached once it printed its third epoch, left
    after the observer printed a validation: steps and validations as from the start (the
    functions were traced before the attach: the job's Python stack tells which is which), no
    signal sent."""
    job = h.start([str(tf / "bin" / "python"), str(WORKLOAD), "fit", "--forever",
                   "--batches", "8", "--val-batches", "2"], env=env_of())
    job.out.wait_for("^Epoch 3/", timeout=180)
    root = h.spool_root()
    obs = h.observer("attach", "-p", str(job.pid), "--output", "spool,stdout", path=root)
    obs.out.wait_count(r"^\[cirron\] eval\[\d+\] .*kind=validation", 2, timeout=180)
    obs.signal(signal.SIGINT)
    assert obs.finish(60) == 0, obs.err.text[-2000:]
    job.popen.kill()
    s = only_session(root)
    a = s.root["attrs"]
    assert a["attached_mid_run"] is True and a["framework"] == "tensorflow", a
    assert s.health["signals_sent"] == 0
    full = [e for e in named(s, "epoch") if e["status"] == "ok"][1:]  # the first: partial
    assert full, "a whole epoch seen"
    for e in full:
        assert len(children(s, e, "step")) == 8, e
        ev = children(s, e, "eval")
        assert len(ev) == 1 and ev[0]["attrs"]["kind"] == "validation"
        assert len(children(s, ev[0], "forward")) == 2
        marks = epoch_marks(e)
        assert {"loss", "accuracy", "val_loss", "val_accuracy"} <= set(marks), marks
    for f in named(s, "function"):
        assert f["attrs"]["function_class"] == "train", f["attrs"]


def test_watch_finds_tensorflow_jobs(h, tf, tmp_path):
    """The node agent picks up a TensorFlow job started after it (by --match on a path of this
    test's own) and gives it its whole tree."""
    d = tmp_path / "jobs"
    d.mkdir()
    shutil.copy(WORKLOAD, d / WORKLOAD.name)
    root = h.spool_root()
    agent = h.observer("watch", "-v", "--match", re.escape(str(d)), "--output", "spool,stdout",
                       path=root)
    agent.err.wait_for("watching for processes that load torch, TensorFlow", timeout=60)
    job = h.start([str(tf / "bin" / "python"), str(d / WORKLOAD.name), "fit", "--epochs", "2",
                   "--batches", "3", "--val-batches", "1"], env=env_of())
    assert job.finish(240) == 0, job.err.text[-2000:]
    agent.out.wait_for(r"^\[cirron\] cirron\.session ", timeout=60)
    agent.signal(signal.SIGINT)
    assert agent.finish(60) == 0, agent.err.text[-2000:]
    sessions = read_spool(root)
    assert len(sessions) == 1, sorted(sessions)
    s = next(iter(sessions.values()))
    check_well_formed(s)
    check_epochs(s, 2, 3, 1, history(job.out.text))


def test_tensorflow_and_torch_in_one_job(h, tf):
    """torch (Debian's 1.13) loaded beside TensorFlow, a torch backward after each Keras batch:
    the session is TensorFlow's (the SDK's precedence: transformers > tensorflow > torch), with
    torch_version beside it, and its tree is Keras's alone."""
    s, out = run(h, tf, "fit", "--with-torch", "--epochs", "2", "--batches", "3",
                 "--val-batches", "1")
    check_well_formed(s)
    a = s.root["attrs"]
    assert a["framework"] == "tensorflow" and a["torch_version"].startswith("1.13"), a
    assert "libtorch" in a["libraries"], a
    check_epochs(s, 2, 3, 1, history(out))
    assert not named(s, "backward") and not named(s, "optimizer_step")
