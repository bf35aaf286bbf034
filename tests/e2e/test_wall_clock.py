# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The wall clock set while the observer runs (NTP's first step after the agent started at
boot, an admin's `date -s`, a VM restored): a session under way keeps the clock it began
with, its spans inside their parents and its durations exact, and says in its health how far
the clock moved; a session begun after the step is on the clock as it is now. The step is the
loader's own (CIRRON_TEST_WALL_STEP_FILE: its wall clock read that far ahead): stepping this
machine's clock would upset every test beside this one."""
import os
import re
import time

import pytest

from conftest import read_spool
from test_torch_tree import HOST_PYTHON, TRAIN, check_well_formed, named

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("step_s", [3600, -3600])
def test_clock_stepped_mid_session(h, bpf, tmp_path, step_s):
    """`run` on a job that trains until a file exists and then execs another training script
    (a second session in the same process): the clock steps an hour (ahead, or back) while
    the first trains."""
    step_file, stop = tmp_path / "step", tmp_path / "stop"
    then = f"{TRAIN} --epochs 1 --batches 3"
    root = h.spool_root()
    env = dict(os.environ, CIRRON_TEST_WALL_STEP_FILE=str(step_file))
    before_ns = time.time_ns()
    obs = h.observer("run", "-v", "--", HOST_PYTHON, TRAIN, "--epochs", "1", "--batches", "4",
                     "--until-file", stop, "--then-exec", then, path=root, env=env)
    try:
        first = obs.err.wait_for(r"session (\S+) started", timeout=120).group(1)
        obs.out.wait_for(r"^ready$", timeout=120)  # the job printed it after its first step
        step_file.write_text(f"{step_s}\n")
        obs.err.wait_for(re.escape(f"the wall clock stepped by {step_s:+d}.000 s"), timeout=30)
        stepped_ns = time.time_ns()
    finally:
        stop.touch()    # the job ends whatever failed: `run` leaves it running if killed
    assert obs.finish(180) == 0, obs.err.text[-3000:]
    after_ns = time.time_ns()
    sessions = read_spool(root)
    assert len(sessions) == 2 and first in sessions, (list(sessions), obs.err.text[-3000:])
    (second,) = [s for s in sessions if s != first]
    a, b = sessions[first], sessions[second]
    for s in (a, b):
        check_well_formed(s)
        assert named(s, "step"), s.id
    # the first keeps its start's clock (this machine's), across the step, and counts it (as
    # sampled: within 100 us, the loader's limit on a sample's error, twice)
    assert abs(a.health["wall_clock_step_ns"] - step_s * 10**9) <= 200_000, a.health
    for sp in a.spans.values():
        assert before_ns <= sp["start_ns"] <= sp["end_ns"] <= after_ns, sp
    assert a.root["attrs"]["end_cause"] == "exec"
    # the second began after the step: on the stepped clock, and nothing to count
    assert "wall_clock_step_ns" not in b.health, b.health
    for sp in b.spans.values():
        assert stepped_ns + step_s * 10**9 - 60 * 10**9 <= sp["start_ns"] <= sp["end_ns"] \
            <= after_ns + step_s * 10**9, sp
    gap = b.root["start_ns"] - a.root["end_ns"]
    assert abs(gap - step_s * 10**9) < 60 * 10**9, gap
