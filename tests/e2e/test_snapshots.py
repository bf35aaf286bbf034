# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--snapshots: weights and gradients read from a running job's memory at each epoch's end
(tests/workloads/snapshots.py prints its own stats with torch there, then waits in a no_grad
region until the test has seen the snapshot). Stats match torch's for float32 and bfloat16
parameters, a non-contiguous view, with and without a grad, on Debian's torch 1.13, trixie's
2.6 and the official 2.13 wheel; sampled/full safetensors files open with the safetensors
package and hold the job's values."""
import json
import math
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, TIME_SCALE, assert_no_sanitizer_report, only_session, unavailable
from test_torch_tree import HOST_PYTHON, trixie_root  # noqa: F401 (trixie_root is a fixture)

WORKLOAD = ROOT / "tests" / "workloads" / "snapshots.py"
EPOCHS = 2
PARAMS = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "mix_bf16", "tview", "unused"}

pytestmark = pytest.mark.timeout(240)


class Env:
    def __init__(self, argv, script, gate_host, gate_target, save_host=None, save_target=None):
        self.argv, self.script = argv, script
        self.gate_host, self.gate_target = gate_host, gate_target
        self.save_host, self.save_target = save_host, save_target


@pytest.fixture(params=["host", "trixie", "venv"])
def env(request, bpf, tmp_path):
    if request.param == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        gate = tmp_path / "gate"
        return Env([HOST_PYTHON], str(WORKLOAD), gate, str(gate))
    if request.param == "venv":
        venv = request.getfixturevalue("venv")
        gate = tmp_path / "gate"
        return Env([str(venv / "bin" / "python")], str(WORKLOAD), gate, str(gate),
                   tmp_path, str(tmp_path))
    root = request.getfixturevalue("trixie_root")
    shutil.copy(WORKLOAD, root / "work" / "snapshots.py")
    gate = root / "work" / f"gate-{os.getpid()}"
    if gate.exists():
        gate.unlink()
    return Env(["chroot", str(root), "python3"], "/work/snapshots.py", gate,
               f"/work/{gate.name}")


def spool_snapshots(root):
    out = []
    for f in sorted((root / "spool").glob("*.json")):
        try:
            out += json.loads(f.read_text()).get("snapshots", [])
        except (json.JSONDecodeError, FileNotFoundError):
            pass    # renamed into place whole: a partial read is a file replaced meanwhile
    return out


def run_gated(h, env, *observer_args, extra=()):
    """Runs the workload under the observer; at each epoch's end waits for the epoch's
    snapshot in the spool, then lets the job go on. Returns (spool root, printed stats)."""
    os.mkfifo(env.gate_host)
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", *observer_args, "--", *env.argv, env.script,
                   "--epochs", str(EPOCHS), "--gate", env.gate_target, *extra, path=root)
    try:
        for epoch in range(EPOCHS):
            p.out.wait_for(rf"^EPOCH_END {epoch}$", timeout=120)
            deadline = time.monotonic() + 30 * TIME_SCALE
            while not any(s["epoch"] == epoch for s in spool_snapshots(root)):
                assert time.monotonic() < deadline, f"no snapshot of epoch {epoch}:\n{p.err.text}"
                time.sleep(0.05)    # polls the spool for the record: an event, not a delay
            with open(env.gate_host, "w") as g:
                g.write("go\n")
        rc = p.finish(120)
    finally:
        os.unlink(env.gate_host)
    assert rc == 0, f"run exited {rc}:\n{p.err.text}"
    assert "DONE" in p.out.text
    printed = {}
    for line in p.out.lines:
        if line.startswith("STATS "):
            _, epoch, name, js = line.split(" ", 3)
            printed[(int(epoch), name)] = json.loads(js)
    return root, printed


def close(a, b, what):
    assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8), f"{what}: {a} != {b}"


def check_stats(got, want, what):
    for k in ("mean", "std", "min", "max", "norm"):
        close(got[k], want[k], f"{what} {k}")
    assert got["count"] == want["count"] and got["nonfinite"] == 0
    # histc's and our bin edges may round an element at a bin edge differently
    assert sum(got["histogram"]) == want["count"]
    assert sum(abs(a - b) for a, b in zip(got["histogram"], want["histogram"])) <= 2, (
        f"{what} histogram {got['histogram']} vs {want['histogram']}")


