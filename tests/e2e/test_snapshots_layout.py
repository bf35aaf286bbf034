# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--snapshots on a torch build probes/torch_layouts.json does not know: the tensor layout is
found in the target from the model's own parameters (user/pyobj/tensor_layout_find.c) and
kept per libtorch build-id under --cache-dir. CIRRON_TEST_NO_LAYOUT_TABLE hides the table, so
each stack (Debian's torch 1.13, trixie's 2.6, the official 2.13 wheel) stands for a build it
does not know: every epoch's record must be exact and equal to torch's own numbers, say
`layout_source: found`, and the layout kept must be the table's entry, offset for offset (the
table was derived apart, by tests/scripts/derive-torch-layouts.py). A second run reads the
kept layout (`cache`); a kept layout that does not fit the target is searched for again."""
import json
import os

import pytest

from conftest import ROOT
from test_snapshots import FAST, Job, check_epochs, env, run_job  # noqa: F401 (env is a fixture)

# several jobs a test (four of the 2.13 wheel in test_table_checked_and_bad_cache: 18 s on
# CI's machine, 57 s on a slow one, past the default 60 s limit with its spool's check)
pytestmark = pytest.mark.timeout(300)

FIELDS = ("thp_cdata", "storage", "storage_data", "storage_nbytes", "autograd_meta", "grad",
          "sizes_and_strides", "inline_dims", "storage_offset", "numel", "data_type",
          "device", "device_has_value")
NO_TABLE = dict(os.environ, CIRRON_TEST_NO_LAYOUT_TABLE="1")


def table_entry(version):
    layouts = json.loads((ROOT / "probes" / "torch_layouts.json").read_text())["layouts"]
    for key, entry in layouts.items():
        if key == version or version in entry.get("aliases", ()):
            return entry
    raise AssertionError(f"no table entry for torch {version}")


def kept(cache):
    files = list(cache.glob("torch-layout-*.json"))
    assert len(files) == 1, files
    ((version, entry),) = json.loads(files[0].read_text())["layouts"].items()
    return files[0], version, entry


def run_no_table(h, env, cache, env_vars=NO_TABLE):
    return run_job(h, [*env.argv, env.script, *FAST], "--cache-dir", str(cache), env=env_vars)


def test_layout_found_in_the_target(h, env, tmp_path):
    """Without the table: found (exact stats, the table's offsets), then read back from the
    cache by the next run."""
    cache = tmp_path / "cache"
    job = run_no_table(h, env, cache)
    snaps = check_epochs(job)
    for s in snaps:
        assert s["layout_source"] == "found", s
        assert 0 < s["layout_search_ms"] < 100, s
    _, version, entry = kept(cache)
    want = table_entry(version)
    assert {k: entry[k] for k in FIELDS} == {k: want[k] for k in FIELDS}, version
    job = run_no_table(h, env, cache)
    for s in check_epochs(job):
        assert s["layout_source"] == "cache" and "layout_search_ms" not in s, s


def test_table_checked_and_bad_cache(h, venv, tmp_path):
    """With the table: its entry, checked against the target (`table`). A kept layout that
    does not fit the build (a wrong numel offset) or is not JSON: said, searched again."""
    from test_snapshots import Env, WORKLOAD
    e = Env("venv", [str(venv / "bin" / "python")], str(WORKLOAD))
    cache = tmp_path / "cache"
    job = run_job(h, [*e.argv, e.script, *FAST], "--cache-dir", str(cache))
    for s in check_epochs(job):
        assert s["layout_source"] == "table", s
    assert not list(cache.glob("torch-layout-*.json"))
    job = run_no_table(h, e, cache)
    assert {s["layout_source"] for s in check_epochs(job)} == {"found"}, job.err[-3000:]
    path, version, entry = kept(cache)
    bad = json.loads(path.read_text())
    bad["layouts"][version]["numel"] += 8
    path.write_text(json.dumps(bad))
    job = run_no_table(h, e, cache)
    for s in check_epochs(job):
        assert s["layout_source"] == "found", s
    assert "does not serve" in job.err and "numel" in job.err, job.err[-2000:]
    assert kept(cache)[2]["numel"] == entry["numel"]
    path.write_text("{not json")
    job = run_no_table(h, e, cache)
    for s in check_epochs(job):
        assert s["layout_source"] == "found", s
    assert str(path) in job.err, job.err[-2000:]


ONE_LINEAR = """
import os, sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)
model = nn.Linear(12, 4)    # two parameters, two shapes: too few to tell a layout by
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(32, 12), torch.randn(32, 4)), batch_size=8)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        for _ in range(256):
            model(x)
print("DONE", flush=True)
if len(sys.argv) > 1:       # the job goes on after training (as one that saves or evaluates)
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
"""


@pytest.mark.parametrize("look", ["as-usual", "slow"])
def test_layout_not_found_says_why(h, venv, tmp_path, look):
    """A model with too few parameter shapes to tell offsets apart, on a build the table does
    not know: every epoch's record says `layout not found: <why>`, nothing is guessed. slow:
    the look for the models (which checks the layout) takes 1.5 s, so every epoch (ms each)
    ends before it comes back; their records still name the layout as the cause, not the
    timing (an epoch missed before the first look came back waits for its answer)."""
    script = tmp_path / "one_linear.py"
    script.write_text(ONE_LINEAR)
    argv = [str(venv / "bin" / "python"), str(script)]
    if look == "as-usual":
        job = run_job(h, argv, "--cache-dir", str(tmp_path / "cache"), env=NO_TABLE)
    else:
        stop, root = tmp_path / "stop", h.spool_root()
        p = h.observer("run", "--output", "spool", "--cache-dir", tmp_path / "cache", "--",
                       *argv, stop, path=root, env=dict(NO_TABLE, CIRRON_TEST_FIND_DELAY_MS="1500"))
        p.out.wait_for(r"^DONE$", timeout=120)
        p.err.wait_for(r"snapshots off: layout not found", timeout=60)
        stop.touch()
        assert p.finish(120) == 0, p.err.text[-3000:]
        job = Job(root, p.out.text, p.err.text)
    assert job.snaps, job.err[-2000:]
    assert sorted(s["epoch"] for s in job.snaps) == [0, 1, 2], job.snaps
    for s in job.snaps:
        assert s["error"].startswith("layout not found: fewer than 3 parameters"), s
        assert "params" not in s
    assert "snapshots off: layout not found" in job.err
    assert not list((tmp_path / "cache").glob("torch-layout-*.json"))
