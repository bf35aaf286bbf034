# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The CPython tier on builds probes/cpython.json has no build-id entry for, made from
Debian's stripped python3.11 (a copy with another build-id: the fast path misses, the symbol
table has no slot_tp_call, so the slotdefs table must find it), and a fake 3.14 (the same
copy with Py_Version patched): it degrades with a clear reason, the tree stays whole."""
import os
import struct
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, TIME_SCALE, only_session, read_spool, unavailable
from test_torch_tree import STEP, TRAIN, check_steps, check_well_formed, children, named

DEBIAN_PYTHON = "/usr/bin/python3.11"
PURE = ROOT / "tests" / "workloads" / "pure_modules.py"
DEBIAN_BUILD_ID = "571d98e01096d5c1c32420d229a6731a0a50d2a0"
pytestmark = pytest.mark.timeout(240)


def patched_python(tmp_path, name, version_hex=None):
    """A copy of Debian's python3.11 with its build-id changed (and Py_Version, if asked)."""
    data = bytearray(open(DEBIAN_PYTHON, "rb").read())
    bid = bytes.fromhex(DEBIAN_BUILD_ID)
    i = data.find(bid)
    if i < 0:
        unavailable("not Debian bookworm's python3.11 3.11.2 (build-id differs)")
    data[i] ^= 0xff
    if version_hex is not None:
        out = subprocess.run(["readelf", "-W", "--dyn-syms", "-l", DEBIAN_PYTHON],
                             capture_output=True, text=True, check=True).stdout
        (va,) = [int(ln.split()[1], 16) for ln in out.splitlines() if ln.split()[-1:] == ["Py_Version"]]
        for ln in out.splitlines():
            f = ln.split()
            if f and f[0] == "LOAD" and int(f[2], 16) <= va < int(f[2], 16) + int(f[4], 16):
                off = int(f[1], 16) + va - int(f[2], 16)
        assert struct.unpack_from("<I", data, off)[0] >> 16 == 0x030b
        struct.pack_into("<I", data, off, version_hex)
    path = tmp_path / name
    path.write_bytes(bytes(data))
    path.chmod(0o755)
    return path


def trace(h, python, *args):
    root = h.spool_root()
    p = h.observer("run", "--output", "spool", "--python-frames", "always", "--", str(python),
                   str(TRAIN), *args, path=root)
    assert p.finish(180) == 0, p.err.text[-3000:]
    return only_session(root), p.err.text


def test_stripped_build_found_by_slotdefs(h, bpf, tmp_path):
    py = patched_python(tmp_path, "python3.11")
    s, _ = trace(h, py, "--epochs", "2", "--batches", "3", "--val-batches", "1")
    check_well_formed(s)
    check_steps(s, 6, STEP)
    a = s.root["attrs"]
    assert a["python_frames"] == "exact" and "python_frames_reason" not in a, a
    (probe,) = [p for p in s.health["probes"] if p["symbol"].startswith("slot_tp_call")]
    assert probe["symbol"] == "slot_tp_call (found in slotdefs)" and probe["attached"], probe
    for st in named(s, "step"):
        (fwd,) = children(s, st, "forward")
        assert fwd["attrs"]["module"] == "Sequential" and "timing" not in fwd["attrs"]
    for e in named(s, "epoch"):
        assert [f["attrs"]["mode"] for f in children(s, e, "forward")] == ["eval"]


def test_unknown_version_degrades_with_a_reason(h, bpf, tmp_path):
    py = patched_python(tmp_path, "python3.14", version_hex=0x030E00F0)
    s, err = trace(h, py, "--epochs", "1", "--batches", "3")
    check_well_formed(s)
    check_steps(s, 3, STEP)
    a = s.root["attrs"]
    assert a["python_version"] == "3.14.0"
    assert a["python_frames"] == "unavailable", a
    assert "CPython 3.14.0" in a["python_frames_reason"], a
    assert "CPython 3.14.0" in s.health["python_frames_reason"]
    lines = [ln for ln in err.splitlines() if "Python frames unavailable" in ln]
    assert len(lines) == 1 and "3.14.0" in lines[0], err
    assert all(f["attrs"]["timing"] == "inferred" for f in named(s, "forward"))


PY312 = Path(os.environ.get("CIRRON_PY312", str(Path.home() / ".pyenv/versions/3.12.1/bin/python3.12")))
CUDART = "/usr/local/cuda/lib64/libcudart.so.13"


def model_calls(root):
    sessions = read_spool(root, expect_final=False, allow_empty=True)
    return [f for s in sessions.values() for f in s.spans.values()
            if f["name"] == "forward" and f["attrs"].get("module") == "Net"]


def test_cpython_312_python_frames(h, bpf, tmp_path):
    """CPython 3.12 (pyenv's build; no torch wheel for it on this machine's disk): the Python
    tier finds slot_tp_call and reads a module's `training` from its __dict__ (3.12's layout),
    on a torch-free model (tests/workloads/pure_modules.py: a class chain with a Module, as
    torch's). The process maps the CUDA runtime so that the observer takes it."""
    if not PY312.exists():
        unavailable(f"{PY312} is missing (pyenv's CPython 3.12)")
    if not Path(CUDART).exists():
        unavailable(f"{CUDART} is missing")
    root, go, stop = h.spool_root(), tmp_path / "go", tmp_path / "stop"
    learned = tmp_path / "learned"
    p = h.observer("run", "-v", "--output", "spool", "--python-frames", "always", "--",
                   str(PY312), str(PURE), "--load", CUDART, "--go-file", str(go),
                   "--stop-file", str(stop), "--learned-file", str(learned),
                   "--train", "3", "--eval", "2", "--rounds", "2", path=root)
    p.err.wait_for(r"session \S+ started")
    go.touch()
    # A class's first calls come before the loader has read where its `training` lies: the
    # measured calls start once a call of the class said module.training (in the spool).
    deadline = time.monotonic() + 60 * TIME_SCALE
    while not any(f["attrs"]["mode_source"] == "module.training" for f in model_calls(root)):
        assert time.monotonic() < deadline, "no Net call read module.training"
        time.sleep(0.2)    # polls the spool (flushed every second): an event, not a delay
    learned.touch()
    p.out.wait_for(r"^MEASURED$", timeout=60)
    stop.touch()
    assert p.finish(60) == 0, p.err.text[-3000:]
    s = only_session(root)
    a = s.root["attrs"]
    assert a["python_version"] == "3.12.1" and a["python_frames"] == "exact", a
    calls = sorted(model_calls(root), key=lambda f: f["start_ns"])[-10:]    # the measured
    modes = [f["attrs"]["mode"] for f in calls]
    assert modes == ["train"] * 3 + ["eval"] * 2 + ["train"] * 3 + ["eval"] * 2, modes
    sources = [f["attrs"]["mode_source"] for f in calls]
    assert sources == ["module.training"] * 10, sources
