# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""DataLoader workers are helpers of their job, attached or under `run` (issue 44): a process
forked from a job that did not exec runs the job's image; whatever torch names it (torch 2
calls its workers pt_data_worker, Debian's 1.13 leaves them unnamed) it is a helper of the job
(role=helper, helper_of, helper=dataloader or fork), never a job of its own. Workers that
exist when `attach -p` comes (persistent workers) are taken with the job; workers forked
later that load a library (an SQLite dataset each worker opens) are followed. On the host
(1.13), the trixie root (2.6) and the venv (the 2.13 wheel), tests/workloads/epoch_loops.py."""
import re
import signal
import subprocess

import pytest

from conftest import BIN, read_spool
from test_epochs import stack_argv
from test_torch_tree import named

pytestmark = pytest.mark.timeout(300)
KIND = {"host": "fork", "trixie": "dataloader", "venv": "dataloader"}


def job_and_helpers(root):
    sessions = read_spool(root)
    jobs = [s for s in sessions.values() if s.root["attrs"]["role"] != "helper"]
    assert len(jobs) == 1, {s.id: (s.root["attrs"]["role"], s.root["attrs"]["comm"])
                            for s in sessions.values()}
    job = jobs[0]
    helpers = [s for s in sessions.values() if s is not job]
    for s in helpers:
        a = s.root["attrs"]
        assert (a["role"], a["helper_of"]) == ("helper", job.root["attrs"]["pid"]), a
        assert not named(s, "epoch") and not named(s, "step"), s.id
    return job, helpers


def attach(h, argv, until):
    job = h.start([*argv, "--epochs-forever", "--step-sleep", "20"])
    job.out.wait_for(r"^EPOCH 0 ", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-p", job.pid, "--output", "spool,stdout", path=root)
    obs.out.wait_for(until, timeout=180)
    obs.signal(signal.SIGINT)
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    job.popen.kill()
    return root


@pytest.mark.parametrize("stack_name", ["host", "trixie", "venv"])
def test_persistent_workers_attached_are_helpers(h, request, stack_name):
    """2 persistent workers running when the attach comes: 2 helper sessions under the job
    (dataloader where torch names them, fork where it does not), and `trace` shows one job
    with its helpers."""
    root = attach(h, stack_argv(request, stack_name) + ["--loop", "gan", "--persistent"],
                  r"^\[cirron\] epoch\[1\] ")
    job, helpers = job_and_helpers(root)
    assert len(helpers) == 2, [s.root["attrs"] for s in helpers]
    assert [s.root["attrs"]["helper"] for s in helpers] == [KIND[stack_name]] * 2
    out = subprocess.run([str(BIN), "trace", str(root)], capture_output=True, text=True,
                         timeout=60).stdout
    assert len(re.findall(r"^session ", out, re.M)) == 1, out[:3000]
    assert re.search(rf"^helpers: 2 \({KIND[stack_name]}\)", out, re.M), out[:3000]


@pytest.mark.parametrize("stack_name", ["host", "venv"])
def test_workers_forked_after_attach_are_no_jobs(h, request, stack_name):
    """Workers forked at every epoch after the attach, each loading SQLite's library when it
    opens the dataset: none is a job; the job's epochs go on."""
    root = attach(h, stack_argv(request, stack_name) + ["--loop", "gan", "--data", "sqlite"],
                  r"^\[cirron\] epoch\[3\] ")
    job, helpers = job_and_helpers(root)
    assert all(s.root["attrs"]["helper"] == KIND[stack_name] for s in helpers)
    assert len([e for e in named(job, "epoch") if e["status"] == "ok"]) >= 3


@pytest.mark.parametrize("stack_name", ["host", "venv"])
def test_workers_under_run_are_no_jobs(h, request, stack_name):
    """Under `run`: workers that load a library after their fork are no jobs either."""
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--", *stack_argv(request, stack_name),
                   "--loop", "gan", "--data", "sqlite", "--epochs", "2", path=root)
    assert p.finish(240) == 0, p.err.text[-3000:]
    job, helpers = job_and_helpers(root)
    assert len(named(job, "epoch")) == 2
    assert all(s.root["attrs"]["helper"] == KIND[stack_name] for s in helpers)