def test_stats_match_torch(h, env):
    root, printed = run_gated(h, env)
    snaps = spool_snapshots(root)
    assert sorted(s["epoch"] for s in snaps) == list(range(EPOCHS))
    for s in snaps:
        assert s["consistency"] == "live" and s["mode"] == "stats" and "error" not in s, s
        assert s["model_found_by"] == "main_globals"
        assert s["bytes_read"] > 0 and s["duration_ms"] >= 0
        assert {p["name"] for p in s["params"]} == PARAMS
        for p in s["params"]:
            want = printed[(s["epoch"], p["name"])]
            check_stats(p["weights"], want["weights"], f"epoch {s['epoch']} {p['name']}")
            assert p["has_grad"] == (want["grad"] is not None), p["name"]
            if want["grad"] is None:
                assert "grad" not in p
            else:
                check_stats(p["grad"], want["grad"], f"epoch {s['epoch']} {p['name']} grad")
        by = {p["name"]: p for p in s["params"]}
        assert by["mix_bf16"]["dtype"] == "bfloat16" and by["tview"]["shape"] == [8, 12]
        assert not by["unused"]["has_grad"] and by["fc1.weight"]["has_grad"]
    sess = only_session(root)
    model = sess.root["attrs"]["model"]
    assert model["parameters"] == 12 * 16 + 16 + 16 * 4 + 4 + 16 + 96 + 5
    assert model["by_dtype_device"] == {"float32/cpu": model["parameters"] - 16,
                                        "bfloat16/cpu": 16}
    health = sess.health
    assert health["snapshots"] == EPOCHS and health["snapshot_bytes_total"] > 0


def test_model_from_forward(h, env):
    """With Python frames the model is the outermost forward's Module."""
    root, printed = run_gated(h, env, "--python-frames", "always")
    snaps = spool_snapshots(root)
    assert [s["model_found_by"] for s in snaps] == ["forward"] * EPOCHS
    for s in snaps:
        for p in s["params"]:
            check_stats(p["weights"], printed[(s["epoch"], p["name"])]["weights"], p["name"])


def test_cap_samples_and_says_so(h, env):
    """A cap below the model's bytes: stats from a sample, and the record says so."""
    root, printed = run_gated(h, env, "--snapshot-max-mb", "0.001")
    for s in spool_snapshots(root):
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
def test_safetensors_files(h, bpf, venv, tmp_path, mode, every):
    """In the venv: it has the safetensors package (a pinned dependency of transformers)."""
    gate = tmp_path / "gate"
    env = Env([str(venv / "bin" / "python")], str(WORKLOAD), gate, str(gate), tmp_path,
              str(tmp_path))
    root, printed = run_gated(h, env, "--snapshots", mode, "--sample-rate", str(1 / every),
                              extra=("--save", env.save_target))
    snaps = spool_snapshots(root)
    python = env.argv[0]
    for s in snaps:
        files = s["files"]
        assert files["weights"].endswith(f"/snapshots/{s['span_id']}/weights.safetensors")
        r = subprocess.run([python, "-c", COMPARE, json.dumps(files),
                            str(Path(env.save_host) / f"epoch{s['epoch']}.pt"), str(every)],
                           capture_output=True, text=True, timeout=120)
        assert "SAFETENSORS_OK" in r.stdout, r.stderr[-2000:]


def test_worker_thread_under_sanitizers(h, bpf, tmp_path):
    """Epochs end while the last one's snapshot may still be read on its thread (then
    skipped and counted): the ASan/UBSan build reports nothing, every epoch's end is a
    record or a skip, and every record is whole. The job waits at its last epoch's end until
    all are accounted for, then exits (the session's end joins the thread)."""
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    epochs = 6
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--snapshots", "full", "--", HOST_PYTHON,
                   str(WORKLOAD), "--epochs", str(epochs), "--gate", str(gate), "--gate-last",
                   san=True, path=root)
    p.out.wait_for(rf"^EPOCH_END {epochs - 1}$", timeout=120)
    deadline = time.monotonic() + 30 * TIME_SCALE
    while True:
        health = {}
        for f in sorted((root / "spool").glob("*.json")):
            try:
                health = json.loads(f.read_text()).get("health", health)
            except (json.JSONDecodeError, FileNotFoundError):
                pass
        if health.get("snapshots", 0) + health.get("snapshots_skipped_busy", 0) == epochs:
            break
        assert time.monotonic() < deadline, f"{health}\n{p.err.text}"
        time.sleep(0.05)    # polls the spool for the count: an event, not a delay
    with open(gate, "w") as g:
        g.write("go\n")
    assert p.finish(120) == 0, p.err.text
    assert_no_sanitizer_report(p.err.text)
    snaps = spool_snapshots(root)
    health = only_session(root).health
    assert health["snapshots"] == len(snaps) >= 1
    assert health["snapshots"] + health["snapshots_skipped_busy"] == epochs, health
    for s in snaps:
        assert "error" not in s and "cancelled" not in s, s
        assert {p["name"] for p in s["params"]} == PARAMS, s
        assert set(s["files"]) == {"weights", "gradients"}, s


