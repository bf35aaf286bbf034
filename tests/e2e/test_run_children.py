# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""`run` follows what its command forks and execs: a launcher's workers are each their own
session; the launcher (a shell here, mapping no known library) is none."""
from conftest import CUDA_CALLS, read_spool
from cuda_expect import check_cuda_attrs


def test_launcher_workers_are_sessions(h, bpf):
    root = h.spool_root()
    script = f"{CUDA_CALLS} & {CUDA_CALLS} --exit 2; wait"
    p = h.observer("run", "--cuda-calls", "always", "--output", "spool", "--", "sh", "-c", script, path=root)
    assert p.finish(60) == 0, p.err.text      # sh's own status: `wait` for a clean worker
    sessions = read_spool(root)
    assert len(sessions) == 2, sorted(sessions)
    codes = sorted(s.root["attrs"]["exit_code"] for s in sessions.values())
    assert codes == [0, 2]
    for s in sessions.values():
        assert s.root["attrs"]["comm"] == "cuda_calls"
        check_cuda_attrs(s.root["attrs"], s.root["attrs"]["cuda_count"])  # all calls, from the start
    pids = {s.root["attrs"]["pid"] for s in sessions.values()}
    assert p.pid not in pids


def test_forked_children_without_exec_make_no_session(h, bpf):
    """A fork without exec (a DataLoader worker, a multiprocessing fork) shares its parent's
    image: it is not a rank of its own."""
    root = h.spool_root()
    code = ("import os, ctypes; lib = ctypes.CDLL('libcudart.so.13');"
            "n = ctypes.c_int(); lib.cudaGetDeviceCount(ctypes.byref(n));"
            "pid = os.fork();"
            "pid or (lib.cudaGetDeviceCount(ctypes.byref(n)), lib.cudaFree(None), os._exit(0));"
            "os.waitpid(pid, 0)")
    p = h.observer("run", "--cuda-calls", "always", "--output", "spool", "--", "/usr/bin/python3", "-c", code, path=root,
                   env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/bin:/bin"})
    assert p.finish(60) == 0, p.err.text
    sessions = read_spool(root)
    assert len(sessions) == 1
    s = next(iter(sessions.values()))
    assert s.probe("cudaGetDeviceCount")["hits"] == 1, "the child's calls are not the parent's"
    assert s.probe("cudaFree")["hits"] == 0
