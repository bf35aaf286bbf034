# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""End-to-end fixtures: real binaries, real BPF, real processes.

Every spool root a test asks for is validated when the test ends: each batch against
schemas/spool-batch.schema.json (Draft 2020-12), file names <session_id>.<8-digit seq>.json,
seq contiguous from 0, exactly one final batch and it is the last. A root asked for with
rotated=True (--max-spool-mb) may have lost its oldest batches: seq is contiguous from where
it starts, and a session that lost batches may hold spans whose parent went with them. Every process a test
starts is killed (by its own pid) if it is still alive when the test ends.
"""
import ctypes
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "cirron-probe"
SAN = ROOT / ".output" / "cirron-probe-san"
CUDA_CALLS = ROOT / ".output" / "tests" / "cuda_calls"
SPIN = ROOT / ".output" / "tests" / "spin"
LIBCUDART = Path("/usr/local/cuda/lib64/libcudart.so.13")
SCHEMA_PATH = ROOT / "schemas" / "spool-batch.schema.json"
LSAN_SUPP = Path(__file__).resolve().parent / "lsan.supp"

IN_CI = os.environ.get("CI") == "true"
TEST_TIMEOUT_S = 60          # hard limit per test (SIGALRM), on top of every subprocess timeout
PROC_TIMEOUT_S = 20          # default wait for a process or a line
# Slower machines (the kernel matrix's emulated guests, tests/kernels) stretch every wait and
# limit by this factor; what a test waits for stays the same.
TIME_SCALE = float(os.environ.get("CIRRON_TEST_TIME_SCALE", "1"))

# What the target's calls add up to (tests/targets/cuda_calls.c, its N_* constants).
CALLS = {
    "launch_a": 50, "launch_b": 7, "memcpy_h2d": 3, "memcpy_d2h": 2, "memcpy_async": 4,
    "malloc": 5, "free": 5, "stream_sync": 6, "device_sync": 2, "event_sync": 1,
}
H2D_BYTES, D2H_BYTES, ASYNC_BYTES, MALLOC_BYTES = 4096, 1000, 512, 1 << 20
# Entry hits (and return hits, for the probes with "return": true) per cudart symbol.
EXPECTED_HITS = {
    "cudaGetDeviceCount": (1, 1),
    "cudaLaunchKernel": (CALLS["launch_a"] + CALLS["launch_b"], 0),
    "cudaMemcpy": (CALLS["memcpy_h2d"] + CALLS["memcpy_d2h"],
                   CALLS["memcpy_h2d"] + CALLS["memcpy_d2h"]),
    "cudaMemcpyAsync": (CALLS["memcpy_async"], 0),
    "cudaMalloc": (CALLS["malloc"], CALLS["malloc"]),   # the return: what it holds
    "cudaFree": (CALLS["free"], 0),
    "cudaStreamSynchronize": (CALLS["stream_sync"], CALLS["stream_sync"]),
    "cudaDeviceSynchronize": (CALLS["device_sync"], CALLS["device_sync"]),
    "cudaEventSynchronize": (CALLS["event_sync"], CALLS["event_sync"]),
}

# Any report of ASan, LSan (leaks, or its own failure) or UBSan; a Python traceback; a crash.
SANITIZER_MARKERS = ("Sanitizer", "runtime error:", "Traceback (most recent call last)",
                     "Segmentation fault", "core dumped")

BATCH_NAME = re.compile(r"^(?P<sid>.+)\.(?P<seq>[0-9]{8})\.json$")


# ---- skip or fail --------------------------------------------------------------------------

def unavailable(reason):
    """Skip on a developer machine; in CI (CI=true) a test that cannot run is a failure."""
    if IN_CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def bpf_problem():
    if os.geteuid() != 0:
        return "BPF tests need root (euid is %d)" % os.geteuid()
    if not Path("/sys/kernel/btf/vmlinux").exists():
        return "/sys/kernel/btf/vmlinux is missing: the BPF tracepoints cannot load"
    if not Path("/sys/bus/event_source/devices/uprobe/type").exists():
        return "the kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)"
    return None


@pytest.fixture(scope="session")
def built():
    """The binaries under test, built by `make test-e2e` (or here, when run directly)."""
    targets = ["cirron-probe", ".output/cirron-probe-san", ".output/tests/cuda_calls",
               ".output/tests/spin", ".output/tests/with_pid"]
    if not LIBCUDART.exists():
        unavailable(f"{LIBCUDART} is missing: tests/targets/cuda_calls cannot be built")
    r = subprocess.run(["make", "-s", "-C", str(ROOT)] + targets, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"make failed:\n{r.stdout}\n{r.stderr}"
    for p in (BIN, SAN, CUDA_CALLS, SPIN):
        assert p.is_file() and os.access(p, os.X_OK), f"{p} was not built"


@pytest.fixture
def bpf(built):
    """Tests that load BPF: root, kernel BTF and uprobes are needed."""
    problem = bpf_problem()
    if problem:
        unavailable(problem)


@pytest.fixture
def root_user(built):
    if os.geteuid() != 0:
        unavailable("this test switches to an unprivileged user, which needs root")


# ---- the real users' stack: a venv on pyenv's CPython with the official torch wheel ----------

VENV_SCRIPT = ROOT / "tests" / "scripts" / "make-venv.sh"
PYENV_PYTHON = Path(os.environ.get("CIRRON_PYENV_PYTHON",
                                   str(Path.home() / ".pyenv/versions/3.11.7/bin/python3.11")))
DEBIAN_TORCH = Path("/usr/lib/python3/dist-packages")


@pytest.fixture(scope="session")
def venv():
    """Builds once (cached outside the repo, keyed by its pinned requirements) and returns the
    venv: pyenv's CPython 3.11 + torch==2.13.0 (official CPU wheel), transformers, accelerate,
    lightning, keras (tests/scripts/make-venv.sh). CIRRON_TEST_VENV names a venv built
    elsewhere instead: the arm64 guest's /opt/torch-venv (Python 3.13, PyPI's aarch64 torch
    2.9.1 CPU wheel, no other framework; tests/kernels)."""
    if os.environ.get("CIRRON_TEST_VENV"):
        return Path(os.environ["CIRRON_TEST_VENV"])
    r = subprocess.run([str(VENV_SCRIPT)], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        unavailable(f"cannot build the venv: {r.stderr.strip()[-500:]}")
    return Path(r.stdout.strip().splitlines()[-1])


TF_VENV_SCRIPT = ROOT / "tests" / "scripts" / "make-tf-venv.sh"


@pytest.fixture(scope="session")
def tf_venv():
    """Builds once (cached outside the repo, keyed by its pinned requirements) and returns the
    TensorFlow venv: pyenv's CPython 3.11 + tensorflow-cpu, Keras 3 and tf-keras
    (tests/scripts/make-tf-venv.sh)."""
    r = subprocess.run([str(TF_VENV_SCRIPT)], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        unavailable(f"cannot build the TensorFlow venv: {r.stderr.strip()[-500:]}")
    return Path(r.stdout.strip().splitlines()[-1])


def venv_python_minor(venv):
    """The minor version of the venv's Python (its pyvenv.cfg): 11 for make-venv.sh's."""
    m = re.search(r"^version\s*=\s*3\.(\d+)", (venv / "pyvenv.cfg").read_text(), re.M)
    return int(m.group(1)) if m else 11


@pytest.fixture(scope="session")
def pyenv_python():
    """A non-Debian CPython 3.11 (pyenv's, unstripped) that imports Debian's torch 1.13 with
    PYTHONPATH (same minor version, same ABI)."""
    if not PYENV_PYTHON.exists():
        unavailable(f"{PYENV_PYTHON} is missing (pyenv's CPython 3.11)")
    if not (DEBIAN_TORCH / "torch" / "lib" / "libtorch_cpu.so").exists():
        unavailable("python3-torch is not installed")
    return PYENV_PYTHON


# ---- the trixie root: Debian trixie's python3 3.13 and python3-torch 2.6, entered with chroot --

TRIXIE_SCRIPT = ROOT / "tests" / "scripts" / "make-trixie-root.sh"
TRIXIE_ROOT = Path(os.environ.get("CIRRON_TRIXIE_ROOT", "/var/cache/cirron-probe/trixie-root"))
WORKLOADS = ROOT / "tests" / "workloads"


def install_file(src, dst):
    """Copies src to dst by rename: a job another test (another xdist worker) runs from dst
    meanwhile reads the whole old file or the whole new one, never a half-written one."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


@pytest.fixture(scope="session")
def trixie_root():
    """Builds the trixie root (once, cached outside the repo), installs every workload of
    tests/workloads in its /work and mounts /proc there. The mount stays until the run ends
    (pytest_unconfigure): the workers of a parallel run share it."""
    r = subprocess.run([str(TRIXIE_SCRIPT)], capture_output=True, text=True, timeout=1800,
                       env=dict(os.environ, CIRRON_TRIXIE_ROOT=str(TRIXIE_ROOT)))
    if r.returncode != 0:
        unavailable(f"cannot build the trixie root: {r.stderr.strip()[-500:]}")
    work = TRIXIE_ROOT / "work"
    work.mkdir(exist_ok=True)
    for f in WORKLOADS.glob("*.py"):
        install_file(f, work / f.name)
    with open(TRIXIE_ROOT.parent / ".trixie-proc.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # one mount, whoever of the workers comes first
        if not mounted(TRIXIE_ROOT / "proc"):
            subprocess.run(["mount", "--bind", "/proc", str(TRIXIE_ROOT / "proc")], check=True)
    return TRIXIE_ROOT


def mounted(path):
    """Whether path is a mount point (by /proc/self/mountinfo)."""
    want = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4].replace("\\040", " ") == want for line in f)


