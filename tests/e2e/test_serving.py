# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Requests of a serving loop (issue 44): tests/workloads/serving.py, a causal LM with a KV
cache serving requests of a 10-token prompt and 12 tokens, 100 ms apart, under the real
observer, from the start and attached mid-run, on the host (Debian's torch 1.13), the trixie
root (Debian's 2.6) and the venv (the official 2.13 wheel; transformers' GPT-2 there too):
one request per prefill whether the loop opens one grad-off region per request or one for all
(inference_mode or no_grad; inference_mode that Debian's stripped builds do not show), its
tokens exact, its time the job's own (docs/inference.md)."""
import re
import signal
from pathlib import Path

import pytest

from conftest import ROOT, read_spool, unavailable
from test_torch_tree import HOST_PYTHON, named

W = ROOT / "tests" / "workloads"
REQUESTS, PROMPT, TOKENS = 4, 10, 12
SLACK_NS = 1_000_000    # the job's wall clock against the observer's (mapped from BPF's)
LINE = re.compile(r"^REQUEST (\d+) prompt=(\d+) new_tokens=(\d+) batch=(\d+) "
                  r"start_ns=(\d+) end_ns=(\d+)$", re.M)

pytestmark = pytest.mark.timeout(300)


def stack_argv(request, name):
    request.getfixturevalue("bpf")
    if name == "host":
        if not Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so").exists():
            unavailable("python3-torch is not installed")
        return [HOST_PYTHON, str(W / "serving.py")]
    if name == "venv":
        return [str(request.getfixturevalue("venv") / "bin" / "python"), str(W / "serving.py")]
    return ["chroot", str(request.getfixturevalue("trixie_root")), "python3", "/work/serving.py"]


def the_session(root):
    sessions = read_spool(root)
    assert len(sessions) == 1, sorted(sessions)
    return next(iter(sessions.values()))


def check_request(r, tokens=TOKENS):
    a = r["attrs"]
    assert (a["tokens_per_sequence"], a["token_picks"], a["prefill_tokens"]) == \
        (tokens, tokens, PROMPT), a
    assert a["tokens_source"] == "token_picks"
    assert a["decode_steps"] == tokens - 1, a


CASES = [pytest.param(*c, id="-".join(c)) for c in (
    ("venv", "off", "one", "inference_mode", "tiny", "argmax"),
    ("venv", "off", "one", "no_grad", "gpt2", "sample"),
    ("venv", "always", "one", "inference_mode", "gpt2", "argmax"),
    ("venv", "off", "each", "inference_mode", "tiny", "argmax"),
    ("host", "off", "one", "no_grad", "tiny", "argmax"),
    ("host", "off", "one", "inference_mode", "tiny", "sample"),
    ("host", "always", "one", "inference_mode", "tiny", "argmax"),
    ("trixie", "off", "one", "no_grad", "tiny", "sample"),
    ("trixie", "off", "each", "no_grad", "tiny", "argmax"),
)]


@pytest.mark.parametrize("stack_name,level,region,grad,model,pick", CASES)
def test_requests_from_the_start(h, request, stack_name, level, region, grad, model, pick):
    """4 requests of 12 tokens: 4 request spans in order, each with its prefill and 11 decode
    steps, its tokens exact; one region around all: each request from its prefill to its last
    token, inside the job's own times; one region each: the region, around them."""
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--python-frames", level, "--",
                   *stack_argv(request, stack_name), "--region", region, "--grad", grad,
                   "--model", model, "--pick", pick, "--requests", str(REQUESTS), path=root)
    assert p.finish(240) == 0, p.err.text[-3000:]
    job = [(int(m[5]), int(m[6])) for m in LINE.finditer(p.out.text)]
    assert len(job) == REQUESTS, p.out.text[-2000:]
    s = the_session(root)
    reqs = named(s, "request")
    assert [r["index"] for r in reqs] == list(range(REQUESTS)), [r["attrs"] for r in reqs]
    assert s.root["attrs"]["kind"] == "inference" and s.root["attrs"]["requests"] == REQUESTS
    for r, (start, end) in zip(reqs, job):
        assert r["status"] == "ok"
        check_request(r)
        kids = [c for c in s.spans.values() if c["parent_id"] == r["span_id"]]
        assert sorted(c["name"] for c in kids) == ["decode"] * (TOKENS - 1) + ["prefill"]
        if region == "one":
            assert r["attrs"]["begun_by"] == "prefill"
            assert start - SLACK_NS <= r["start_ns"] and r["end_ns"] <= end + SLACK_NS, \
                (r["start_ns"] - start, end - r["end_ns"])
        else:
            assert "begun_by" not in r["attrs"]
            assert r["start_ns"] <= start + SLACK_NS and end - SLACK_NS <= r["end_ns"]
        if level == "always":
            assert r["attrs"]["forwards"] == TOKENS, r["attrs"]
    for a, b in zip(reqs, reqs[1:]):
        assert a["end_ns"] <= b["start_ns"]


@pytest.mark.parametrize("stack_name,grad", [("venv", "inference_mode"), ("host", "no_grad"),
                                             ("host", "inference_mode"), ("trixie", "no_grad")])
def test_requests_attached_inside_one_region(h, request, stack_name, grad):
    """Attached while the loop's one region is open (its start never seen): every request
    that begins after the attach is whole, 12 tokens each."""
    job = h.start([*stack_argv(request, stack_name), "--region", "one", "--grad", grad,
                   "--requests", "0"])
    job.out.wait_for(r"^REQUEST 1 ", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-p", job.pid, "--output", "spool,stdout", path=root)
    obs.out.wait_for(r"^\[cirron\] request\[2\] ", timeout=120)
    obs.signal(signal.SIGINT)
    assert obs.finish(120) == 0, obs.err.text[-3000:]
    job.popen.kill()
    s = the_session(root)
    reqs = [r for r in named(s, "request") if r["status"] == "ok"]
    assert len(reqs) >= 3, [r["attrs"] for r in named(s, "request")]
    for r in reqs:
        check_request(r)
        assert r["attrs"]["region"] == "unseen", r["attrs"]    # it began before the attach
