# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--metrics ADDR:PORT: a real Prometheus (Debian's package, started here on loopback, scrape
interval 1 s) scrapes a job under `run --metrics`; its HTTP API answers the step count and the
step-time histogram while the job runs. The endpoint itself: the exposition format, 404 and
405, series of an ended session dropped after --metrics-grace, bad address and busy port."""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, SAN, free_port, assert_no_sanitizer_report, san_env, unavailable
from test_signals import target_pid_from_log

PROMETHEUS = Path("/usr/bin/prometheus")
TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
STEPS = ["/usr/bin/python3", str(ROOT / "bench" / "synthetic_steps.py"), "--forever"]
TRAIN = ["/usr/bin/python3", str(ROOT / "tests" / "workloads" / "train.py")]
EXIT_USAGE, EXIT_METRICS_LISTEN = 64, 11
pytestmark = pytest.mark.timeout(180)


def http_get(url, method="GET"):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def metrics_url(obs):
    m = obs.err.wait_for(r"metrics at (http://127\.0\.0\.1:\d+/metrics)", timeout=60)
    return m.group(1)


def wait_until(what, fn, timeout=60, every=0.2):
    """Polls fn() until it returns something true; that value, or a failure naming what."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def parse_exposition(text):
    """{(name, frozenset(labels)): value}, checking each line's syntax on the way."""
    out = {}
    line_rx = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
    label_rx = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
    for ln in text.splitlines():
        if ln.startswith("# HELP ") or ln.startswith("# TYPE "):
            continue
        m = line_rx.match(ln)
        assert m, f"not an exposition line: {ln!r}"
        labels = frozenset((k, v) for k, v, _ in label_rx.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def series(parsed, name, **want):
    return {lab: v for (n, lab), v in parsed.items()
            if n == name and all((k, str(x)) in lab for k, x in want.items())}


@pytest.fixture
def torch_ok(bpf):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")


def start_prometheus(h, target):
    """Prometheus on loopback scraping target (host:port) every second; its API URL."""
    if not PROMETHEUS.exists():
        unavailable("prometheus is not installed (scripts/install-deps.sh installs it)")
    cfg = h.tmp / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                   "scrape_configs:\n  - job_name: cirron\n    scrape_timeout: 1s\n"
                   f"    static_configs:\n      - targets: ['{target}']\n")
    for _ in range(5):      # the port picked may be taken by someone else before we bind it
        port = free_port()
        p = h.start([str(PROMETHEUS), f"--config.file={cfg}",
                     f"--storage.tsdb.path={h.tmp / 'tsdb'}",
                     f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"])
        p.err.wait_for(r"Server is ready to receive web requests|address already in use",
                       timeout=60)
        if "address already in use" not in p.err.text:
            return p, f"http://127.0.0.1:{port}"
        p.wait(30)
    raise AssertionError("no free port for prometheus")


def prom_query(api, q):
    status, _, body = http_get(f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": q}))
    assert status == 200, body
    d = json.loads(body)
    assert d["status"] == "success", d
    return d["data"]["result"]


def test_prometheus_scrapes_a_running_job(h, torch_ok):
    # metrics only: a spool of this fast loop is ~6 MB a second, whose schema check would
    # take three times as long as the test (other tests check spools)
    obs = h.observer("run", "-v", "--metrics", "127.0.0.1:0", "--output", "none", "--", *STEPS)
    url = metrics_url(obs)
    pid = target_pid_from_log(obs)
    try:
        prom, api = start_prometheus(h, url.split("/")[2])
        up = wait_until("the target up in prometheus",
                        lambda: [r for r in prom_query(api, 'up{job="cirron"}')
                                 if r["value"][1] == "1"])
        assert up
        # the step count, as Prometheus stored it, grows while the job runs
        q = f'cirron_steps_total{{job="cirron",pid="{pid}"}}'
        first = wait_until("steps in prometheus",
                           lambda: [float(r["value"][1]) for r in prom_query(api, q)
                                    if float(r["value"][1]) > 0])
        later = wait_until("more steps in prometheus",
                           lambda: [v for v in (float(r["value"][1]) for r in prom_query(api, q))
                                    if v > first[0]])
        assert later[0] > first[0]
        (r,) = prom_query(api, q)
        labels = r["metric"]
        assert labels["rank"] == "0" and labels["local_rank"] == "0" and labels["role"] == "process"
        assert labels["session"].startswith(f"{labels['host']}-{pid}-"), labels
        # the histogram: buckets, count, and a quantile Prometheus computes from them
        buckets = prom_query(api, f'cirron_step_duration_seconds_bucket{{pid="{pid}"}}')
        les = sorted(float(b["metric"]["le"]) for b in buckets)
        assert len(les) == 17 and les[-1] == float("inf"), les
        count = prom_query(api, f'cirron_step_duration_seconds_count{{pid="{pid}"}}')
        inf = [b for b in buckets if b["metric"]["le"] == "+Inf"]
        assert float(count[0]["value"][1]) == float(inf[0]["value"][1]) > 0
        p50 = wait_until("a median step time", lambda: [
            float(x["value"][1]) for x in prom_query(
                api, f'histogram_quantile(0.5, rate(cirron_step_duration_seconds_bucket'
                     f'{{pid="{pid}"}}[5s]))') if x["value"][1] not in ("NaN", "+Inf")])
        assert 0 < p50[0] < 1, p50
        phases = prom_query(api, f'cirron_phase_seconds_total{{pid="{pid}"}}')
        assert {x["metric"]["phase"] for x in phases} == {
            "data_load", "forward", "backward", "optimizer_step", "collective_wait"}
        assert float(next(x for x in phases if x["metric"]["phase"] == "backward")["value"][1]) > 0
        last = prom_query(api, f'time() - cirron_last_step_timestamp_seconds{{pid="{pid}"}}')
        assert -5 < float(last[0]["value"][1]) < 30, last
        assert prom_query(api, f'cirron_hang{{pid="{pid}"}}')[0]["value"][1] == "0"
        rss = wait_until("the process's memory (--sys-interval)", lambda: prom_query(
            api, f'cirron_process_resident_memory_bytes{{pid="{pid}"}} > 10e6'))
        assert float(rss[0]["value"][1]) < 64e9
        cpu = prom_query(api, f'cirron_process_cpu_seconds_total{{pid="{pid}"}}')
        assert {x["metric"]["mode"] for x in cpu} == {"user", "system"}
        assert prom_query(api, 'cirron_node_network_bytes_total{direction="rx"}')
        hits = prom_query(api, f'cirron_uprobe_hits_total{{pid="{pid}"}}')
        assert float(hits[0]["value"][1]) > 0
        prom.signal(signal.SIGTERM)
        assert prom.wait(60) == 0, prom.err.text[-2000:]
    finally:
        os.kill(pid, signal.SIGKILL)
    obs.wait(60)


def test_endpoint_format_errors_and_grace(h, torch_ok, tmp_path):
    """run --metrics of a shell that trains (one session, ended), then waits: the ended
    session's series stay --metrics-grace seconds, marked ended, then go. 404 for other
    paths, 405 for other methods, HEAD, an idle client."""
    root = h.spool_root()
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    train = " ".join(TRAIN + ["--epochs", "1", "--batches", "7", "--val-batches", "1"])
    w = h.observer("run", "-v", "--metrics", "127.0.0.1:0", "--metrics-grace", "8", "--",
                   "/bin/sh", "-c", f"{train} && cat {fifo}", san=True, path=root)
    url = metrics_url(w)
    status, headers, body = http_get(url)
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    parse_exposition(body)
    pid = int(w.err.wait_for(r"pid (\d+): session \S+ ended", timeout=120).group(1))

    def ended():
        p = parse_exposition(http_get(url)[2])
        return list(series(p, "cirron_session_ended", pid=pid).values()) == [1.0] and p
    try:
        p = wait_until("the ended session's series", ended)
    except AssertionError as e:
        raise AssertionError(f"{e}\nthe observer's stderr:\n{w.err.text[-3000:]}") from None
    assert list(series(p, "cirron_steps_total", pid=pid).values()) == [7.0]
    assert list(series(p, "cirron_epochs_total", pid=pid).values()) == [1.0]
    assert list(series(p, "cirron_step_duration_seconds_count", pid=pid).values()) == [7.0]
    assert list(series(p, "cirron_hang", pid=pid).values()) == [0.0]
    assert p[("cirron_sessions", frozenset())] == 0
    wait_until("the series dropped after the grace period",
               lambda: not series(parse_exposition(http_get(url)[2]), "cirron_session_ended",
                                  pid=pid), timeout=60)
    assert http_get(url.replace("/metrics", "/other"))[0] == 404
    assert http_get(url, method="POST")[0] == 405
    assert http_get(url, method="HEAD")[0] == 200
    # a client that connects and says nothing does not stop the loop
    host, port = url.split("/")[2].split(":")
    idle = socket.create_connection((host, int(port)))
    assert http_get(url)[0] == 200
    idle.close()
    with open(fifo, "w"):
        pass
    assert w.wait(60) == 0, w.err.text[-2000:]
    assert_no_sanitizer_report(w.err.text)


def test_bad_address_and_busy_port(h, bpf, tmp_path):
    marker = tmp_path / "started"
    cmd = ["/bin/sh", "-c", f"touch {marker}"]
    for bad in ("localhost:9464", "127.0.0.1", "127.0.0.1:99999", "1.2.3:80", ":-1", ":",
                "127.0.0.1:-1"):
        rc, out, err = h.run_to_end([str(ROOT / "cirron-probe"), "run", "--metrics", bad,
                                     "--", *cmd])
        assert rc == EXIT_USAGE, (bad, rc, err)
        assert err.count("\n") == 1 and f"invalid --metrics '{bad}'" in err, err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        for cmd_args in (["run", "--", *cmd], ["watch"], ["attach", "-p", str(os.getpid())]):
            rc, out, err = h.run_to_end([str(SAN), cmd_args[0], "--metrics",
                                         f"127.0.0.1:{port}", "--path", str(tmp_path / "s"),
                                         *cmd_args[1:]], env=san_env())
            assert_no_sanitizer_report(err)
            assert rc == EXIT_METRICS_LISTEN, (cmd_args, rc, err)
            assert err == (f"cirron-probe: cannot listen on --metrics 127.0.0.1:{port}: "
                           "Address already in use\n"), err
        # PORT and :PORT are 127.0.0.1:PORT: the same address, so the same refusal
        for short in (str(port), f":{port}"):
            rc, out, err = h.run_to_end([str(SAN), "run", "--metrics", short, "--path",
                                         str(tmp_path / "s"), "--", *cmd], env=san_env())
            assert rc == EXIT_METRICS_LISTEN, (short, rc, err)
            assert err == (f"cirron-probe: cannot listen on --metrics 127.0.0.1:{port}: "
                           "Address already in use\n"), err
    assert not marker.exists()      # nothing was started, nothing attached


def test_docs_alert_rules_are_valid(tmp_path):
    """The sample alert rules of docs/outputs.md ("Prometheus metrics") pass promtool."""
    promtool = Path("/usr/bin/promtool")
    if not promtool.exists():
        unavailable("promtool is not installed (the prometheus package has it)")
    readme = (ROOT / "docs" / "outputs.md").read_text()
    start = readme.index("```yaml\ngroups:") + len("```yaml\n")
    rules = tmp_path / "rules.yml"
    rules.write_text(readme[start:readme.index("```\n", start)])
    r = subprocess.run([str(promtool), "check", "rules", str(rules)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS: 3 rules found" in r.stdout, r.stdout + r.stderr


def test_kernel_launches_by_name(h, bpf, tmp_path):
    """cirron_cuda_kernel_launches_total: a process's launches per kernel, by its demangled
    name (tests/targets/cuda_driver_calls.c --names: 4 kernels, 14 launches), the rest as
    kernel="other"; promtool accepts the page."""
    root = h.spool_root()
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    calls = ROOT / ".output" / "tests" / "cuda_driver_calls"
    w = h.observer("run", "-v", "--metrics", "127.0.0.1:0", "--", "/bin/sh", "-c",
                   f"{calls} --names && cat {fifo}", san=True, path=root)
    url = metrics_url(w)
    pid = int(w.err.wait_for(r"pid (\d+): session \S+ ended", timeout=60).group(1))

    def kernels():
        p = parse_exposition(http_get(url)[2])
        got = {dict(lab)["kernel"]: v
               for lab, v in series(p, "cirron_cuda_kernel_launches_total", pid=pid).items()}
        return got if sum(got.values()) == 14 else None
    got = wait_until("the kernels' series", kernels)
    assert got == {"kernel_a(float*)": 5, "driver_kernel()": 4, "kernel_b(int, int)": 3,
                   "lib_kernel(float)": 2, "other": 0}, got
    r = subprocess.run(["promtool", "check", "metrics"], input=http_get(url)[2],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(fifo, "w") as f:
        f.write("go\n")
    assert w.finish(60) == 0, w.err.text
    assert_no_sanitizer_report(w.err.text)
