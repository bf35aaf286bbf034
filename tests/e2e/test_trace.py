# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""`trace` and `health`: reading back real spools (CUDA target, PyTorch loop, a SIGKILLed
target, corrupt files). They write nothing and report skipped files with exit status 7."""
import csv
import io
import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from conftest import (CUDA_CALLS, SAN, assert_no_sanitizer_report, only_session, read_spool,
                      san_env)
from test_signals import target_pid_from_log

TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
TRAIN = ["/usr/bin/python3", "tests/workloads/train.py", "--epochs", "2", "--batches", "3",
         "--val-batches", "2"]
EXIT_CORRUPT_INPUT, EXIT_NO_SPOOL, EXIT_USAGE = 7, 8, 64


def read_back(h, *args):
    rc, out, err = h.run_to_end([SAN, *args], env=san_env())
    assert_no_sanitizer_report(err)
    return rc, out, err


def spool_listing(root):
    return sorted((p.name, p.stat().st_mtime_ns) for p in (root / "spool").iterdir())


@pytest.fixture
def torch_spool(h, bpf):
    if not TORCH_LIB.exists():
        pytest.skip("python3-torch is not installed")
    root = h.spool_root()
    p = h.observer("run", "--flush-interval", "0.2", "--", *TRAIN, path=root)
    assert p.finish(180) == 0, p.err.text
    return root


@pytest.fixture
def cuda_spool(h, bpf):
    root = h.spool_root()
    p = h.observer("run", "--cuda-calls", "always", "--", CUDA_CALLS, path=root)
    assert p.finish() == 0, p.err.text
    return root


@pytest.mark.timeout(240)
def test_torch_text_json_csv_filters(h, torch_spool):
    root = torch_spool
    before = spool_listing(root)
    s = only_session(root)

    rc, out, err = read_back(h, "trace", root)
    assert rc == 0 and err == "", err
    assert "open path:" not in out
    lines = out.splitlines()
    assert lines[0].startswith(f"session {s.id}: host ") and lines[0].endswith(", final")
    assert lines[1].startswith("cirron.session - ")
    assert any(re.match(r"^  epoch\[0\] - \S+", ln) for ln in lines), out
    assert any(re.match(r"^  epoch\[1\] - \S+", ln) for ln in lines), out
    i = next(i for i, ln in enumerate(lines) if ln.startswith("    step[5] - "))
    assert lines[i + 1].startswith("      data_load - "), out      # children indented below
    assert lines.index(next(ln for ln in lines if ln.startswith("  epoch[1]"))) < i

    rc, out, err = read_back(h, "trace", "--format", "json", root)
    assert rc == 0 and err == ""
    sessions = json.loads(out)
    assert [x["session_id"] for x in sessions] == [s.id]

    def count(nodes):
        return sum(1 + count(n["children"]) for n in nodes)
    assert count(sessions[0]["spans"]) == len(s.spans)
    assert sessions[0]["spans"][0]["name"] == "cirron.session"

    rc, out, err = read_back(h, "trace", "--format", "csv", "--path", root)
    assert rc == 0 and err == ""
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["session_id", "span_id", "parent_id", "name", "index", "rank",
                       "start_ns", "end_ns", "duration_ns", "status", "attrs"]
    assert len(rows) - 1 == len(s.spans)
    by_id = {int(r[1]): r for r in rows[1:]}
    for sp in s.spans.values():
        r = by_id[sp["span_id"]]
        assert r[3] == sp["name"] and r[9] == sp["status"]
        assert r[8] == ("" if sp["end_ns"] is None else str(sp["duration_ns"]))

    rc, out, err = read_back(h, "trace", "--name", "step", root)
    assert rc == 0 and err == ""
    steps = out.splitlines()
    assert len(steps) == 6 and all(ln.startswith("[cirron] step[") for ln in steps), out
    assert [re.match(r"\[cirron\] step\[(\d+)\]", ln).group(1) for ln in steps] == \
        [str(i) for i in range(6)]

    rc, out, _ = read_back(h, "trace", "--last", "3", root)
    assert rc == 0 and len(out.splitlines()) == 3
    assert out.splitlines()[-1].startswith("[cirron] cirron.session - ")

    rc, out, err = read_back(h, "trace", "--rank", "1", root)
    assert rc == 0 and out == ""
    rc, out, _ = read_back(h, "trace", "--session", s.id, "--name", "epoch", root)
    assert rc == 0 and len(out.splitlines()) == 2

    rc, out, err = read_back(h, "health", root)
    assert rc == 0 and err == ""
    assert re.search(r"^  uprobe_hits \d+ \(6 steps, [0-9.]+ per step\)$", out, re.M), out
    assert spool_listing(root) == before, "read-back wrote to the spool"


def test_health_names_demangled_in_aligned_columns(h, torch_spool):
    """Host torch 1.13's probes are C++ symbols: health shows them demangled and short, in
    columns that line up; --format json has the whole demangled name beside each symbol."""
    rc, out, err = read_back(h, "health", torch_spool)
    assert rc == 0 and err == ""
    assert "_ZN" not in out, out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("  probe "))
    table = lines[head:]
    assert len(table) > 5, out
    assert "  torch::autograd::Engine::execute  " in out, out
    assert "  c10::GradMode::set_enabled  " in out, out
    # every column starts where its header starts; numbers end where their header ends
    starts = {n: table[0].index(n) for n in ("group", "action", "state")}
    ends = {n: table[0].index(n) + len(n) for n in ("hits", "return_hits")}
    for row in table[1:]:
        assert len(row.split()) >= 6, row
        for n, at in starts.items():
            assert row[at - 2:at] == "  " and row[at] != " ", (n, row, table[0])
        for n, at in ends.items():
            assert row[at - 1].isdigit() and row[at:at + 2] == "  ", (n, row, table[0])
    assert all(len(r.split("  ")[1 if r.startswith("  ") else 0]) <= 40 for r in table[1:])
    m = re.search(r"^  uprobe_hits \d+ \(6 steps, ([0-9.]+) per step\)$", out, re.M)
    assert m and re.fullmatch(r"\d+(\.\d)?", m.group(1)), out

    rc, out, err = read_back(h, "health", "--format", "json", torch_spool)
    assert rc == 0 and err == ""
    sessions = json.loads(out)
    assert len(sessions) == 1 and sessions[0]["session_id"] == only_session(torch_spool).id
    probes = sessions[0]["health"]["probes"]
    names = {p["symbol"]: p["name"] for p in probes}
    execute = next(n for s, n in names.items() if s.startswith("_ZN5torch8autograd6Engine7execute"))
    assert execute.startswith("torch::autograd::Engine::execute(std::vector<"), execute
    assert all("_Z" not in n for n in names.values()), names
    rc, _, err = read_back(h, "health", "--format", "csv", torch_spool)
    assert rc == EXIT_USAGE and "text or json" in err


def test_cuda_trace_and_health(h, cuda_spool):
    s = only_session(cuda_spool)
    rc, out, err = read_back(h, "trace", cuda_spool)
    assert rc == 0 and err == ""
    assert re.search(r"^cirron\.session - \S+ \{pid=\d+, .*cuda\.launches=57", out, re.M), out

    rc, out, err = read_back(h, "health", cuda_spool)
    assert rc == 0 and err == ""
    assert f"session {s.id}: " in out
    assert re.search(r"^  probes \d+ attached, 0 failed$", out, re.M), out
    assert re.search(r"^  ringbuf_drops 0, ", out, re.M), out
    for p in s.health["probes"]:
        assert re.search(rf"^  {re.escape(p['symbol'])} +{p['group']} +{p['action']} +"
                         rf"{p['hits']} +{p['return_hits']}  attached$", out, re.M), p
    assert re.search(r"^  cudaLaunchKernel +cudart +cuda_launch +57 ", out, re.M), out


def test_sigkilled_target_open_path(h, bpf):
    root = h.spool_root()
    obs = h.observer("run", "--cuda-calls", "always", "-v", "--", CUDA_CALLS, "--hold", path=root)
    pid = target_pid_from_log(obs)
    obs.out.wait_for(r"^done device_count=")
    os.kill(pid, signal.SIGKILL)
    assert obs.finish() == 128 + signal.SIGKILL, obs.err.text

    rc, out, err = read_back(h, "trace", root)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[1] == "open path:", out
    assert re.match(r"^  cirron\.session \(incomplete\) since \d{4}-\d\d-\d\d "
                    r"\d\d:\d\d:\d\d\.\d{3} UTC \(\S+\)$", lines[2]), out
    assert re.match(r"^cirron\.session - \S+ \(incomplete\) \{", lines[3]), out
    assert "exit_signal_name=KILL" in lines[3]


def test_corrupt_files_skipped(h, cuda_spool, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(cuda_spool, copy)
    spool = copy / "spool"
    sid = next(iter(read_spool(copy)))
    good = next(spool.iterdir()).read_text()
    bad = {
        f"{sid}.00000007.json": "",                                   # empty
        f"{sid}.00000008.json": good[: len(good) // 2],               # truncated
        f"{sid}.00000009.json": "[1, 2]\n",                           # not an object
        f"{sid}.00000010.json": good.replace("cirron-spool/1", "cirron-spool/9"),
        "notes.txt": "hello\n",                                       # foreign name
    }
    for name, text in bad.items():
        (spool / name).write_text(text)
    (spool / f".{sid}.00000011.tmp").write_text("{")                # in progress: silent

    rc, out, err = read_back(h, "trace", copy)
    assert rc == EXIT_CORRUPT_INPUT, err
    assert "cirron.session - " in out                                # the rest still shown
    reports = err.splitlines()
    assert len(reports) == len(bad), err
    for name in bad:
        assert any(re.match(rf"^cirron-probe: skipping \S*/{re.escape(name)}: \S", ln)
                   for ln in reports), (name, err)
    assert ".tmp" not in err
    rc, out, err = read_back(h, "trace", "--format", "json", copy)
    assert rc == EXIT_CORRUPT_INPUT and len(json.loads(out)) == 1
    rc, out, err = read_back(h, "health", copy)
    assert rc == EXIT_CORRUPT_INPUT and "cudaLaunchKernel" in out


def test_missing_and_empty(h, built, tmp_path):
    rc, out, err = read_back(h, "trace", tmp_path / "nope")
    assert rc == EXIT_NO_SPOOL and out == ""
    assert err == f"cirron-probe: no spool to read at {tmp_path}/nope/spool: " \
        "No such file or directory\n"
    rc, out, err = read_back(h, "health", tmp_path / "nope")
    assert rc == EXIT_NO_SPOOL and len(err.splitlines()) == 1
    (tmp_path / "empty" / "spool").mkdir(parents=True)
    rc, out, err = read_back(h, "trace", tmp_path / "empty")
    assert rc == 0 and out == "" and err == f"cirron-probe: no sessions in {tmp_path}/empty/spool\n"
    rc, out, err = read_back(h, "trace", "--format", "json", tmp_path / "empty")
    assert rc == 0 and out == "[]\n"


@pytest.mark.parametrize("args", [["--format", "xml"], ["--last", "0"], ["--last", "x"],
                                  ["--rank", "-1"], ["a", "b"], ["--bogus"],
                                  ["--cuda-detail"]])
def test_bad_flags(h, built, args):
    rc, out, err = read_back(h, "trace", *args)
    assert rc == EXIT_USAGE and out == ""
    assert err.startswith("cirron-probe trace: "), err
    if args[0] not in ("--bogus", "--cuda-detail"):    # getopt's message has a second line
        assert len(err.splitlines()) == 1, err


def test_help_lists_read_back(h, built):
    rc, out, err = read_back(h, "--help")
    assert rc == 0
    assert "trace [DIR]" in out and "health [DIR]" in out
    assert re.search(r"^\s+7\s+.*corrupt", out, re.M) and re.search(r"^\s+8\s+.*no spool", out,
                                                                     re.M)
    rc, out, err = read_back(h, "trace", "--help")
    assert rc == 0 and out.startswith("Usage: cirron-probe trace ")
    for opt in ("--format", "--name", "--last", "--session", "--rank", "--all"):
        assert opt in out, opt


def test_fifo_and_directory_in_spool(h, cuda_spool, tmp_path):
    """Spool entries that are not regular files are reported, never opened for reading in a
    way that blocks (a FIFO would wait for a writer forever)."""
    copy = tmp_path / "copy"
    shutil.copytree(cuda_spool, copy)
    spool = copy / "spool"
    sid = next(iter(read_spool(copy)))
    os.mkfifo(spool / f"{sid}.00000050.json")
    (spool / f"{sid}.00000051.json").mkdir()
    rc, out, err = read_back(h, "trace", copy)
    assert rc == EXIT_CORRUPT_INPUT and "cirron.session - " in out
    assert sorted(re.findall(r"skipping \S*/(\S+): not a regular file", err)) == [
        f"{sid}.00000050.json", f"{sid}.00000051.json"], err
