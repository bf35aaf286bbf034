# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A process's CPU seconds and memory from /proc, for the agent benchmarks."""
import os
import re
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    """User + system CPU seconds so far."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ


def mem(pid):
    """[RSS, peak RSS] in MiB."""
    s = Path(f"/proc/{pid}/status").read_text()
    return [int(re.search(rf"^{k}:\s+(\d+)", s, re.M).group(1)) / 1024 for k in ("VmRSS", "VmHWM")]
