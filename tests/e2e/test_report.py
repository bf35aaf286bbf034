# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""`report`: one self-contained HTML page, loaded from disk by headless Chromium (Debian's
package): no console errors, no request leaves the page, its script ran, every chart holds
the right number of points (one per step, or REPORT_MAX_POINTS means of consecutive steps
with a note saying so). A screenshot of each is kept under .output/test-report/."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, SAN, assert_no_sanitizer_report, read_spool, san_env, unavailable

CHROMIUM = Path("/usr/bin/chromium")
TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
TRAIN = ["/usr/bin/python3", str(ROOT / "tests" / "workloads" / "train.py")]
STEPS = ["/usr/bin/python3", str(ROOT / "bench" / "synthetic_steps.py")]
SHOTS = ROOT / ".output" / "test-report"
MAX_POINTS = 600        # report.c REPORT_MAX_POINTS
EXIT_OUTPUT_UNWRITABLE = 10
pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def torch_ok(bpf):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")
    if not CHROMIUM.exists():
        unavailable("chromium is not installed (scripts/install-deps.sh installs it)")


def chromium(tmp_path, page, *mode):
    """Headless Chromium on file://page; (stdout, stderr). Its profile is a fresh directory
    of the test's; nothing but the page is loaded (no network needed or allowed)."""
    r = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-quic", "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'chromium-profile'}",
                        "--enable-logging=stderr", "--v=0", "--window-size=1000,2400",
                        *mode, page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    console = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln
               or "net::ERR" in ln]
    assert console == [], console
    return r.stdout, r.stderr


def report(h, root, out):
    rc, stdout, err = h.run_to_end([SAN, "report", str(root), "-o", str(out)], env=san_env(),
                                   timeout=120)
    assert_no_sanitizer_report(err)
    assert rc == 0 and err == "" and stdout == "", (rc, err)
    text = out.read_text()
    # self-contained: nothing to fetch
    assert not re.search(r"""(src|href)\s*=|url\(|@import|https?://""", text), \
        re.findall(r"""(?:src|href)\s*=.{0,60}|https?://\S{0,60}""", text)[:5]
    return text


def charts(dom):
    """{chart id: [(series name, data-points, number of x,y pairs)]} from the DOM."""
    out = {}
    for m in re.finditer(r'<svg class="chart" id="([^"]+)"(.*?)</svg>', dom, re.S):
        out[m.group(1)] = [(a, int(b), len(c.split()))
                           for a, b, c in re.findall(r'<polyline class="series" data-name="([^"]*)"'
                                                     r' data-points="(\d+)" stroke="[^"]*" '
                                                     r'points="([^"]*)"', m.group(2))]
    return out


def check_page(tmp_path, page, n_sessions, shot):
    dom, _ = chromium(tmp_path, page, "--dump-dom")
    m = re.search(r'<html lang="en" data-charts="(\d+)" data-sessions="(\d+)"', dom)
    assert m, dom[:300]                         # the page's script ran
    got = charts(dom)
    assert int(m.group(1)) == len(got) and int(m.group(2)) == n_sessions
    SHOTS.mkdir(parents=True, exist_ok=True)
    chromium(tmp_path, page, f"--screenshot={SHOTS / shot}")
    assert (SHOTS / shot).stat().st_size > 10000
    return dom, got


def test_report_of_a_training_job(h, torch_ok, tmp_path):
    root = h.spool_root()
    p = h.observer("run", "--", *TRAIN, "--epochs", "2", "--batches", "15", "--val-batches",
                   "2", path=root)
    assert p.finish(120) == 0, p.err.text
    (s,) = read_spool(root).values()
    steps = sum(1 for x in s.spans.values() if x["name"] == "step" and x["status"] == "ok")
    page = tmp_path / "report.html"
    report(h, root, page)
    dom, got = check_page(tmp_path, page, 1, "training-job.png")
    # and one chart per number the job printed (marks, README "Marks from what the job
    # prints"), each with as many points as marks of that name
    printed = {}
    for x in s.spans.values():
        for m in x.get("marks", []):
            if m.get("source") in ("stdout", "stderr"):
                printed[m["name"]] = printed.get(m["name"], 0) + 1
    assert printed, "train.py prints its loss: there are marks to chart"
    marks = sorted((v[0][0], v[0][1]) for k, v in got.items() if k.startswith("s0-mark"))
    assert marks == sorted(printed.items()), (marks, printed)
    # and the weight norms of each epoch's snapshot (--snapshots stats, the default)
    assert set(got) - {k for k in got if k.startswith("s0-mark")} == \
        {"s0-step-time", "s0-phases", "s0-stall", "s0-weight-norms"}, sorted(got)
    assert got["s0-step-time"] == [("step", steps, steps)]
    assert [x[0] for x in got["s0-phases"]] == [
        "data_load", "forward", "backward", "optimizer_step", "collective_wait"]
    assert all(x[1:] == (steps, steps) for x in got["s0-phases"] + got["s0-stall"])
    assert f"{steps} steps, each drawn" in dom
    assert "<th>framework</th><td>torch</td>" in dom and "<th>uprobe_hits</th>" in dom


def test_long_run_downsampled_with_note(h, torch_ok, tmp_path):
    root = h.spool_root()
    n = 1500
    p = h.observer("run", "--", *STEPS, "--steps", str(n), path=root)
    assert p.finish(120) == 0, p.err.text
    page = tmp_path / "long.html"
    report(h, root, page)
    dom, got = check_page(tmp_path, page, 1, "long-run.png")
    assert got["s0-step-time"] == [("step", MAX_POINTS, MAX_POINTS)]
    assert f"{n} steps drawn as {MAX_POINTS} points, each the mean of 2.5 consecutive ones" in dom


def test_report_bad_output(h, built, tmp_path):
    root = tmp_path / "empty"
    (root / "spool").mkdir(parents=True)
    out = tmp_path / "no-such-dir" / "r.html"
    r = subprocess.run([str(ROOT / "cirron-probe"), "report", str(root), "-o", str(out)],
                       capture_output=True, text=True, timeout=30)
    lines = [ln for ln in r.stderr.splitlines() if "no sessions in" not in ln]
    assert r.returncode == EXIT_OUTPUT_UNWRITABLE and lines == [
        f"cirron-probe: cannot write {out}: {out.parent}: No such file or directory"], r.stderr
    r = subprocess.run([str(ROOT / "cirron-probe"), "report", str(tmp_path / "none")],
                       capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 8 and not (tmp_path / "report.html").exists(), r.stderr
    shutil.rmtree(root)
