# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The fleet outputs under faults (docs/fleet.md, 'Durability'): the store's S3 gateway killed
and back while the job runs or during the final drain, the OTLP receiver down for a minute's
worth of batches, 503 SlowDown with Retry-After, the disk under the spool full, the agent
killed and started again. Each time: the job untouched, nothing written before lost, nothing
sent twice (each destination holds each final span of the spool once), every loss counted in
health and said once. Tests wait for what they check (batch files, log lines), never for a
time."""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections import Counter

import pytest

from conftest import BIN, ROOT, read_spool
from fleet_util import (MLflow, Store, fleet_venv, final_spans, receiver_spans, store_spans)
from test_s3 import symcache, torch_bpf, weed_bin, wait_until, WAIT_S  # noqa: F401 (fixtures)

TRAIN = ["/usr/bin/python3", ROOT / "tests/workloads/train.py"]


@pytest.fixture
def store(weed_bin, tmp_path):
    s = Store(weed_bin, tmp_path)
    s.start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def venv():
    return fleet_venv()


def batches(root):
    d = root / "spool"
    return sorted(f.name for f in d.iterdir() if f.name.endswith(".json")) if d.is_dir() else []


def assert_once(held, want, what):
    dup = [k for k, n in Counter(held).items() if n > 1]
    assert not dup, f"{what}: {len(dup)} spans twice, e.g. {dup[:3]}"
    missing = want - set(held)
    assert not missing, f"{what}: {len(missing)} of {len(want)} spans missing, e.g. " \
                        f"{sorted(missing)[:3]}"


def observe(h, symcache, root, outputs, *args, env, cmd="run"):
    h.cache_dir = symcache
    return h.observer(cmd, "--output", f"spool,{outputs}", *args, path=root, env=env)


@pytest.mark.timeout(180)
def test_store_back_while_the_job_runs_gets_everything(h, store, symcache, torch_bpf):
    """Found held out: two ranks, the store (weed server -s3) killed 3 s into a 10 s job and
    back 4 s later: the uploads never resumed, and each observer left 8 batches behind. A
    SeaweedFS started again takes connections at once but answers a PUT only once its master
    has a leader again (10 s and more): the request made then hung until the drain's end
    (30 s per request), and the backoff (8 s) overshot the drain. Here the store's port takes
    the requests and answers nothing until every shipper has one hanging there (a store
    starting up), then the store is back."""
    bucket = store.bucket()
    obs = []
    for rank in (0, 1):
        root = h.spool_root()
        env = store.env(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2")
        obs.append((observe(h, symcache, root, f"s3://{bucket}/r", "--flush-interval", "1",
                            "--", *TRAIN, "--epochs", "25", "--batches", "6",
                            "--step-sleep", "60", env=env), root))
    # 3 s in: each rank has written 3 batches (flush interval 1 s)
    wait_until(lambda: all(len(batches(r)) >= 3 for _, r in obs), "3 batches of each rank")
    store.kill_gateway()
    n = [len(batches(r)) for _, r in obs]
    wait_until(lambda: all(len(batches(r)) >= k + 4 for (_, r), k in zip(obs, n)),
               "4 more batches of each rank, the store down")
    store.hold_port(4)      # 2 observers x 2 shippers (batch files, span rows)
    store.start_gateway()
    for o, root in obs:
        assert o.finish(90) == 0, o.err.text[-3000:]
        assert re.search(r"s3: cannot upload to s3://\S+: no answer", o.err.text), o.err.text
        assert re.search(r"s3: upload to s3://\S+ works again", o.err.text), o.err.text
        assert "not sent" not in o.err.text, o.err.text
    keys = store.objects(bucket, "r/")
    for _, root in obs:
        missing = [b for b in batches(root) if not any(k.endswith("/" + b) for k in keys)]
        assert not missing, f"batch files not in the store: {missing}"
    want = set().union(*(final_spans(r) for _, r in obs))
    assert_once(store_spans(store, bucket, "r"), want, "the store's span rows")


@pytest.mark.timeout(180)
def test_store_back_during_the_final_drain_gets_everything(h, store, symcache, torch_bpf):
    bucket, root = store.bucket(), h.spool_root()
    o = observe(h, symcache, root, f"s3://{bucket}/d", "--flush-interval", "0.5", "--",
                *TRAIN, "--epochs", "6", "--batches", "10", "--step-sleep", "20",
                env=store.env())
    wait_until(lambda: len(batches(root)) >= 2, "2 batches")
    store.kill_gateway()
    o.err.wait_for(r"s3: cannot upload to s3://\S+: no answer", timeout=WAIT_S)
    # the job ends; the final batch is written while the store is still down
    wait_until(lambda: any(json.loads((root / "spool" / b).read_text())["final"]
                           for b in batches(root)), "the final batch")
    assert o.alive()
    store.start_gateway()
    assert o.finish(60) == 0, o.err.text[-3000:]
    assert "not sent" not in o.err.text and "works again" in o.err.text, o.err.text
    assert_once(store_spans(store, bucket, "d"), final_spans(root), "the store's span rows")


@pytest.mark.timeout(420)
def test_receiver_down_for_a_minute_loses_nothing(h, venv, symcache, torch_bpf, tmp_path):
    """MLflow stopped for a minute (60 batches at the default flush interval), then started
    again: every span once."""
    receiver = MLflow(venv, tmp_path)
    receiver.start()
    try:
        root, until = h.spool_root(), tmp_path / "until"
        # steps of 50 ms: MLflow on SQLite, sharing 2 cores with the job, keeps up with them
        o = observe(h, symcache, root, f"otlp={receiver.url}", "--flush-interval", "1", "--",
                    *TRAIN, "--until-file", until, "--step-sleep", "50",
                    env={**os.environ, **receiver.env()})
        wait_until(lambda: len(batches(root)) >= 3, "3 batches")
        receiver.stop()
        o.err.wait_for(r"otlp: cannot upload to http://\S+: no answer", timeout=WAIT_S)
        n = len(batches(root))
        wait_until(lambda: len(batches(root)) >= n + 60, "60 batches, the receiver down",
                   timeout=150)
        receiver.start()
        o.err.wait_for(r"otlp: upload to http://\S+ works again", timeout=WAIT_S)
        # the backlog drains while the job runs (a batch's line in the state log once taken)
        wait_until(lambda: len((root / "otlp-sent.log").read_text().splitlines()) >=
                   len(batches(root)) - 1, "the backlog sent", timeout=120)
        until.touch()
        assert o.finish(90) == 0, o.err.text[-3000:]
        assert "not sent" not in o.err.text, o.err.text
        want = final_spans(root)
        assert_once(receiver_spans(receiver, {s for s, _ in want}), want, "the receiver")
        up = [s.health["otlp"] for s in read_spool(root).values()][0]
        assert up["backlog_objects"] == 0 and up["failed"] >= 1 and up["error"] is None, up
        backlog = max(json.loads((root / "spool" / b).read_text())["health"]["otlp"]
                      ["backlog_objects"] for b in batches(root))
        assert backlog >= 60, backlog
    finally:
        receiver.stop()


class SlowDown:
    """A proxy before the store that answers the first n PUTs with S3's 503 SlowDown and
    Retry-After: 1, and passes the rest; it notes when each PUT came."""

    def __init__(self, port, n):
        self.port, self.left, self.puts = port, n, []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        head = b""
        while b"\r\n\r\n" not in head:
            data = c.recv(65536)
            if not data:
                c.close()
                return
            head += data
        is_put = head.startswith(b"PUT ")
        with self.lock:
            slow = is_put and self.left > 0
            self.left -= slow
            if is_put:      # which shipper: the span rows' keys are under spans/
                self.puts.append((time.monotonic(), slow, b"/spans/" in head.split(b"\r\n")[0]))
        if slow:
            body = (b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please "
                    b"reduce your request rate.</Message></Error>")
            c.sendall(b"HTTP/1.1 503 Slow Down\r\nRetry-After: 1\r\nContent-Type: "
                      b"application/xml\r\nConnection: close\r\nContent-Length: " +
                      str(len(body)).encode() + b"\r\n\r\n" + body)
            c.close()
            return
        u = socket.create_connection(("127.0.0.1", self.port))
        u.sendall(head)
        threading.Thread(target=self._pump, args=(c, u), daemon=True).start()
        self._pump(u, c)

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.sock.close()


@pytest.mark.timeout(180)
def test_slowdown_is_waited_for_as_asked(h, store, symcache, torch_bpf):
    bucket, root = store.bucket(), h.spool_root()
    proxy = SlowDown(store.s3, 6)
    try:
        o = observe(h, symcache, root, f"s3://{bucket}/slow", "--flush-interval", "0.3", "--",
                    *TRAIN, "--epochs", "4", "--batches", "10", "--step-sleep", "20",
                    env=store.env(AWS_ENDPOINT_URL=proxy.endpoint))
        assert o.finish(90) == 0, o.err.text[-3000:]
    finally:
        proxy.close()
    assert "HTTP 503 SlowDown" in o.err.text, o.err.text
    assert "not sent" not in o.err.text, o.err.text
    # after each 503 the same shipper's next PUT came a second later or more (Retry-After: 1)
    puts = sorted(proxy.puts)
    assert sum(1 for _, s, _ in puts if s) == 6, puts
    for t, slow, rows in puts:
        nxt = [u for u, _, r in puts if u > t and r == rows]
        if slow:
            assert nxt and nxt[0] - t >= 0.95, (t, rows, puts)
    assert_once(store_spans(store, bucket, "slow"), final_spans(root), "the store's span rows")
    # each shipper counts the 503s it got (how the 6 fell between the two is timing); the
    # spool's last health was written at the job's end, before the shippers drained: what
    # they had counted by then, never more than they got, the first ones in already
    (health,) = [s.health for s in read_spool(root).values()]
    for key, rows in (("upload", False), ("upload_rows", True)):
        got = sum(1 for _, s, r in puts if s and r == rows)
        assert health[key]["failed"] <= got, (key, got, health[key])
    assert health["upload"]["failed"] + health["upload_rows"]["failed"] >= 1, health


@pytest.mark.timeout(120)
def test_full_disk_under_the_spool_is_counted_and_said_once(h, store, symcache, torch_bpf,
                                                            tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], check=True)
    try:
        bucket, root = store.bucket(), mnt / "cirron"
        o = observe(h, symcache, root, f"s3://{bucket}/full", "--flush-interval", "0.2",
                    "--sys-interval", "0.05", "--", *TRAIN, "--epochs", "30", "--batches", "10",
                    "--step-sleep", "5", env=store.env())
        assert o.finish(120) == 0, o.err.text[-3000:]     # the job untouched: its own status
        said = re.findall(r"cannot write spool batch to .*No space left on device", o.err.text)
        assert len(said) == 1, o.err.text[-3000:]
        m = re.search(r"(\d+) spool batches \((\d+) spans\) could not be written", o.err.text)
        assert m and int(m[1]) >= 1, o.err.text[-3000:]
        # what was written is whole in the store, once (the shippers' logs may not fit: then
        # a batch could be sent again at the next start, never lost)
        written = final_spans(root)
        assert written, "nothing was written before the disk filled"
        assert_once(store_spans(store, bucket, "full"), written, "the store's span rows")
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


@pytest.mark.timeout(300)
def test_agent_killed_and_started_again_sends_each_span_once(h, store, venv, symcache,
                                                              torch_bpf, tmp_path):
    receiver = MLflow(venv, tmp_path)
    receiver.start()
    try:
        bucket, root, until = store.bucket(), h.spool_root(expect_final=False), \
            tmp_path / "until"
        job = h.start([*TRAIN, "--until-file", until, "--step-sleep", "50"])
        job.out.wait_for(r"^ready$", timeout=60)
        env = {**store.env(), **receiver.env()}
        outs = f"s3://{bucket}/k,otlp={receiver.url}"
        o1 = observe(h, symcache, root, outs, "--flush-interval", "0.2", "-p", str(job.pid),
                     env=env, cmd="attach")
        wait_until(lambda: len(batches(root)) >= 15, "15 batches")
        o1.signal(signal.SIGKILL)
        o1.finish()
        o2 = observe(h, symcache, root, outs, "--flush-interval", "0.2", "-p", str(job.pid),
                     env=env, cmd="attach")
        wait_until(lambda: len(batches(root)) >= 30, "15 batches more")
        until.touch()
        assert job.finish(60) == 0
        assert o2.finish(60) == 0, o2.err.text[-3000:]
        want = final_spans(root)
        assert len({s for s, _ in want}) == 2, "two observations, two sessions"
        assert_once(store_spans(store, bucket, "k"), want, "the store's span rows")
        assert_once(receiver_spans(receiver, {s for s, _ in want}), want, "the receiver")
        for log in ("s3-sent.log", "s3-rows-sent.log", "otlp-sent.log"):
            lines = (root / log).read_text().splitlines()
            assert len(lines) == len(set(lines)) == len(batches(root)), (log, len(lines))
    finally:
        receiver.stop()
