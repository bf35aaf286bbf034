# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""What the fleet tests share: a SeaweedFS store whose S3 gateway can be killed and brought
back on its own (writable again within a second), MLflow's tracking server as the OTLP
receiver, the engines (chdb, DuckDB) and the cookbook's SQL read out of docs/fleet.md."""
import gzip
import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path
from string import Template

from conftest import ROOT, free_ports, unavailable
from test_s3 import KEY_ID, SECRET, WAIT_S, Weed, wait_until

FLEET_DOC = ROOT / "docs" / "fleet.md"


def fleet_venv():
    r = subprocess.run([ROOT / "tests/scripts/make-fleet-venv.sh"], capture_output=True,
                       text=True, timeout=900)
    if r.returncode:
        unavailable(f"tests/scripts/make-fleet-venv.sh failed:\n{r.stderr[-2000:]}")
    return Path(r.stdout.strip().splitlines()[-1])


class Store(Weed):
    """`weed server` (master, volume, filer) and a `weed s3` gateway of its own: kill_gateway()
    takes the store away (SIGKILL), start_gateway() brings it back, writable within a second
    (the master and volumes never left)."""

    def __init__(self, binary, tmp):
        super().__init__(binary, tmp)
        self.gw = None

    def start(self):
        """The server, then its gateway; a gateway that never answers stops both."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        self.log = open(self.dir / "weed.log", "a")
        self.proc = subprocess.Popen(
            [self.binary, "server", f"-dir={self.dir / 'data'}", "-ip=127.0.0.1",
             "-ip.bind=127.0.0.1", f"-master.port={self.m}", f"-master.port.grpc={self.mg}",
             f"-volume.port={self.v}", f"-volume.port.grpc={self.vg}", "-volume.max=16",
             "-filer", f"-filer.port={self.f}", f"-filer.port.grpc={self.fg}",
             "-metricsPort=0"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.start_gateway()

    def start_gateway(self):
        self.gw = subprocess.Popen(
            [self.binary, "s3", f"-filer=127.0.0.1:{self.f}.{self.fg}", "-ip.bind=127.0.0.1",
             f"-port={self.s3}", f"-port.grpc={self.s3g}", "-port.iceberg=0", "-port.lance=0",
             f"-config={self.config}"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_until(lambda: self.curl("/", check=False)[0] == 200, "the S3 gateway's answer")

    def hold_port(self, n):
        """A store starting up: something takes connections on the S3 port and answers
        nothing, until n requests hang there; then the real gateway takes the port over (the
        held connections stay open, unanswered, until stop())."""
        self.held = []
        lsock = socket.socket()
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", self.s3))
        lsock.listen(64)
        while len(self.held) < n:
            c, _ = lsock.accept()
            self.held.append(c)
        lsock.close()

    def kill_gateway(self):
        if self.gw and self.gw.poll() is None:
            os.killpg(self.gw.pid, signal.SIGKILL)
            self.gw.wait(10)
        self.gw = None

    def stop(self):
        self.kill_gateway()
        for c in getattr(self, "held", []):
            c.close()
        super().stop()

    def rows(self, bucket, prefix):
        """{key: size} of the span rows objects under PREFIX/spans/."""
        return {k: v for k, v in self.objects(bucket, f"{prefix}/spans/").items()}


class MLflow:
    """MLflow's tracking server (the fleet venv's), an OTLP/HTTP receiver at /v1/traces that
    wants the experiment in a header: x-mlflow-experiment-id=0 (the default experiment)."""

    def __init__(self, venv, tmp):
        self.venv, self.dir = venv, tmp / "mlflow"
        self.dir.mkdir(exist_ok=True)
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        self.log = open(self.dir / "server.log", "a")
        self.proc = subprocess.Popen(
            [self.venv / "bin/mlflow", "server", "--backend-store-uri",
             f"sqlite:///{self.dir / 'mlflow.db'}", "--default-artifact-root",
             str(self.dir / "artifacts"), "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", "1"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True, env={**os.environ, "MLFLOW_ENABLE_TELEMETRY": "false",
                                         "DO_NOT_TRACK": "true"})
        wait_until(self.healthy, "MLflow's /health", timeout=120)

    def healthy(self):
        r = subprocess.run(["curl", "-s", "--max-time", "5", self.url + "/health"],
                           capture_output=True, text=True)
        return r.stdout.strip() == "OK"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def env(self):
        return {"OTEL_EXPORTER_OTLP_HEADERS": "x-mlflow-experiment-id=0"}

    def traces(self):
        r = subprocess.run([self.venv / "bin/python", ROOT / "tests/e2e/fleet_client.py",
                            "mlflow", self.url], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout)


def cookbook():
    """docs/fleet.md's cookbook: {(name, engine): SQL} from its ```sql blocks that begin
    `-- cookbook: NAME (ENGINE)`, ENGINE clickhouse, duckdb or both."""
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", FLEET_DOC.read_text(), re.S):
        m = re.match(r"-- cookbook: (\S+) \((clickhouse|duckdb|both)\)\n", block)
        if not m:
            continue
        for eng in ("clickhouse", "duckdb") if m[2] == "both" else (m[2],):
            out[(m[1], eng)] = block
    return out


def sql_statements(text):
    """Statements of a block: split at ';' ending a line, comment-only ones dropped."""
    out = []
    for part in re.split(r";\s*\n", text):
        code = "\n".join(l for l in part.splitlines() if not l.strip().startswith("--"))
        if code.strip():
            out.append(code.strip().rstrip(";"))
    return out


def run_queries(venv, engine, store, bucket, prefix, names, **params):
    """The cookbook's view for engine over the store, then the named queries, with their
    $placeholders filled: {name: {"columns", "rows", "seconds"}}."""
    book = cookbook()
    fill = dict(endpoint=store.endpoint, host_port=store.endpoint.split("://")[1],
                bucket=bucket, prefix=prefix, key=KEY_ID, secret=SECRET, **params)
    sub = lambda text: Template(text).safe_substitute(fill)
    req = {"engine": engine, "setup": sql_statements(sub(book[("view", engine)])),
           "queries": {n: sql_statements(sub(book[(n, engine)]))[-1] for n in names}}
    r = subprocess.run([venv / "bin/python", ROOT / "tests/e2e/fleet_client.py", "query"],
                       input=json.dumps(req), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout)


_M64 = (1 << 64) - 1


def _h64(s, seed):
    h = 0xcbf29ce484222325 ^ seed
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & _M64
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & _M64
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & _M64
    return h ^ (h >> 33)


def trace_id(session_id):
    """The TraceId of a session, as ship/otel_spans.c makes it (docs/fleet.md)."""
    return f"{_h64(session_id, 0):016x}{_h64(session_id, 0x9e3779b97f4a7c15):016x}"


def final_spans(root):
    """{(session id, span id)} of the spans a spool holds as final: closed, or left open in a
    session's final batch; what each destination must hold once."""
    out = set()
    for f in sorted((root / "spool").iterdir()):
        if not f.name.endswith(".json"):
            continue
        b = json.loads(f.read_text())
        for sp in b["spans"]:
            if sp["status"] != "open" or b["final"]:
                out.add((b["session_id"], sp["span_id"]))
    return out


def store_spans(store, bucket, prefix):
    """[(session id, span id)] of every row in the store (a list: duplicates show)."""
    out = []
    for key in store.rows(bucket, prefix):
        # curl's --aws-sigv4 signs '=' in a path only encoded
        for line in gzip.decompress(store.get(bucket, key.replace("=", "%3D"))).decode() \
                .splitlines():
            row = json.loads(line)
            out.append((row["ResourceAttributes"]["cirron.session"], int(row["SpanId"], 16)))
    return out


def receiver_spans(receiver, sessions):
    """[(session id, span id)] of the receiver's spans of these sessions."""
    by_trace = {"tr-" + trace_id(s): s for s in sessions}
    return [(by_trace[t["trace_id"]], int(sp["span_id"], 16)) for t in receiver.traces()
            if t["trace_id"] in by_trace for sp in t["spans"]]
