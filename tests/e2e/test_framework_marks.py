# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Marks from what HF Trainer, Lightning and Keras 3 (torch backend) print, as the venv's
releases (tests/scripts/venv-requirements.txt) print it, under the real observer: the job's
stdout goes to a file, or to a terminal (tests/workloads/ptyrun.py), and keeps every byte it
wrote; the test reads each printed metric from those bytes with its own, framework-specific
reading (ast.literal_eval of HF's log dicts, the postfix of Lightning's tqdm bar, Keras's
frames, rich's rows and tables) and checks value by value that each comes back as a mark
with that value and kind, on the span it was printed in: a step for a step's value, its
epoch for an end-of-epoch one (kind=summary). Nothing else gives a mark: the frameworks'
banners (`TPU available: False, using: 0 TPU cores`), model summaries (`Total params: 610`),
the logger's version (v_num), warnings with numbers in them, bars' percentages and rates.

A bar redraws its values: a value shown again unchanged is no new mark (the test folds a
name's repeats the same way). Lightning draws rich's display from a thread too: there the
frames' timing is the thread's, and which epoch a summary belongs to comes from the job's own
CSV log (metrics.csv)."""
import ast
import csv
import os
import re
from collections import Counter

import pytest

from conftest import ROOT, only_session
from test_torch_tree import check_well_formed, named

WORKLOAD = ROOT / "tests" / "workloads" / "frameworks.py"
PTYRUN = ROOT / "tests" / "workloads" / "ptyrun.py"
pytestmark = pytest.mark.timeout(300)

EPOCHS, BATCHES, VAL = 2, 6, 2
CSI = re.compile(r"\x1b\[[0-9;?]*([@-~])")
OSC = re.compile(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


@pytest.fixture
def fw_venv(bpf, venv):
    return venv


def run(h, venv, framework, *args, terminal=0):
    """The job under `cirron-probe run`; returns (session, stdout bytes, stderr bytes).
    terminal=N: stdout is a terminal of N columns."""
    out, err, logs = h.tmp / "job.out", h.tmp / "job.err", h.tmp / "logs"
    job = [str(venv / "bin" / "python"), str(WORKLOAD), framework, "--progress", "--epochs",
           str(EPOCHS), "--batches", str(BATCHES), "--val-batches", str(VAL), "--log-dir",
           str(logs), *args]
    if terminal:
        cmd = [str(venv / "bin" / "python"), str(PTYRUN), str(out), str(err), str(terminal),
               "--", *job]
    else:
        cmd = ["/bin/sh", "-c", f'exec "$@" >{out} 2>{err}', "sh", *job]
    env = dict(os.environ, HF_HUB_OFFLINE="1", KERAS_BACKEND="torch",
               TRANSFORMERS_NO_ADVISORY_WARNINGS="1")
    env.pop("COLUMNS", None)
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--python-frames", "always", "--", *cmd,
                   path=root, env=env)
    rc = p.finish(280)
    assert rc == 0, f"run exited {rc}:\n{p.err.text[-3000:]}\n{err.read_text()[-3000:]}"
    data = out.read_bytes()
    assert data.rstrip().endswith(b"DONE"), data[-500:]
    s = only_session(root)
    check_well_formed(s)
    assert len(named(s, "epoch")) == EPOCHS
    return s, data, err.read_bytes()


def marks(s):
    """[(name, value, kind, source, span, ts_ns)] of the printed values, in time order."""
    got = [(m["name"], m["value"], m["kind"], m["source"], sp, m["ts_ns"])
           for sp in s.spans.values() for m in sp["marks"] if "value" in m]
    return sorted(got, key=lambda g: g[5])


def ancestor(s, span, name):
    """span or the one above it named name (the innermost span open at a write may be a
    forward or an optimizer step inside the step)."""
    while span and span["name"] != name:
        span = s.spans.get(span["parent_id"])
    return span


def epoch_of(s, span):
    e = ancestor(s, span, "epoch")
    return e["index"] if e else None


def frames(data):
    """The job's output as the terminal shows it in time: (text, end) pieces, end being
    "\\n" (the text stays), "\\r" or "\\b" (a bar will redraw it) or "move" (a cursor move),
    colours and hyperlinks removed."""
    text = OSC.sub("", data.decode())
    text = CSI.sub(lambda m: "\x00" if m.group(1) in "ABEFGHJKfd" else "", text)
    out, cur = [], ""
    for ch in text:
        if ch in "\n\r\b\x00":
            out.append((cur, {"\x00": "move"}.get(ch, ch)))
            cur = ""
        else:
            cur += ch
    if cur:
        out.append((cur, ""))
    return out


def fold(printed):
    """A name's values as a redrawn display gives them: a value that repeats the name's last
    one (and its kind, or a summary's) is no new mark."""
    last, out = {}, []
    for e in printed:
        name, value, kind = e[0], e[1], e[2]
        prev = last.get(name)
        if prev and prev[0] == value and (prev[1] == "summary" or kind == "point"):
            continue
        last[name] = (value, kind)
        out.append(e)
    return out


def check(s, expected, source="stdout"):
    """Each expected (name, value, kind, where) is a mark, and there is no other. where:
    ("step", i), ("epoch", e), ("in_epoch", e): the step or a span in it, the epoch itself
    (summaries sit on it), a span under epoch e; i and e may be ranges of the indexes
    allowed (a frame a thread draws); ("from_step", (i, e)): step i or a later span of
    epoch e."""
    got = marks(s)
    steps = {x["index"]: x for x in named(s, "step")}
    assert Counter((n, v, k, src) for n, v, k, src, *_ in got) == \
        Counter((n, v, k, source) for n, v, k, _ in expected), \
        (sorted(set((n, v, k) for n, v, k, *_ in got) ^ set((n, v, k) for n, v, k, _ in expected)))
    spans = {}
    for n, v, k, _, sp, ts in got:
        spans.setdefault((n, v, k), []).append((sp, ts))
    for n, v, k, (what, idx) in expected:
        sp, ts = spans[(n, v, k)].pop(0)
        allowed = idx if isinstance(idx, range) else (idx,)
        if what == "step":
            st = ancestor(s, sp, "step")
            assert st and st["index"] in allowed, (n, v, sp["name"], st and st["index"], idx)
        elif what == "from_step":
            st = ancestor(s, sp, "step")
            assert epoch_of(s, sp) == idx[1] and (not st or st["index"] >= idx[0]) and \
                ts >= steps[idx[0]]["start_ns"], \
                (n, v, sp["name"], st and st["index"], idx)
        elif what == "epoch":
            assert sp["name"] == "epoch" and sp["index"] in allowed, \
                (n, v, sp["name"], sp["index"], idx)
        else:
            assert epoch_of(s, sp) in allowed, (n, v, sp["name"], epoch_of(s, sp), idx)
    print(f"{len(expected)} marks checked value by value")
    return len(expected)


def summary_name(name):
    return name.startswith(("val_", "eval_", "test_")) or name.endswith("_epoch")


# ---- HF Trainer ---------------------------------------------------------------------------

def test_hf_trainer(h, fw_venv):
    """transformers 5 logs every 2 steps a dict of quoted numbers ({'loss': '3.646', ...,
    'epoch': '0.25'}), at each epoch's end one with eval_* values, at the end the run's, and
    the job prints evaluate()'s floats. Each value a mark: a step's on that step (the epoch
    says which: epoch * steps per epoch), an epoch's (eval_*, or a whole-number epoch) a
    summary on its epoch. Its tqdm bars and warnings (stderr) give none."""
    s, out, err = run(h, fw_venv, "transformers")
    dicts = [ast.literal_eval(line) for line in out.decode().splitlines()
             if line.startswith("{")]
    assert any(isinstance(d.get("loss"), str) for d in dicts), "transformers 5 quotes them"
    assert b"it/s]" in err and b"got 50256" in err, err[-500:]
    expected = []
    for d in dicts:
        vals = {k: float(v) for k, v in d.items()}
        epoch = vals["epoch"]
        summary = any(k.startswith("eval_") for k in vals) or epoch == int(epoch)
        where = ("epoch", round(epoch) - 1) if summary else ("step", round(epoch * BATCHES) - 1)
        expected += [(k, v, "summary" if summary else "point", where) for k, v in vals.items()]
    assert len(dicts) >= EPOCHS * BATCHES // 2 + EPOCHS + 2
    n = check(s, expected)
    assert n >= 40, n


# ---- Lightning ----------------------------------------------------------------------------

NOT_METRICS = (b"TPU available: False, using: 0 TPU cores", b"Trainable params")


def test_lightning_tqdm_bar(h, fw_venv):
    """TQDMProgressBar: 'Epoch 0:  50%|###| 3/6 [00:00<00:00, 8.28it/s, v_num=0,
    train_loss_step=0.686, val_loss=0.726, val_acc=0.333, train_loss_epoch=0.724]' redrawn
    with \\r on stdout. train_loss_step on the step of the batch the frame counts, val_* and
    *_epoch summaries on the frame's epoch; v_num (the logger's version), the bar's counts,
    rates and percentages, the banners on stderr and the model summary give none; then
    validate()'s results table."""
    s, out, err = run(h, fw_venv, "lightning", "--bar", "tqdm")
    assert NOT_METRICS[0] in err and NOT_METRICS[1] in out and b"v_num=" in out
    printed = []
    for text, _ in frames(out):
        m = re.match(r"Epoch (\d+): +\d+%\|.*?\| (\d+)/(\d+) \[[^,\]]*, [^,\]]*, (.*)\]$", text)
        if not m:
            continue
        e, n, total = int(m.group(1)), int(m.group(2)), int(m.group(3))
        assert total == BATCHES
        for name, value in re.findall(r"(\w+)=([^,\]]+)", m.group(4)):
            if name == "v_num":
                continue
            kind = "summary" if summary_name(name) else "point"
            where = ("epoch", e) if kind == "summary" else ("step", e * BATCHES + n - 1)
            printed.append((name, float(value), kind, where))
    expected = fold(printed) + table_rows(out, EPOCHS - 1)
    assert {"train_loss_step", "val_loss", "val_acc", "train_loss_epoch"} <= \
        {e[0] for e in expected}
    n = check(s, expected)
    assert n >= EPOCHS * 4, n


def table_rows(out, epoch):
    """validate()'s table, '│ val_loss │ 0.6941049098968506 │': summaries of the last epoch."""
    rows = re.findall(r"^│\s+(\w+)\s+│\s+([-0-9.e]+)\s+│\s*$", CSI.sub("", out.decode()),
                      re.M)
    assert sorted(r[0] for r in rows) == ["val_acc", "val_loss"], rows
    return [(name, float(v), "summary", ("epoch", epoch)) for name, v in rows]


def test_lightning_rich_to_a_file(h, fw_venv):
    """Lightning's default bar with rich installed (the venv has it) is rich's. Not on a
    terminal, rich prints its display once, when it stops, wrapping the metrics at 80
    columns: 'train_loss_step:' at the end of one line, '0.724 val_loss:' on the next. The
    values: the last epoch's, summaries on it, train_loss_step in it."""
    s, out, err = run(h, fw_venv, "lightning")
    assert NOT_METRICS[0] in err and "━".encode() in out and b"v_num:" in out
    text = CSI.sub("", out.decode())
    block = text[text.rindex(f"Epoch {EPOCHS - 1}/{EPOCHS - 1}"):]
    block = block[:block.index("\nValidation")]
    assert "\n" in block, "rich wraps the metrics column"
    printed = []
    for name, value in re.findall(r"(\w+):\s+(-?[0-9.]+)", " ".join(block.split())):
        if name != "v_num":
            kind = "summary" if summary_name(name) else "point"
            printed.append((name, float(value), kind,
                            ("epoch" if kind == "summary" else "in_epoch", EPOCHS - 1)))
    assert len(printed) == 4, printed
    n = check(s, fold(printed) + table_rows(out, EPOCHS - 1))
    assert n == 6


def logged_epochs(h):
    """{(name, epoch)}: values of the job's own CSV log, to tell a summary's epoch."""
    (path,) = (h.tmp / "logs" / "lightning_logs").glob("version_*/metrics.csv")
    rows = list(csv.DictReader(path.open()))
    return [(k, float(v), int(r["epoch"])) for r in rows for k, v in r.items()
            if v and k not in ("epoch", "step")]


def test_lightning_rich_on_a_terminal(h, fw_venv):
    """On a terminal rich redraws its rows in place ('\\r ESC[2K ESC[1A ESC[2K ...', the
    metrics in rows under the bar's). Every value drawn is a mark, once until it changes:
    train_loss_step in the epoch its row names; each summary on the epoch the job logged
    that value for (metrics.csv, to the 3 decimals rich shows). Lightning has rich's thread
    draw the display (a "soft refresh" off Jupyter): a value logged at an epoch's end may
    first show once the next epoch's first batch is loaded, so on that epoch."""
    s, out, err = run(h, fw_venv, "lightning", terminal=120)
    assert b"\x1b[1A" in out and b"\x1b[2K" in out
    logged = logged_epochs(h)
    printed, epoch = [], None
    for text, _ in frames(out):
        m = re.match(r"\s*Epoch (\d+)/\d+ ", text)
        if m:
            epoch = int(m.group(1))
        if epoch is None or text.lstrip().startswith(("Validation", "┏", "┃", "│", "└", "┡")):
            continue
        for name, value in re.findall(r"(\w+): (-?\d+\.\d+)", text):
            if name == "v_num":
                continue
            v = float(value)
            if summary_name(name):
                near = [e for k, lv, e in logged if k == name and abs(lv - v) <= 0.0005]
                assert near, (name, v, logged)
                printed.append((name, v, "summary", ("epoch", range(min(near), min(near) + 2))))
            else:
                printed.append((name, v, "point", ("in_epoch", range(epoch, epoch + 2))))
    expected = fold(printed)
    assert {"train_loss_step", "val_loss", "train_loss_epoch"} <= {e[0] for e in expected}
    n = check(s, expected + table_rows(out, EPOCHS - 1))
    assert n >= 8, n


def test_lightning_tqdm_cut_by_the_terminal(h, fw_venv):
    """On a terminal of 90 columns tqdm cuts the postfix: 'val_acc=0.333, train_los'. A
    value the cut may have shortened (the last before the missing ']') is no mark; the
    rest are."""
    s, out, err = run(h, fw_venv, "lightning", "--bar", "tqdm", terminal=90)
    printed, cut = [], 0
    for text, _ in frames(out):
        m = re.match(r"Epoch (\d+): +\d+%\|.*?\| (\d+)/(\d+) \[[^,\]]*, [^,\]]*, (.*)$", text)
        if not m:
            continue
        e, n = int(m.group(1)), int(m.group(2))
        post = m.group(4)
        whole = post.endswith("]")
        cut += not whole
        pairs = re.findall(r"(\w+)=([^,\]]+)(?=[,\]])", post)
        for name, value in pairs:
            if name == "v_num":
                continue
            kind = "summary" if summary_name(name) else "point"
            where = ("epoch", e) if kind == "summary" else ("step", e * BATCHES + n - 1)
            printed.append((name, float(value), kind, where))
    assert cut, "no frame was cut: widen the postfix or narrow the terminal"
    n = check(s, fold(printed) + table_rows(out, EPOCHS - 1))
    assert n >= EPOCHS * 3, n


# ---- Keras 3 ------------------------------------------------------------------------------

def keras_expected(out):
    """Keras's frames: ' 3/6 ━━━━━━━━━━━━━━━━━━━━ 0s 6ms/step - loss: 1.2639 - mae: 0.8772',
    each ended by the next's '\\b\\b...\\r'; the epoch's last frame, with val_* values, stays
    (a newline): all its values are the epoch's (summaries). A frame's values that changed
    are marks on the step of the batch it counts, or later in its epoch (a later step, its
    validation): Keras 3 runs on_train_batch_end, which draws the bar, on a thread pool
    (CallbackList._async_train)."""
    printed, epoch = [], None
    for text, end in frames(out):
        m = re.match(r"Epoch (\d+)/\d+$", text)
        if m:
            epoch = int(m.group(1)) - 1
            continue
        m = re.match(r"\s*(\d+)/(\d+) .*?(?: - (\w+: .*))?$", text)
        if epoch is None or not m or not m.group(3):
            continue
        n = int(m.group(1))
        assert int(m.group(2)) == BATCHES
        pairs = re.findall(r"(\w+): (-?[0-9.]+)", m.group(3))
        summary = end == "\n" and any(k.startswith("val_") for k, _ in pairs)
        for name, value in pairs:
            printed.append((name, float(value), "summary" if summary else "point",
                            ("epoch", epoch) if summary else
                            ("from_step", (epoch * BATCHES + n - 1, epoch))))
    return fold(printed)


@pytest.mark.parametrize("terminal", [0, 120], ids=["file", "terminal"])
def test_keras_progress_bar(h, fw_venv, terminal):
    """model.fit(verbose=1) on the torch backend: its bar redrawn with \\b and \\r (to a file
    too), bold and coloured on a terminal; model.summary()'s counts give no mark."""
    s, out, err = run(h, fw_venv, "keras", terminal=terminal)
    assert b"\x08\x08\r" in out and b"Total params" in out
    expected = keras_expected(out)
    assert sum(e[2] == "summary" for e in expected) == EPOCHS * 4
    n = check(s, expected)
    assert n >= EPOCHS * 6, n


def test_keras_a_line_an_epoch(h, fw_venv):
    """verbose=2: '6/6 - 0s - 6ms/step - loss: 0.7350 - mae: 0.6508 - val_loss: 0.3298 -
    val_mae: 0.4913' once an epoch: four summaries on it."""
    s, out, err = run(h, fw_venv, "keras", "--verbose", "2")
    expected = keras_expected(out)
    assert [e[3] for e in expected] == [("epoch", e) for e in range(EPOCHS) for _ in range(4)]
    assert check(s, expected) == EPOCHS * 4