SHAPES = {"fc1.weight": "16x12", "fc1.bias": "16", "fc2.weight": "4x16", "fc2.bias": "4",
          "mix_bf16": "4x4", "tview": "8x12", "unused": "5"}


def test_trace_shows_snapshots(h, env):
    """trace: per epoch a line and a table of parameter, shape, dtype, mean, std, norm and
    grad norm, the numbers torch printed (to the table's 4 significant digits)."""
    root, printed = run_gated(h, env)
    rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "trace", str(root)])
    assert rc == 0, err
    lines = out.splitlines()
    for epoch in range(EPOCHS):
        head = [i for i, l in enumerate(lines) if l.startswith(f"snapshot: epoch {epoch} (")]
        assert len(head) == 1, out
        assert "(stats, consistency=live, 7 parameters" in lines[head[0]], lines[head[0]]
        assert lines[head[0] + 1].split() == ["parameter", "shape", "dtype", "mean", "std",
                                              "norm", "grad", "norm"]
        rows = {}
        for l in lines[head[0] + 2:head[0] + 2 + len(PARAMS)]:
            cols = l.split()
            rows[cols[0]] = cols
        assert set(rows) == PARAMS, out
        for name, cols in rows.items():
            want = printed[(epoch, name)]
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
                                 str(root)])
    assert rc == 0, err
    (session,) = json.loads(out)
    records = session["snapshots"]
    assert sorted(r["epoch"] for r in records) == list(range(EPOCHS)), records
    for r in records:
        params = {p["name"]: p for p in r["params"]}
        assert set(params) == PARAMS
        for name, p in params.items():
            want = printed[(r["epoch"], name)]
            assert math.isclose(p["weights"]["norm"], want["weights"]["norm"], rel_tol=1e-5,
                                abs_tol=1e-6), (name, p, want)


def test_report_norm_per_layer(h, env, tmp_path):
    """report: a chart of each layer's weight norm at each epoch's end, drawn where torch's
    own numbers put it (the chart is 200 high, 24 below the axis, the maximum 8 from the top)."""
    from test_report import CHROMIUM, charts, check_page, report
    if not CHROMIUM.exists():
        unavailable("chromium is not installed (scripts/install-deps.sh installs it)")
    root, printed = run_gated(h, env)
    page = tmp_path / "report.html"
    report(h, root, page)
    dom, got = check_page(tmp_path, page, 1, "snapshots.png")
    series = got["s0-weight-norms"]
    layers = {"fc1", "fc2", "mix_bf16", "tview", "unused"}
    assert {name for name, _, _ in series} == layers, series
    assert all(pts == pairs == EPOCHS for _, pts, pairs in series), series
    want = {(layer, e): math.sqrt(sum(printed[(e, n)]["weights"]["norm"] ** 2 for n in PARAMS
                                      if n.split(".")[0] == layer))
            for layer in layers for e in range(EPOCHS)}
    top = max(want.values())
    svg = re.search(r'<svg class="chart" id="s0-weight-norms".*?</svg>', dom, re.S).group(0)
    for name, pts in re.findall(r'data-name="([^"]*)" data-points="\d+" stroke="[^"]*" '
                                r'points="([^"]*)"', svg):
        for e, xy in enumerate(pts.split()):
            y = float(xy.split(",")[1])
            assert abs(y - (176 - want[(name, e)] / top * 168)) < 0.2, (name, e, y)


def test_model_in_a_local(h, env):
    """`def main(): model = Net(); train(model)`, no Python frames: the model is found among
    the running frames' locals (CPython 3.11 on the host and in the venv, 3.13 in trixie),
    and its stats are torch's."""
    root, printed = run_gated(h, env, extra=("--local",))
    snaps = spool_snapshots(root)
    assert sorted(s["epoch"] for s in snaps) == list(range(EPOCHS))
    for s in snaps:
        assert "error" not in s and s["model_found_by"] == "frame_locals", s
        assert {p["name"] for p in s["params"]} == PARAMS
        for p in s["params"]:
            check_stats(p["weights"], printed[(s["epoch"], p["name"])]["weights"], p["name"])
