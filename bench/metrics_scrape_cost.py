#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The observer's CPU time per /metrics request: `cirron-probe run --metrics 127.0.0.1:0
--output none` of a CUDA client held after its calls (one live session with CUDA totals, no
new spans), its user + system time (/proc/PID/stat) over IDLE_S seconds without requests, then
over N sequential requests.

    metrics_scrape_cost.py PROBE CUDA_CALLS [N] [IDLE_S]
Prints "idle_cpu_s=... requests=N cpu_per_request_us=... page_bytes=... wall_per_request_ms=..."."""
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

probe, cuda = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
idle_s = float(sys.argv[4]) if len(sys.argv) > 4 else 10
tick = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


p = subprocess.Popen([probe, "run", "--metrics", "127.0.0.1:0", "--output", "none", "-v", "--",
                      cuda, "--hold"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
url = target = None
deadline = time.monotonic() + 120
while time.monotonic() < deadline and not (url and target):
    line = p.stderr.readline()
    url = url or (re.search(r"metrics at (\S+)", line) or [None, None])[1]
    target = target or (re.search(r"pid (\d+): session \S+ started", line) or [None, None])[1]
assert url and target, "the observer did not start"
while b"cirron_sessions 1" not in urllib.request.urlopen(url, timeout=10).read():
    time.sleep(0.1)
c0 = cpu(p.pid)
time.sleep(idle_s)
c1 = cpu(p.pid)
t0 = time.monotonic()
size = 0
for _ in range(n):
    size = len(urllib.request.urlopen(url, timeout=10).read())
t1 = time.monotonic()
c2 = cpu(p.pid)
os.kill(int(target), signal.SIGUSR1)
p.wait(60)
print(f"idle_cpu_s={c1 - c0:.2f} idle_s={idle_s:g} requests={n} "
      f"cpu_per_request_us={(c2 - c1) / n * 1e6:.0f} page_bytes={size} "
      f"wall_per_request_ms={(t1 - t0) / n * 1e3:.1f}")
