# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""What `make demo` shows a newcomer (issue 44): examples/train_mlp.py traced from its start as
scripts/demo.sh traces it. Its steps zero the gradients before their backward, so the
snapshot after each epoch's last step holds that step's gradients: every parameter's grad norm
is a real, non-zero number, in the spool and in `trace`'s table."""
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT, only_session, unavailable
from test_torch_tree import HOST_PYTHON, children, named

pytestmark = pytest.mark.timeout(240)


def test_demo_example_shows_real_gradients(h, bpf):
    if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    root = h.spool_root()
    p = h.observer("run", "--output", "spool,stdout", "--", HOST_PYTHON,
                   ROOT / "examples" / "train_mlp.py", "--epochs", "2", "--batches", "4",
                   path=root)
    assert p.finish(180) == 0, p.err.text[-3000:]
    s = only_session(root)
    for st in named(s, "step"):
        got = [c["name"] for c in sorted(children(s, st), key=lambda c: c["start_ns"])]
        assert got == ["data_load", "forward", "zero_grad", "backward", "optimizer_step"], got
    # the state after an epoch's last step (a read the job's next steps overtook says so, and
    # is the snapshots' own business, tests/e2e/test_snapshots.py)
    records = [r for b in s.batches for r in b.get("snapshots", [])
               if "params" in r and r["after_step"] == r["epoch_last_step"]]
    assert records, [b.get("snapshots") for b in s.batches]
    for r in records:
        assert len(r["params"]) == 6
        for prm in r["params"]:
            assert prm["has_grad"] and prm["grad"]["norm"] > 0, (r["epoch"], prm["name"])
    out = subprocess.run([str(BIN), "trace", str(root)], capture_output=True, text=True,
                         timeout=60).stdout
    rows = re.findall(r"^  (\d\.\w+) +\S+ +float32 +\S+ +\S+ +\S+ +(\S+)$", out, re.M)
    assert len(rows) >= 6 and len([g for _, g in rows if float(g) > 0]) >= 6, out[-3000:]