def is_controller(config):
    """The process that runs the whole session: pytest itself, or xdist's controller (whose
    workers have config.workerinput)."""
    return not hasattr(config, "workerinput")


# ---- per-test hard timeout -----------------------------------------------------------------

PROC_MOUNTED_BEFORE = pytest.StashKey[bool]()


def pytest_unconfigure(config):
    if is_controller(config) and not config.stash.get(PROC_MOUNTED_BEFORE, True):
        while mounted(TRIXIE_ROOT / "proc"):
            if subprocess.run(["umount", "-l", str(TRIXIE_ROOT / "proc")]).returncode != 0:
                break


class TestTimeout(Exception):
    pass


def pytest_configure(config):
    if is_controller(config):   # unmounted at the end if the run mounted it (trixie_root)
        config.stash[PROC_MOUNTED_BEFORE] = mounted(TRIXIE_ROOT / "proc")
    config.addinivalue_line("markers", "xdist_group(name): run on the worker its group runs on "
                            "(pytest-xdist; ONE_WORKER)")
    config.addinivalue_line("markers", "solo: run with no other test beside it (SOLO; make "
                            "test-e2e runs these after the rest)")
    config.addinivalue_line("markers", "timeout(seconds): hard time limit of one test "
                            f"(default {TEST_TIMEOUT_S})")


