# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""--max-spool-mb on real PyTorch processes: the spool directory stays under the cap while
the loop runs, the oldest batches go first (an earlier run's before this run's), each
session's newest batch stays and holds every open span, and `trace` and `health` read what is
left, live and after the end. A spy thread lists the spool every few milliseconds meanwhile."""
import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import (ROOT, SAN, BATCH_NAME, assert_no_sanitizer_report, read_spool,
                      san_env, unavailable)

TORCH_LIB = Path("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so")
# Large batches make steps of a few ms: ~20-50 KB of spool per 100 ms flush on the test VMs.
SPIN = ["/usr/bin/python3", ROOT / "tests/workloads/train.py", "--spin-seconds", "60",
        "--batches", "2", "--batch-size", "1024"]
CAP_MB = 0.5
CAP = int(CAP_MB * 1048576)
FLUSH = "0.05"
WAIT_S = 40          # for enough batches to have been removed


class Spy:
    """Lists the spool directory until stopped: the most bytes seen at once (temp files
    included), the largest batch, and every listing whose batches of a session were not one
    run of consecutive seqs (a batch removed out of order)."""

    def __init__(self, spool):
        self.spool = spool
        self.max_total = 0
        self.max_batch = 0
        self.listings = 0
        self.holes = []
        self.snapshots = []          # {sid: [seq, ...]} per listing
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self._list()
            time.sleep(0.005)

    def _list(self):
        try:
            names = os.listdir(self.spool)
        except FileNotFoundError:
            return
        total, seqs = 0, {}
        for name in names:
            try:
                size = (self.spool / name).stat().st_size
            except FileNotFoundError:
                continue            # removed (or renamed from .tmp) since the listing
            total += size
            m = BATCH_NAME.match(name)
            if m:
                self.max_batch = max(self.max_batch, size)
                seqs.setdefault(m["sid"], []).append(int(m["seq"]))
        self.max_total = max(self.max_total, total)
        self.listings += 1
        for sid, s in seqs.items():
            s.sort()
            if s != list(range(s[0], s[0] + len(s))):
                self.holes.append((sid, s))
        self.snapshots.append(seqs)

    def first_seq(self, sid=None):
        """The oldest seq of sid (default: the only session) in the last listing that had
        it: how many batches it lost. 0 before any."""
        for snap in reversed(self.snapshots):
            if sid is None and len(snap) == 1:
                return next(iter(snap.values()))[0]
            if sid in snap:
                return snap[sid][0]
        return 0

    def stop(self):
        self._stop.set()
        self._thread.join(10)
        self._list()


@pytest.fixture
def torch_bpf(bpf):
    if not TORCH_LIB.exists():
        unavailable("python3-torch is not installed")


def start_spinning(h):
    target = h.start(SPIN)
    target.out.wait_for(r"^ready$", timeout=60)
    return target


def wait_until(cond, what, timeout=WAIT_S, state=lambda: ""):
    """state(): what the failure says of where things stood"""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout}s{state()}"
        time.sleep(0.05)


def by_seq(files):
    return sorted(files, key=lambda f: int(BATCH_NAME.match(f.name)["seq"]))


def kill_when(obs, spool, n, cond, what):
    """Kills the observer at a moment cond() holds of its spool: each check is made with the
    observer stopped (SIGSTOP: the test's own observer, never a job), so no batch comes
    between the check and the kill. Not before it wrote n batches: a stop while it loads its
    BPF programs interrupts the verifier (EAGAIN), which made it exit (seen on 2 workers)."""
    def holds_stopped():
        assert obs.alive(), f"the observer exited {obs.popen.poll()}: {obs.err.text[-3000:]}"
        if len(list(spool.glob("*.json"))) < n:
            return False
        obs.stop()
        if cond():
            return True
        obs.signal(signal.SIGCONT)
        return False

    def state():
        files = by_seq(spool.glob("*.json"))
        newest = spans_of(files[-1:]) if files else {}
        return (f"\n{len(files)} batches, the newest's spans: "
                f"{sorted({sp['name'] for sp in newest.values()})}\n{obs.err.text[-3000:]}")
    wait_until(holds_stopped, what, state=state)
    obs.popen.kill()
    obs.finish()


def read_back(h, *args):
    rc, out, err = h.run_to_end([SAN, *args], env=san_env())
    assert_no_sanitizer_report(err)
    return rc, out, err


def spans_of(files):
    """Merged spans of a session's batch files (later seq wins)."""
    spans = {}
    for f in by_seq(files):
        for s in json.loads(f.read_text())["spans"]:
            spans[s["span_id"]] = s
    return spans


def flatten(nodes, parent=None):
    for n in nodes:
        yield n, parent
        yield from flatten(n["children"], n)


def check_open_chain(session_json):
    """The tree read back has one top span, the open root, and every open span's parent is
    open: the newest state of the whole open path was read."""
    tops = session_json["spans"]
    assert [t["name"] for t in tops] == ["cirron.session"], \
        f"orphans or no root: {[(t['name'], t['parent_id']) for t in tops]}"
    assert tops[0]["status"] == "open"
    for n, parent in flatten(tops):
        if n["status"] == "open" and parent is not None:
            assert parent["status"] == "open", f"open {n['name']} under closed {parent['name']}"


@pytest.mark.timeout(150)
def test_cap_holds_and_keeps_open_spans(h, torch_bpf):
    target = start_spinning(h)
    root = h.spool_root(rotated=True)
    spool = root / "spool"
    spy = Spy(spool)
    obs = h.observer("attach", "-p", target.pid, "--flush-interval", FLUSH,
                     "--max-spool-mb", str(CAP_MB), path=root, san=True)
    try:
        # Live: readable while batches are being removed under the reader's feet.
        wait_until(lambda: spy.first_seq() >= 3, "removal of 3 batches")
        for _ in range(3):
            rc, out, err = read_back(h, "trace", "--format", "json", root)
            assert rc == 0 and err == "", err
            sessions = json.loads(out)
            assert len(sessions) == 1
            check_open_chain(sessions[0])
        wait_until(lambda: spy.first_seq() >= 10, "removal of 10 batches")
    finally:
        obs.signal(signal.SIGINT)       # detach: what is open stays open
        assert obs.finish(60) == 0, obs.err.text
        spy.stop()
    assert_no_sanitizer_report(obs.err.text)
    target.popen.kill()

    # Under the cap, give or take the batch being written; never out of order.
    assert spy.listings > 50, spy.listings
    assert spy.max_batch * 2 <= CAP, \
        f"batches of {spy.max_batch} bytes: the cap of {CAP} is too small for this test"
    assert spy.max_total <= CAP + spy.max_batch, (spy.max_total, CAP, spy.max_batch)
    assert not spy.holes, f"a batch was removed before an older one: {spy.holes[:3]}"
    files = sorted(spool.iterdir())
    assert sum(f.stat().st_size for f in files) <= CAP

    sessions = read_spool(root, rotated=True)
    assert len(sessions) == 1
    s = next(iter(sessions.values()))
    first, last = s.batches[0]["seq"], s.batches[-1]["seq"]
    assert first >= 10 and s.batches[-1]["final"]
    # Every batch carries the open spans; the final one has the detach's newest state.
    final_open = {sp["span_id"] for sp in s.batches[-1]["spans"] if sp["status"] == "open"}
    for b in s.batches:
        assert s.root["span_id"] in {sp["span_id"] for sp in b["spans"]}, b["seq"]
    assert s.root["status"] == "open" and s.root["attrs"]["end_cause"] == "detach"
    assert final_open == {i for i, sp in s.spans.items() if sp["status"] == "open"}

    health = s.health
    assert health["spool_max_bytes"] == CAP
    removed = health["spool_removed_files"]
    assert 10 <= removed <= first, (removed, first)
    assert health["spool_removed_bytes"] > 0
    written = health["spool_bytes"] + (spool / f"{s.id}.{last:08d}.json").stat().st_size
    on_disk = sum(f.stat().st_size for f in files)
    assert written - health["spool_removed_bytes"] >= on_disk

    rc, out, err = read_back(h, "trace", "--format", "json", root)
    assert rc == 0 and err == "", err
    tree = json.loads(out)[0]
    check_open_chain(tree)
    assert sum(1 for _ in flatten(tree["spans"])) == len(s.spans)
    rc, out, err = read_back(h, "trace", root)
    assert rc == 0 and err == ""
    assert re.search(r"^open path:\n  cirron\.session \(open\) since ", out, re.M), out
    rc, out, err = read_back(h, "health", root)
    assert rc == 0 and err == ""
    assert re.search(rf"^  spool cap {CAP} bytes \(--max-spool-mb\): {removed} files, "
                     rf"{health['spool_removed_bytes']} bytes removed, oldest first$",
                     out, re.M), out


@pytest.mark.timeout(150)
def test_cap_removes_earlier_runs_first(h, torch_bpf):
    root = h.spool_root(expect_final=False, rotated=True)
    spool = root / "spool"

    # An earlier run whose observer was killed: no final batch. Every batch holds every span
    # still open (all_open), so its newest alone holds its open path.
    first = start_spinning(h)
    obs = h.observer("attach", "-p", first.pid, "--flush-interval", FLUSH, path=root)
    kill_when(obs, spool, 6, lambda: True, "6 batches")
    first.popen.kill()
    earlier = by_seq(spool.glob("*.json"))
    old_sid = BATCH_NAME.match(earlier[0].name)["sid"]
    newest_earlier = earlier[-1]

    second = start_spinning(h)
    spy = Spy(spool)
    obs = h.observer("attach", "-p", second.pid, "--flush-interval", FLUSH,
                     "--max-spool-mb", str(CAP_MB), path=root, san=True)
    new_sid = None

    def new_lost_three():
        nonlocal new_sid
        sids = set(spy.snapshots[-1]) - {old_sid} if spy.snapshots else set()
        if sids:
            new_sid = sids.pop()
            return spy.first_seq(new_sid) >= 3
        return False
    try:
        wait_until(new_lost_three, "removal of 3 of the new session's batches")
    finally:
        obs.signal(signal.SIGINT)
        assert obs.finish(60) == 0, obs.err.text
        spy.stop()
    assert_no_sanitizer_report(obs.err.text)
    second.popen.kill()

    # The earlier run's batches went first, all but its newest, which stays.
    assert not spy.holes, spy.holes[:3]
    for snap in spy.snapshots:
        if new_sid in snap and snap[new_sid][0] > 0:
            assert snap.get(old_sid) == [int(BATCH_NAME.match(newest_earlier.name)["seq"])], \
                f"the new session lost batches while the earlier run had {snap.get(old_sid)}"
    assert sorted(f.name for f in spool.glob(f"{old_sid}.*.json")) == [newest_earlier.name]

    sessions = read_spool(root, expect_final=False, rotated=True)
    assert set(sessions) == {old_sid, new_sid}
    health = sessions[new_sid].health
    assert health["spool_removed_files"] >= len(earlier) - 1 + 3, health

    # Read back: the earlier session is what its newest batch holds, its open path whole
    # (a span whose parent was removed with an older batch would be shown at the top, not
    # dropped: tests/unit/test_trace.c orphan_shown_at_top).
    spans = spans_of([newest_earlier])
    assert json.loads(newest_earlier.read_text())["all_open"] is True
    rc, out, err = read_back(h, "trace", "--format", "json", root)
    assert rc == 0 and err == "", err
    by_sid = {x["session_id"]: x for x in json.loads(out)}
    old = by_sid[old_sid]
    assert sum(1 for _ in flatten(old["spans"])) == len(spans)
    check_open_chain(old)
    check_open_chain(by_sid[new_sid])

    rc, out, err = read_back(h, "trace", root)
    assert rc == 0 and err == "", err
    assert f"session {old_sid}: " in out and "no final batch" in out
    old_text = out[out.index(f"session {old_sid}: "):]
    assert re.search(r"^open path:\n  cirron\.session \(open\) since ", old_text, re.M), old_text
    rc, out, err = read_back(h, "health", root)
    assert rc == 0 and err == "", err
    assert len(re.findall(r"^  spool cap ", out, re.M)) == 1, out
