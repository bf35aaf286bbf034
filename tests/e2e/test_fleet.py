# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A fleet's spans on the engines fleets run (docs/fleet.md): OTLP/HTTP to a real receiver
(MLflow's tracking server, PyPI, pinned in tests/scripts/fleet-requirements.txt) read back
through its API, otel_traces rows in a real S3 store (SeaweedFS) read in place by chdb and
DuckDB with the cookbook's own SQL (taken out of docs/fleet.md), and the job identity that
ties a job's ranks together across nodes. Two nodes are two UTS namespaces (unshare -u) with
host names of their own. Tests wait for what they check, never for a time."""
import gzip
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, ROOT, read_spool
from fleet_util import MLflow, Store, fleet_venv, run_queries
from test_s3 import symcache, torch_bpf, weed_bin, wait_until, WAIT_S  # noqa: F401 (fixtures)

LAUNCH = ["/usr/bin/python3", ROOT / "tests/workloads/launch_ranks.py"]
DDP = ROOT / "tests/workloads/ddp_train.py"
TRAIN = ["/usr/bin/python3", ROOT / "tests/workloads/train.py"]
ENGINES = ("clickhouse", "duckdb")


@pytest.fixture(scope="module")
def venv():
    return fleet_venv()


@pytest.fixture(scope="module")
def receiver(venv, tmp_path_factory):
    m = MLflow(venv, tmp_path_factory.mktemp("receiver"))
    m.start()
    yield m
    m.stop()


@pytest.fixture
def store(weed_bin, tmp_path):
    s = Store(weed_bin, tmp_path)
    s.start()
    try:
        yield s
    finally:
        s.stop()


def spool_spans(root):
    """{session id: {span id: span}} of a spool, merged as the readers merge it."""
    return {sid: {sp["span_id"]: sp for sp in s.spans.values()} if isinstance(s.spans, dict)
            else {sp["span_id"]: sp for sp in s.spans}
            for sid, s in read_spool(root, expect_final=False).items()}


def rows_of(store, bucket, prefix):
    """Every row of the store's span rows, with the key it came from."""
    out = []
    for key in store.rows(bucket, prefix):
        for line in gzip.decompress(store.get(bucket, key)).decode().splitlines():
            out.append((key, json.loads(line)))
    return out


@pytest.mark.timeout(240)
def test_ddp_job_on_two_nodes_one_slowed(h, store, receiver, venv, symcache, torch_bpf):
    """The CI's 'done when': 4 ranks on two nodes, rank 3 slowed, traced with
    --output spool,s3://...,otlp=...: the receiver holds every rank's steps, and chdb and
    DuckDB, reading the store in place with the cookbook's queries, name the slowed rank."""
    bucket, job = store.bucket(), f"ddp-{os.getpid()}"
    port = subprocess.run(["/usr/bin/python3", "-c", "import socket; s=socket.socket(); "
                           "s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"],
                          capture_output=True, text=True).stdout.strip()
    h.cache_dir = symcache
    nodes = []
    for k, node in enumerate(("node-a", "node-b")):
        root = h.spool_root()
        env = {**store.env(), **receiver.env(), "TORCHELASTIC_RUN_ID": job}
        argv = [BIN, "run", "--path", root, "--cache-dir", symcache, "--flush-interval", "0.5",
                "--output", f"spool,s3://{bucket}/fleet,otlp={receiver.url}", "--",
                *LAUNCH, "--nproc", "2", "--nnodes", "2", "--node-rank", str(k), "--port",
                port, DDP, "--epochs", "3", "--batches", "8", "--slow-rank", "3",
                "--slow-ms", "40"]
        nodes.append((h.start(["unshare", "--uts", "sh", "-c",
                               f'hostname {node} && exec "$@"', "sh", *argv], env=env),
                      root, node))
    for p, _, _ in nodes:
        assert p.finish(180) == 0, p.err.text[-3000:]
    sessions = {}
    for _, root, node in nodes:
        for sid, s in read_spool(root).items():
            assert s.root["attrs"]["job"] == job, s.root["attrs"]
            assert s.root["attrs"]["job_source"] == "TORCHELASTIC_RUN_ID"
            assert s.root["attrs"]["host"] == node
            sessions[sid] = s
    ranks = {s.root["attrs"]["rank"]: s for s in sessions.values()
             if s.root["attrs"]["role"] == "rank"}
    assert sorted(ranks) == [0, 1, 2, 3], sorted(ranks)
    steps = {r: sum(1 for sp in s.spans.values() if sp["name"] == "step" and sp["status"] == "ok")
             for r, s in ranks.items()}
    assert all(n == 24 for n in steps.values()), steps
    # the receiver holds every rank's steps: one trace per session, the root names its rank
    want = {r: steps[r] for r in ranks}
    got = {}
    wait_until(lambda: got.update(receiver_steps(receiver, job)) or got == want,
               f"the receiver's steps per rank to be {want}", timeout=90)
    # the store, read in place by both engines with the cookbook's SQL
    for eng in ENGINES:
        res = run_queries(venv, eng, store, bucket, "fleet",
                          ["step_time", "stragglers", "data_load_share", "slow_nodes"],
                          job=job, earlier_job="none")
        st = {int(r[0]): int(r[1]) for r in res["step_time"]["rows"]}
        assert st == steps, (eng, st, steps)
        assert [str(r[0]) for r in res["stragglers"]["rows"]] == ["3"], (eng, res["stragglers"])
        assert str(res["data_load_share"]["rows"][0][0]) == "3", (eng, res["data_load_share"])
        assert res["slow_nodes"]["rows"][0][0] == "node-b", (eng, res["slow_nodes"])
    # trace --ranks reads the job's partition back, as one job
    r = subprocess.run([BIN, "trace", "--ranks", "--job", job, f"s3://{bucket}/fleet"],
                       capture_output=True, text=True, env=store.env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"4 ranks (world size 4), 24 steps\njob {job} "
                               "(from TORCHELASTIC_RUN_ID)\n"), r.stdout
    assert "straggler: rank 3" in r.stdout, r.stdout


def receiver_steps(receiver, job):
    """{rank: closed steps} of the receiver's traces of this job."""
    out = {}
    for t in receiver.traces():
        root = next((s for s in t["spans"] if s["parent_id"] is None), None)
        if not root or root["attributes"].get("job") != job or \
                root["attributes"].get("role") != "rank":
            continue
        out[root["attributes"]["rank"]] = sum(1 for s in t["spans"] if s["name"] == "step")
    return out


def ship(h, root, url, env):
    rc, out, err = h.run_to_end([BIN, "ship", str(root), "--output", url], env=env, timeout=120)
    assert rc == 0, err
    return err


@pytest.mark.timeout(240)
def test_cookbook_on_a_synthetic_fleet(h, store, venv, tmp_path):
    """Every cookbook query of docs/fleet.md, in both engines, on spools made to a plan
    (bench/fleet_spool.py) and sent by `ship`: two runs of a job, a rank slow to load its
    data, a node slow to compute, kernels on every step."""
    bucket = store.bucket()
    url = f"s3://{bucket}/book"
    gen = ["/usr/bin/python3", ROOT / "bench/fleet_spool.py"]
    plans = {"train-41": ["--step-ms", "80"],
             "train-42": ["--step-ms", "100", "--slow-rank", "1", "--slow-node", "node-003",
                          "--slow-factor", "3"]}
    for job, extra in plans.items():
        out = tmp_path / job
        subprocess.run([*gen, out, "--job", job, "--nodes", "4", "--ranks", "2", "--steps",
                        "60", "--steps-per-batch", "15", *extra], check=True,
                       capture_output=True)
        for node in sorted(out.iterdir()):
            err = ship(h, node, url, store.env())
            assert "batches of earlier runs" in err, err
            # a second ship has nothing left to send: the state logs say so
            assert "earlier runs" not in ship(h, node, url, store.env())
    expect = {"step_time": None, "stragglers": None, "data_load_share": None,
              "top_kernels": None, "regression": None, "slow_nodes": None}
    for eng in ENGINES:
        res = run_queries(venv, eng, store, bucket, "book", list(expect), job="train-42",
                          earlier_job="train-41")
        st = res["step_time"]["rows"]
        assert [int(r[0]) for r in st] == list(range(8)) and all(int(r[1]) == 60 for r in st), st
        assert all(99 <= float(r[2]) <= 100 for r in st), (eng, st)
        assert sorted(int(r[0]) for r in res["stragglers"]["rows"]) == [1, 6, 7], \
            (eng, res["stragglers"])
        assert str(res["data_load_share"]["rows"][0][0]) == "1", (eng, res["data_load_share"])
        top = res["top_kernels"]["rows"]
        assert top[0][0] == "ampere_sgemm_128x64_tn" and int(top[0][1]) == 96 * 60 * 8, top
        assert [r[0] for r in top[:5]] == ["ampere_sgemm_128x64_tn",
                                           "vectorized_elementwise_kernel",
                                           "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                           "reduce_kernel", "softmax_warp"], top
        reg = res["regression"]["rows"]
        assert [r[0] for r in reg] == ["train-42", "train-41"], reg
        assert 99 <= float(reg[0][2]) <= 100 and 79 <= float(reg[1][2]) <= 80, reg
        nodes = res["slow_nodes"]["rows"]
        assert nodes[0][0] == "node-003" and float(nodes[0][2]) > 1.2, nodes
        assert all(float(r[2]) < 1.2 for r in nodes[1:]), nodes
    # trace --ranks reads the job's partition only: the earlier run is not in it
    r = subprocess.run([BIN, "trace", "--ranks", "--job", "train-42", url], capture_output=True,
                       text=True, env=store.env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("8 ranks (world size 8), 60 steps\njob train-42 "), r.stdout


def plain(v):
    """An attribute as sent: objects and arrays go as JSON text, which MLflow parses back."""
    if isinstance(v, str) and v[:1] in "[{":
        try:
            return json.loads(v)
        except ValueError:
            pass
    return v


@pytest.mark.timeout(180)
@pytest.mark.parametrize("encoding", ["protobuf", "json+gzip"])
def test_receiver_holds_the_spool_tree(h, receiver, symcache, torch_bpf, encoding):
    """What the receiver shows through its own API is the spool's tree: the same spans (ids
    and parents), names, status, attributes and marks, the same times (to MLflow's 256 ns:
    it keeps them as floats)."""
    root = h.spool_root()
    env = {**os.environ, **receiver.env()}
    if encoding == "json+gzip":
        env.update(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json",
                   OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    h.cache_dir = symcache
    o = h.observer("run", "--output", f"spool,otlp={receiver.url}", "--flush-interval", "0.3",
                   "--job", f"tree-{encoding.replace('+', '-')}", "--", *TRAIN, "--epochs",
                   "2", "--batches", "8", "--val-batches", "2", path=root, env=env)
    assert o.finish(90) == 0, o.err.text[-3000:]
    sessions = read_spool(root)
    (sid, s), = sessions.items()
    want = {sp["span_id"]: sp for sp in s.spans.values()}
    got = {}
    from fleet_util import trace_id
    for t in receiver.traces():
        if t["trace_id"] == "tr-" + trace_id(sid):
            got = {int(sp["span_id"], 16): sp for sp in t["spans"]}
    assert set(got) == set(want), (len(got), len(want))
    status = {"ok": "OK", "incomplete": "ERROR", "open": "UNSET"}
    for i, sp in want.items():
        g = got[i]
        assert g["name"] == sp["name"], (i, g, sp)
        assert (int(g["parent_id"], 16) if g["parent_id"] else None) == sp["parent_id"], (i, g)
        assert g["status"] == status[sp["status"]], (i, g["status"], sp["status"])
        assert abs(int(g["start_ns"]) - sp["start_ns"]) <= 256, (i, g["start_ns"], sp)
        assert abs(int(g["end_ns"]) - sp["end_ns"]) <= 256, (i, g["end_ns"], sp)
        a = dict(g["attributes"])
        assert a.pop("cirron.status") == sp["status"]
        if sp["index"] is not None:
            assert a.pop("cirron.index") == sp["index"]
        assert {k: plain(v) for k, v in a.items()} == sp["attrs"], (i, a, sp["attrs"])
        # marks as events: name, time, the rest as attributes
        assert [(e["name"], e["attributes"]) for e in g["events"]] == \
            [(m["name"], {k: v for k, v in m.items() if k not in ("name", "ts_ns")})
             for m in sp["marks"]], (i, g["events"], sp["marks"])
        assert all(abs(int(e["ts_ns"]) - m["ts_ns"]) <= 256
                   for e, m in zip(g["events"], sp["marks"])), (g["events"], sp["marks"])
    assert sum(len(sp["marks"]) for sp in want.values()) >= 2, "no marks to compare"