@pytest.fixture(autouse=True)
def _hard_timeout(request):
    marker = request.node.get_closest_marker("timeout")
    limit = int((int(marker.args[0]) if marker else TEST_TIMEOUT_S) * TIME_SCALE)

    def on_alarm(signum, frame):
        raise TestTimeout(f"test ran past {limit}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# ---- processes -----------------------------------------------------------------------------

class Stream:
    """Lines of a pipe, read by a thread, so a test can wait for a line with a timeout."""

    def __init__(self, pipe):
        self.lines = []
        self._cond = threading.Condition()
        self._eof = False
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe):
        for line in iter(pipe.readline, ""):
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()
        pipe.close()

    def wait_for(self, pattern, timeout=PROC_TIMEOUT_S):
        """Returns the re.Match of the first line matching pattern; fails on timeout/EOF."""
        rx = re.compile(pattern)
        timeout *= TIME_SCALE
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines:
                    m = rx.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    why = "end of output" if self._eof else f"{timeout}s"
                    raise AssertionError(f"no line matching {pattern!r} before {why}; "
                                         f"got:\n" + "\n".join(self.lines))
                self._cond.wait(left)

    def wait_count(self, pattern, n, timeout=PROC_TIMEOUT_S):
        """Waits until n lines match pattern; returns their re.Match objects."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [m for m in map(rx.search, self.lines) if m]
                if len(found) >= n:
                    return found
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    why = "end of output" if self._eof else f"{timeout}s"
                    raise AssertionError(f"{len(found)} of {n} lines matching {pattern!r} "
                                         f"before {why}; got:\n" + "\n".join(self.lines))
                self._cond.wait(left)

    def close(self, timeout=PROC_TIMEOUT_S):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "pipe still open (a process still holds it)"

    @property
    def text(self):
        with self._cond:
            return "\n".join(self.lines) + ("\n" if self.lines else "")


class Proc:
    def __init__(self, argv, **kw):
        self.argv = [str(a) for a in argv]
        self.popen = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, errors="replace", **kw)
        self.pid = self.popen.pid
        self.out = Stream(self.popen.stdout)
        self.err = Stream(self.popen.stderr)

    def wait(self, timeout=PROC_TIMEOUT_S):
        """Exit status (negative: killed by that signal); both pipes read to their end."""
        timeout *= TIME_SCALE
        try:
            rc = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.argv} still running after {timeout}s; stderr:\n"
                                 + self.err.text) from None
        return rc

    def finish(self, timeout=PROC_TIMEOUT_S):
        rc = self.wait(timeout)
        self.out.close(timeout)
        self.err.close(timeout)
        return rc

    def signal(self, sig):
        self.popen.send_signal(sig)

    def stop(self):
        """SIGSTOP (only ever the test's own observer, never a job), and back once stopped."""
        self.signal(signal.SIGSTOP)
        while proc_state(self.pid) not in ("T", "t", None):
            time.sleep(0.001)

    def alive(self):
        return self.popen.poll() is None


def proc_state(pid):
    """The state letter of /proc/PID/stat (R, S, T, Z, ...) or None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat[stat.rindex(")") + 2]


def free_ports(n):
    """n TCP ports free on 127.0.0.1 now, distinct (all bound at once before any is let go).
    Jobs that listen get one of their own: with the e2e suite on several workers, two jobs on
    a fixed port (torchrun's 29500) fail with EADDRINUSE."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    return free_ports(1)[0]


def process_tree(pid):
    """The pids of pid's descendants (children, theirs, ...), from /proc."""
    children = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def sig_ignored_mask(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.M).group(1), 16)


def assert_no_sanitizer_report(text, what="stderr"):
    for marker in SANITIZER_MARKERS:
        assert marker not in text, f"{marker!r} in {what}:\n{text}"


def san_env():
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:halt_on_error=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    lsan = "print_suppressions=0"
    if LSAN_SUPP.exists():
        lsan = f"suppressions={LSAN_SUPP}:" + lsan
    env["LSAN_OPTIONS"] = lsan
    return env


class Harness:
    """Per test: spool roots (validated at the end), processes (killed at the end)."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        # each test's own, cold; the kernel matrix's emulated guests share one (its tests are of
        # the kernel, and resolving libtorch's symbols there takes tens of seconds each time)
        self.cache_dir = Path(os.environ.get("CIRRON_TEST_SYMCACHE", tmp_path / "symcache"))
        self.roots = []          # (path, expect_final, rotated)
        self.procs = []
        self.orphans = []        # pids reparented to us (see the subreaper fixture)
        self._n = 0

    def spool_root(self, expect_final=True, rotated=False):
        self._n += 1
        root = self.tmp / f"trace{self._n}"
        self.roots.append((root, expect_final, rotated))
        return root

    def start(self, argv, **kw):
        p = Proc(argv, **kw)
        self.procs.append(p)
        return p

    def observer(self, cmd, *args, san=False, path=None, cache=True, **kw):
        """cirron-probe CMD with a spool root under tmp and the symbol cache under tmp."""
        argv = [SAN if san else BIN, cmd]
        if path is not None:
            argv += ["--path", path]
        if cache:
            argv += ["--cache-dir", self.cache_dir]
        argv += list(args)
        if san:
            kw.setdefault("env", san_env())
        return self.start(argv, **kw)

    def run_to_end(self, argv, timeout=PROC_TIMEOUT_S, **kw):
        p = self.start(argv, **kw)
        rc = p.finish(timeout)
        return rc, p.out.text, p.err.text

    def cleanup(self):
        for p in self.procs:
            if p.alive():
                try:
                    p.popen.kill()
                except ProcessLookupError:
                    pass
            try:
                p.popen.wait(10)
            except subprocess.TimeoutExpired:
                pass
        for pid in self.orphans:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            reap(pid, timeout=10, must=False)


def reap(pid, timeout=PROC_TIMEOUT_S, must=True):
    """waitpid() for a pid that is our child (or was reparented to us); its wait status."""
    deadline = time.monotonic() + timeout * TIME_SCALE
    while True:
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            if must:
                raise
            return None
        if got == pid:
            return status
        if time.monotonic() > deadline:
            if must:
                raise AssertionError(f"pid {pid} did not exit within {timeout}s "
                                     f"(state {proc_state(pid)})")
            return None
        time.sleep(0.01)


@pytest.fixture
def h(tmp_path):
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.cleanup()
    # Every spool root the test asked for: valid, whatever the test itself checked.
    for root, expect_final, rotated in harness.roots:
        if (root / "spool").is_dir():
            read_spool(root, expect_final=expect_final, allow_empty=True, rotated=rotated)


PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture
def subreaper():
    """Processes orphaned by the observer (the command `run` started, after the observer
    exits) are reparented to this test process, so it can wait for their exit status."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, os.strerror(ctypes.get_errno())
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


# ---- spool ---------------------------------------------------------------------------------

_validator = None


def validator():
    global _validator
    if _validator is None:
        schema = json.loads(SCHEMA_PATH.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema)
    return _validator


class Session:
    def __init__(self, sid, batches, allow_orphans=False):
        self.id = sid
        self.batches = batches               # in seq order
        self.spans = merge_spans(batches, allow_orphans)  # span_id -> span, later batches win

    @property
    def final(self):
        return self.batches[-1] if self.batches[-1]["final"] else None

    @property
    def health(self):
        return self.batches[-1]["health"]

    @property
    def root(self):
        roots = [s for s in self.spans.values() if s["parent_id"] is None]
        assert len(roots) == 1, f"session {self.id}: {len(roots)} root spans"
        assert roots[0]["name"] == "cirron.session"
        return roots[0]

    def probe(self, symbol):
        found = [p for p in self.health["probes"] if p["symbol"] == symbol]
        assert len(found) == 1, f"{symbol}: {len(found)} entries in health.probes"
        return found[0]


def merge_spans(batches, allow_orphans=False):
    """Spans by span_id over a session's batches: a later batch's copy replaces an earlier.
    allow_orphans: the session lost batches (--max-spool-mb), parents may be gone."""
    spans = {}
    for b in batches:
        seen = set()
        for s in b["spans"]:
            assert s["span_id"] not in seen, f"span {s['span_id']} twice in seq {b['seq']}"
            seen.add(s["span_id"])
            spans[s["span_id"]] = s
    for s in spans.values():
        if s["parent_id"] is not None and not allow_orphans:
            assert s["parent_id"] in spans, f"span {s['span_id']}: unknown parent"
    return spans


# Batch files already checked against the schema, by identity: a spool is read several times
# in a test (and again at its end), and a batch file is never rewritten (it is renamed into
# place, once). jsonschema takes ~1.5 s per MB of spans.
_SCHEMA_CHECKED = set()


def check_schema(f, batch):
    st = f.stat()
    key = (str(f), st.st_ino, st.st_mtime_ns, st.st_size)
    if key in _SCHEMA_CHECKED:
        return
    errors = sorted(validator().iter_errors(batch), key=lambda e: list(e.path))
    assert not errors, f"{f.name} does not match the schema:\n" + "\n".join(
        f"  {list(e.path)}: {e.message}" for e in errors[:10])
    _SCHEMA_CHECKED.add(key)


def read_spool(root, expect_final=True, allow_empty=False, rotated=False):
    """Validates every file under root/spool and returns {session_id: Session}. rotated: the
    oldest batches may have been removed (--max-spool-mb)."""
    spool = Path(root) / "spool"
    assert spool.is_dir(), f"{spool} does not exist"
    by_session = {}
    for f in sorted(spool.iterdir()):
        if not expect_final and f.name.startswith(".") and f.name.endswith(".tmp"):
            continue    # the observer was killed: a batch may have been half written
        m = BATCH_NAME.match(f.name)
        assert m and f.is_file(), f"unexpected file in the spool: {f.name}"
        text = f.read_text()
        assert text.endswith("\n") and text.count("\n") == 1, f"{f.name}: not one JSON line"
        batch = json.loads(text)
        check_schema(f, batch)
        assert batch["session_id"] == m["sid"], f"{f.name}: session_id {batch['session_id']}"
        assert batch["seq"] == int(m["seq"]), f"{f.name}: seq {batch['seq']}"
        by_session.setdefault(m["sid"], []).append(batch)
    if not allow_empty:
        assert by_session, f"no batch in {spool}"
    sessions = {}
    for sid, batches in by_session.items():
        batches.sort(key=lambda b: b["seq"])
        seqs = [b["seq"] for b in batches]
        first = seqs[0] if rotated else 0
        assert seqs == list(range(first, first + len(batches))), \
            f"{sid}: seq not contiguous from {first}: {seqs}"
        finals = [b["seq"] for b in batches if b["final"]]
        if expect_final:
            assert finals == [seqs[-1]], f"{sid}: final batches {finals}, last seq {seqs[-1]}"
        else:
            assert finals in ([], [seqs[-1]]), f"{sid}: final batches {finals} of {seqs}"
        ids = {(b["pid"], b["rank"], b["local_rank"], b["world_size"], b["host"])
               for b in batches}
        assert len(ids) == 1, f"{sid}: batches disagree on pid/rank/host: {ids}"
        pid, _, _, _, host = ids.pop()
        assert sid.startswith(f"{host}-{pid}-"), f"{sid}: not <host>-<pid>-<start>"
        for a, b in zip(batches, batches[1:]):
            assert a["written_ns"] <= b["written_ns"], f"{sid}: written_ns goes back"
        sessions[sid] = Session(sid, batches, allow_orphans=first > 0)
    return sessions


def only_session(root, **kw):
    sessions = read_spool(root, **kw)
    assert len(sessions) == 1, f"{len(sessions)} sessions: {sorted(sessions)}"
    return next(iter(sessions.values()))


# pyenv's CPython + Debian's torch 1.13 differs from the host stack only in the CPython build:
# it runs the tests where the build matters (the Python tier, versions, attach); the rest of
# the tree tests run on the other stacks. Deselected, not skipped (CI forbids skips).
PYENV_STACK_TESTS = ("test_plain_loop", "test_gradient_accumulation", "test_train_and_validation",
                     "test_nested_user_regions", "test_attach_five_seconds_into_training",
                     "test_python_frames_always_gives_exact_forwards",
                     "test_python_frames_read_module_training",
                     "test_python_frames_sampled_probes_some_steps",
                     "test_python_frames_off_attaches_no_cpython_probe")


# make test-e2e runs the tests on 2 workers (pytest-xdist, --dist loadgroup): most of a test's
# time is spent waiting (a job's steps, a process starting), about half a core busy on
# average. The modules whose tests share what one of them made (a traced run kept in RUNS, a
# .deb, a store's server and symbol cache) run on one worker each, and first, longest first:
# the longest of them is the floor of the run's time. Every other test goes where a worker
# is free. Tests that watch the whole machine pick their own jobs out by --match.
ONE_WORKER = ("test_idioms", "test_torch_tree", "test_s3", "test_frameworks", "test_package",
              "test_perfetto")


# Tests that keep both cores busy on purpose (parameter load=busy: CPU hogs) run on one worker,
# one after another.
# Tests whose verdict any test beside them could change run alone: with 2 ranks on 2 cores, a
# rank that shares its core with another test's job for most of its steps is a straggler,
# rightly named (CI, once). `make test-e2e` runs them after the rest, in a pytest of their own
# (marker solo).
SOLO = ("test_no_straggler_when_even",)


@pytest.hookimpl(tryfirst=True)     # before xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for it in items:
        params = getattr(getattr(it, "callspec", None), "params", {})
        if params.get("target") == "pyenv" and it.originalname not in PYENV_STACK_TESTS:
            drop.append(it)
        else:
            keep.append(it)
    if drop:
        config.hook.pytest_deselected(items=drop)
    for it in keep:
        params = getattr(getattr(it, "callspec", None), "params", {})
        if it.originalname in SOLO:
            it.add_marker(pytest.mark.solo)
        if params.get("load") == "busy":
            it.add_marker(pytest.mark.xdist_group("busy_cores"))
        elif it.module.__name__ in ONE_WORKER:
            it.add_marker(pytest.mark.xdist_group(it.module.__name__))
    # stable: the rest keep their order
    keep.sort(key=lambda it: ONE_WORKER.index(it.module.__name__)
              if it.module.__name__ in ONE_WORKER else len(ONE_WORKER))
    items[:] = keep
