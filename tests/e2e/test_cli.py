# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--help, --version, and `doctor` (which attaches nothing)."""
import json
import os
import re
import signal

import pytest

from conftest import (BIN, CUDA_CALLS, LIBCUDART, ROOT, SAN, SPIN, assert_no_sanitizer_report,
                      san_env)

BINARIES = {"plain": BIN, "san": SAN}


def cli(h, which, *args):
    return h.run_to_end([BINARIES[which], *args], env=san_env())


@pytest.mark.parametrize("which", ["plain", "san"])
@pytest.mark.parametrize("flag", ["--help", "-h", "help"])
def test_help(h, built, which, flag):
    rc, out, err = cli(h, which, flag)
    assert rc == 0 and err == ""
    assert "USAGE: cirron-probe COMMAND" in out
    for cmd in ("attach -p PID", "run [OPTS] -- CMD", "doctor -p PID"):
        assert cmd in out, cmd
    # Every exit code, documented where the user looks for it.
    for code, what in [(0, "success"), (1, "runtime failure"), (2, "no such process"),
                       (3, "no permission"), (4, "no library"), (5, "spool path"),
                       (6, "exited while attaching"), (64, "usage")]:
        assert re.search(rf"^\s+{code}\s+.*{what}", out, re.M), (code, what)


OBSERVE = ("--output", "--path", "--flush-interval", "--duration", "--cuda-detail", "--cache-dir",
           "--verbose")


# What each command's --help lists (the whole set is compared with cirron-probe(1) in
# test_manpage.py): run refuses -p (it starts its command) and doctor only takes what decides
# which probes resolve, so neither lists what it does not take.
@pytest.mark.parametrize("cmd, listed, not_listed", [
    ("attach", ("--pid",) + OBSERVE, ()),
    ("run", OBSERVE, ("--pid",)),
    ("doctor", ("--pid", "--cache-dir", "--verbose", "--python-frames", "--cuda-calls"),
     ("--output", "--path", "--flush-interval", "--duration", "--cuda-detail")),
])
def test_command_help(h, built, cmd, listed, not_listed):
    rc, out, err = cli(h, "san", cmd, "--help")
    assert rc == 0 and err == ""
    assert out.startswith(f"Usage: cirron-probe {cmd} ")
    options = set(re.findall(r"^ {2,}(?:-\S, )?(--[a-z-]+)", out, re.M))
    for opt in listed:
        assert opt in options, opt
    for opt in not_listed:
        assert opt not in options, opt
    assert re.search(r"^Exit codes: ", out, re.M), out


@pytest.mark.parametrize("which", ["plain", "san"])
@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(h, built, which, flag):
    version = re.search(r"^VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    rc, out, err = cli(h, which, flag)
    assert rc == 0 and err == ""
    assert out == f"cirron-probe {version}\n"


def test_no_arguments(h, built):
    rc, out, err = cli(h, "san")
    assert rc == 64 and out == ""
    assert "USAGE: cirron-probe COMMAND" in err


# ---- doctor ---------------------------------------------------------------------------------

def test_doctor_cuda_target(h, built):
    t = h.start([CUDA_CALLS, "--wait"])
    t.out.wait_for(r"^ready$")
    rc, out, err = h.run_to_end([SAN, "doctor", "-p", t.pid, "--cache-dir", h.cache_dir],
                                env=san_env())
    assert rc == 0, err
    assert_no_sanitizer_report(err)
    assert err == ""
    assert f"target: pid {t.pid} (cuda_calls)" in out
    m = re.search(r"^  cudart: matched in (\S+) \(defines cudaLaunchKernel\)$", out, re.M)
    assert m, out
    assert os.path.realpath(m.group(1)) == os.path.realpath(LIBCUDART)
    assert re.search(r"^  ldso: matched in \S*ld-linux\S* \(defines _dl_debug_state\)$", out,
                     re.M), out
    # Each cudart probe resolves ("ok", its action, its file offset).
    section = cudart_section(out)
    for p in json.loads((ROOT / "probes" / "cudart.json").read_text())["probes"]:
        assert re.search(rf"^    ok +{re.escape(p['symbol'])} +{p['action']} \+0x[0-9a-f]+$",
                         section, re.M), f"{p['symbol']} not ok:\n{section}"
    assert "MISSING" not in section
    assert out.rstrip().endswith("verdict: attachable")
    # doctor attached nothing and did not disturb the target.
    t.signal(signal.SIGUSR1)
    assert t.finish() == 0
    assert "done device_count=" in t.out.text


def cudart_section(out):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("  cudart: matched in "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")),
               len(lines))
    return "\n".join(lines[start + 1:end])


def test_doctor_no_known_library(h, built):
    spin = h.start([SPIN])
    spin.out.wait_for(r"^ready$")
    rc, out, err = h.run_to_end([SAN, "doctor", "-p", spin.pid, "--cache-dir", h.cache_dir],
                                env=san_env())
    assert rc == 4, out + err
    assert_no_sanitizer_report(err)
    assert f"target: pid {spin.pid} (spin)" in out
    assert "  cudart: no mapped file defines cudaLaunchKernel" in out
    assert re.search(r"^verdict: nothing to observe yet", out, re.M), out
    assert out.rstrip().splitlines()[-1].startswith("verdict: ")
