# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Inference processes (issue 36): a small GPT-2 built from a config (no download) in the venv
(tests/workloads/inference.py) serves requests: HF generate (greedy and sampling, batch 1 and
4), a text-generation pipeline, a hand-written decode loop under inference_mode and a
one-forward serving call. Each request is one `request` span with `prefill` and `decode`
spans (or one `forward`) under it, compared with what the script says it did: its forwards
(a forward hook counts them), its new tokens, its latency. From the start (`run`, with
--metrics and then `trace`, Perfetto), attached mid-run (`attach`), and picked up by the node
agent (`watch`); a training job beside it keeps its training tree. The rules:
docs/inference.md."""
import re
import shutil
import subprocess
import urllib.request

import pytest

from conftest import BIN, ROOT, only_session, read_spool

WORKLOAD = ROOT / "tests" / "workloads" / "inference.py"
TRAIN = ROOT / "tests" / "workloads" / "train.py"
# not anchored: under `run` the observer's stdout blocks and the job's lines share a pipe
LINE = re.compile(r"REQUEST (\d+) kind=(\w+) forwards=(\d+) new_tokens=(\d+) batch=(\d+) "
                  r"start_ns=(\d+) latency_ns=(\d+)")
SLACK_NS = 1_000_000
pytestmark = pytest.mark.timeout(240)


def script_requests(text):
    """What the script did, one dict per request, in order."""
    keys = ("i", "kind", "forwards", "new_tokens", "batch", "start_ns", "latency_ns")
    did = [{k: (v if k == "kind" else int(v)) for k, v in zip(keys, m.groups())}
           for m in LINE.finditer(text)]
    assert [d["i"] for d in did] == list(range(len(did))), text[-3000:]
    return did


def requests_of(s):
    root = s.root
    return sorted((sp for sp in s.spans.values()
                   if sp["name"] == "request" and sp["parent_id"] == root["span_id"]),
                  key=lambda sp: sp["start_ns"])


def kids(s, sp):
    return sorted((k for k in s.spans.values() if k["parent_id"] == sp["span_id"]),
                  key=lambda k: k["start_ns"])


def did_for(req, did):
    """The script's request whose timed call holds the span's start."""
    for d in did:
        if d["start_ns"] - SLACK_NS <= req["start_ns"] <= d["start_ns"] + d["latency_ns"]:
            return d
    raise AssertionError(f"request span {req['attrs']} at {req['start_ns']}: no script call "
                         f"holds it")


def check_request(s, req, d, level="always"):
    """One request span against the script's line for it. With Python frames (always) its
    steps are the forwards; at the default level (off) the spans between token picks."""
    a = req["attrs"]
    assert req["status"] == "ok", req
    assert a["region"] == ("inference_mode" if d["kind"] in ("loop", "serve") else "no_grad"), a
    names = [k["name"] for k in kids(s, req)]
    tokens = d["new_tokens"]
    if level == "always":
        assert a["forwards"] == d["forwards"], (a, d)
    else:
        assert "forwards" not in a, a
    if level == "off" and d["kind"] == "serve":     # no pick, no frames: the region alone
        assert names == [] and "token_picks" not in a, (names, a)
    elif d["forwards"] == 1:
        assert names == ["forward"], names
    else:
        steps = d["forwards"] if level == "always" else tokens
        assert names == ["prefill"] + ["decode"] * (steps - 1), names
        assert a["decode_steps"] == steps - 1, a
        assert a["tokens_per_sequence"] == tokens, (a, d)
        # every generation here picks its tokens with argmax or multinomial: exact
        assert (a["tokens_source"], a["token_picks"]) == ("token_picks", tokens), a
        assert a["token_pick_op"] == ("multinomial" if d["kind"] == "sample" else "argmax"), a
        assert a.get("steps_source") == (None if level == "always" else "token_picks"), a
        assert 0 < a["ttft_ns"] <= req["end_ns"] - req["start_ns"], a
        assert a["decode_tokens_per_s"] > 0, a
        if level == "off":
            assert all(k["attrs"]["bounds"] == "token_picks" for k in kids(s, req))
    # the region lies inside the script's timed call (the pipeline's tokenizing is outside);
    # 1 ms for the two clocks (BPF's monotonic one mapped to wall time, the script's)
    lat = req["end_ns"] - req["start_ns"]
    assert d["start_ns"] - SLACK_NS <= req["start_ns"], (req, d)
    assert req["end_ns"] <= d["start_ns"] + d["latency_ns"] + SLACK_NS, (req, d)
    return lat / d["latency_ns"]


def workload(venv, *args):
    return [str(venv / "bin" / "python"), str(WORKLOAD), *args]


def test_requests_from_the_start(h, bpf, venv, tmp_path):
    """`run --python-frames always --metrics` of every case, twice over: one request span per
    call with the script's forwards and tokens; /metrics counts them while it runs; trace
    prints the percentiles; Perfetto has the requests as slices."""
    root = h.spool_root()
    stop = tmp_path / "stop"
    obs = h.observer("run", "-v", "--python-frames", "always", "--metrics", "127.0.0.1:0",
                     "--output", "spool,stdout", "--",
                     *workload(venv, "--case", "mixed", "--requests", "0", "--stop-file",
                               str(stop)), path=root)
    url = obs.err.wait_for(r"metrics at (http://127\.0\.0\.1:\d+/metrics)", timeout=120)[1]
    obs.out.wait_for(r"\[cirron\] request\[9\] ", timeout=180)
    with urllib.request.urlopen(url, timeout=10) as r:
        page = r.read().decode()
    stop.touch()
    assert obs.finish(120) == 0, obs.err.text[-3000:]

    did = script_requests(obs.out.text)
    assert len(did) >= 10 and {d["kind"] for d in did} == {
        "greedy", "sample", "loop", "pipeline", "serve"}, did
    assert {d["batch"] for d in did if d["kind"] == "sample"} == {1, 4}
    assert {d["batch"] for d in did if d["kind"] == "greedy"} == {1, 4}
    s = only_session(root)
    a = s.root["attrs"]
    assert (a["kind"], a["framework"], a["requests"]) == ("inference", "transformers", len(did))
    reqs = requests_of(s)
    assert len(reqs) == len(did)
    ratios = [check_request(s, r, d) for r, d in zip(reqs, did)]
    assert [r["index"] for r in reqs] == list(range(len(did)))
    assert not [sp for sp in s.spans.values() if sp["name"] in ("epoch", "step")]
    # request latency against the script's own clock around the call
    gen = [x for x, d in zip(ratios, did) if d["kind"] in ("greedy", "sample", "loop")]
    print(f"\nrequest span / script latency (generate, loop): min {min(gen):.3f}, "
          f"median {sorted(gen)[len(gen) // 2]:.3f}")
    assert sorted(gen)[len(gen) // 2] > 0.9, ratios
    hits = s.health["uprobe_hits"]
    fwd = sum(d["forwards"] for d in did)
    print(f"uprobe hits {hits} for {fwd} forwards: {hits / fwd:.1f} per forward "
          f"(--python-frames always, 2-layer GPT-2)")

    # /metrics while it ran: at least the 10 requests seen by then
    m = re.search(r"^cirron_requests_total\{[^}]*pid=\"(\d+)\"[^}]*\} (\d+)", page, re.M)
    assert m and int(m[1]) == a["pid"] and int(m[2]) >= 10, page[-2000:]
    assert re.search(r"^cirron_request_duration_seconds_count\{[^}]*\} (\d+)", page, re.M)
    assert re.search(r"^cirron_decode_tokens_per_second\{[^}]*\} [0-9.e+]+$", page, re.M)
    tokens = re.search(r"^cirron_request_tokens_total\{[^}]*\} ([0-9.e+]+)$", page, re.M)
    assert tokens and float(tokens[1]) > 0, page[-2000:]

    r = subprocess.run([str(BIN), "trace", str(root)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    m = re.search(r"^requests: (\d+) ended \((\d+) in all\); latency p50 ([0-9.]+)ms "
                  r"p90 ([0-9.]+)ms p99 ([0-9.]+)ms; ttft p50 [0-9.]+ms", r.stdout, re.M)
    assert m and int(m[1]) == int(m[2]) == len(did), r.stdout[-2000:]
    p50, p90, p99 = map(float, m.groups()[2:])
    lat = sorted((x["end_ns"] - x["start_ns"]) / 1e6 for x in reqs)
    assert lat[0] - 0.1 <= p50 <= p90 <= p99 <= lat[-1] + 0.1, (m[0], lat)
    r = subprocess.run([str(BIN), "trace", str(root), "--format", "perfetto"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count('"name":"request"') == len(did), r.stdout[:500]


def test_requests_at_the_default_level(h, bpf, venv, tmp_path):
    """`run` at the default level (no Python frames): every call is one request with the
    script's tokens, its steps bounded by the token picks (argmax, multinomial), one uprobe
    hit per token; the serving call (no pick) is its inference_mode region alone."""
    root = h.spool_root()
    obs = h.observer("run", "--output", "spool", "--",
                     *workload(venv, "--case", "mixed", "--requests", "10", "--tokens", "7"),
                     path=root)
    assert obs.finish(180) == 0, obs.err.text[-3000:]
    did = script_requests(obs.out.text)
    assert len(did) == 10
    assert {(d["kind"], d["batch"]) for d in did} >= {("greedy", 1), ("greedy", 4),
                                                      ("sample", 1), ("sample", 4)}
    s = only_session(root)
    a = s.root["attrs"]
    assert (a["kind"], a["requests"], a["python_frames"]) == ("inference", 10, "off"), a
    reqs = requests_of(s)
    assert len(reqs) == len(did)
    for r, d in zip(reqs, did):
        check_request(s, r, d, "off")
    picks = sum(p["hits"] for p in s.health["probes"]
                if p["symbol"].startswith(("_ZN2at4_ops6argmax4callE",
                                           "_ZN2at4_ops11multinomial4callE")))
    tokens = sum(d["new_tokens"] for d in did)
    assert picks == tokens, (picks, tokens)
    print(f"\n{picks} token picks for {tokens} tokens: 1 uprobe hit per token at the default "
          f"level, and 2 per request (the grad or inference_mode switches)")


@pytest.mark.parametrize("level", ["off", "always"])
def test_attached_mid_run(h, bpf, venv, tmp_path, level):
    """`attach` while requests are served, at the default level and with Python frames: every
    request whose region began after the attach is whole and right; the one under way at the
    attach is no request."""
    stop = tmp_path / "stop"
    job = h.start(workload(venv, "--case", "mixed", "--requests", "0", "--stop-file", str(stop)))
    job.out.wait_for(r"^REQUEST 2 ", timeout=120)
    root = h.spool_root()
    obs = h.observer("attach", "-p", job.pid, "--python-frames", level,
                     "--output", "spool,stdout", path=root)
    obs.out.wait_for(r"\[cirron\] request\[5\] ", timeout=180)
    stop.touch()
    assert job.finish(120) == 0, job.err.text[-2000:]
    assert obs.finish(120) == 0, obs.err.text[-3000:]

    did = script_requests(job.out.text)
    s = only_session(root)
    a = s.root["attrs"]
    assert (a["attached_mid_run"], a["kind"]) == (True, "inference"), a
    reqs = requests_of(s)
    assert len(reqs) >= 6
    matched = [did_for(r, did) for r in reqs]
    for r, d in zip(reqs, matched):
        check_request(s, r, d, level)
    # one span per call: the calls after the first one seen, all of them
    first = matched[0]["i"]
    assert [d["i"] for d in matched] == list(range(first, did[-1]["i"] + 1)), matched


@pytest.mark.parametrize("level", ["off", "always"])
def test_watch_and_a_training_job(h, bpf, venv, tmp_path, level):
    """The node agent picks up an inference process and a training job: requests for the
    one, epochs and steps (and no request) for the other, at the same Python-frames level."""
    d = tmp_path / "jobs"
    d.mkdir()
    for f in (WORKLOAD, TRAIN):
        shutil.copy(f, d / f.name)
    root = h.spool_root()
    w = h.observer("watch", "-v", "--python-frames", level, "--match", re.escape(str(d)),
                   path=root)
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    py = str(venv / "bin" / "python")
    inf = h.start([py, str(d / WORKLOAD.name), "--case", "mixed", "--requests", "5"])
    train = h.start([py, str(d / TRAIN.name), "--epochs", "2", "--batches", "4",
                     "--val-batches", "2"])
    assert inf.finish(180) == 0, inf.err.text[-2000:]
    assert train.finish(180) == 0, train.err.text[-2000:]
    w.err.wait_count(r"session \S+ ended \(exit\)", 2, timeout=120)
    w.signal(2)
    assert w.finish(120) == 0, w.err.text[-3000:]

    by_pid = {s.root["attrs"]["pid"]: s for s in read_spool(root).values()}
    s = by_pid[inf.pid]
    did = script_requests(inf.out.text)
    reqs = requests_of(s)
    assert len(reqs) == len(did) == 5
    for r, x in zip(reqs, did):
        check_request(s, r, x, level)
    t = by_pid[train.pid]
    names = [sp["name"] for sp in t.spans.values()]
    assert "request" not in names and t.root["attrs"].get("kind") != "inference"
    assert names.count("epoch") == 2 and names.count("step") == 8, sorted(set(names))
