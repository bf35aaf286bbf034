# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Run inside the fleet venv (tests/scripts/make-fleet-venv.sh) by the fleet tests and
bench/fleet.sh: what they ask of the engines and the receiver, answered as JSON on stdout.

    fleet_client.py query     < {"engine": "clickhouse"|"duckdb", "setup": [SQL...],
                                 "queries": {NAME: SQL}}  -> {NAME: {"columns", "rows", "seconds"}}
    fleet_client.py mlflow URL                             -> [{"trace_id", "spans": [...]}]
"""
import json
import os
import sys
import time


def query(req):
    if req["engine"] == "clickhouse":
        from chdb import session
        s = session.Session()

        def run(sql):
            r = s.query(sql, "JSONCompact")
            out = json.loads(r.bytes() or b"{}") if r.bytes() else {}
            return [c["name"] for c in out.get("meta", [])], out.get("data", [])
    else:
        import duckdb
        import duckdb_extension_httpfs
        con = duckdb.connect()
        ext = os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions",
                           f"v{duckdb.__version__}", "httpfs.duckdb_extension")
        con.execute(f"INSTALL '{ext}'")
        con.execute("LOAD httpfs")

        def run(sql):
            cur = con.execute(sql)
            cols = [d[0] for d in cur.description] if cur.description else []
            return cols, [list(r) for r in cur.fetchall()] if cols else []
    for sql in req.get("setup", []):
        run(sql)
    out = {}
    for name, sql in req["queries"].items():
        t = time.monotonic()
        cols, rows = run(sql)
        out[name] = {"columns": cols, "rows": rows, "seconds": time.monotonic() - t}
    return out


def mlflow_traces(url):
    from mlflow import MlflowClient
    c = MlflowClient(url)
    out, token = [], None
    while True:
        page = c.search_traces(locations=["0"], max_results=100, page_token=token)
        for t in page:
            out.append({"trace_id": t.info.trace_id, "spans": [{
                "name": s.name, "span_id": s.span_id, "parent_id": s.parent_id,
                "start_ns": s.start_time_ns, "end_ns": s.end_time_ns,
                "status": s.status.status_code.value,
                "events": [{"name": e.name, "ts_ns": e.timestamp,
                            "attributes": dict(e.attributes)} for e in s.events],
                "attributes": {k: v for k, v in s.attributes.items()
                               if not k.startswith("mlflow.")}} for s in t.data.spans]})
        token = page.token
        if not token:
            return out


if __name__ == "__main__":
    if sys.argv[1] == "query":
        print(json.dumps(query(json.load(sys.stdin)), default=str))
    elif sys.argv[1] == "mlflow":
        print(json.dumps(mlflow_traces(sys.argv[2]), default=str))
