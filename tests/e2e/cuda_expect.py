# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""What a session of tests/targets/cuda_calls must contain, checked against its call counts."""
import json
import re

from conftest import (ASYNC_BYTES, CALLS, D2H_BYTES, EXPECTED_HITS, H2D_BYTES, MALLOC_BYTES,
                      ROOT)

N_LAUNCH = CALLS["launch_a"] + CALLS["launch_b"]
N_MEMCPY = CALLS["memcpy_h2d"] + CALLS["memcpy_d2h"] + CALLS["memcpy_async"]
N_SYNC = CALLS["stream_sync"] + CALLS["device_sync"] + CALLS["event_sync"]
CUDART_PROBES = json.loads((ROOT / "probes" / "cudart.json").read_text())["probes"]

# The target's calls in program order, as --cuda-detail marks: (name, extra fields).
DETAIL_SEQUENCE = (
    [("cudaGetDeviceCount", {})]
    + [("cudaLaunchKernel", {"kernel": "cirron_test_kernel_a"})] * CALLS["launch_a"]
    + [("cudaLaunchKernel", {"kernel": "cirron_test_kernel_b"})] * CALLS["launch_b"]
    + [("cudaMemcpy", {"bytes": H2D_BYTES, "kind": 1})] * CALLS["memcpy_h2d"]
    + [("cudaMemcpy", {"bytes": D2H_BYTES, "kind": 2})] * CALLS["memcpy_d2h"]
    + [("cudaMemcpyAsync", {"bytes": ASYNC_BYTES, "kind": 3})] * CALLS["memcpy_async"]
    + [("cudaMalloc", {"bytes": MALLOC_BYTES})] * CALLS["malloc"]
    + [("cudaFree", {})] * CALLS["free"]
    + [("cudaStreamSynchronize", {})] * CALLS["stream_sync"]
    + [("cudaDeviceSynchronize", {})] * CALLS["device_sync"]
    + [("cudaEventSynchronize", {})] * CALLS["event_sync"]
)


def device_count_from(stdout):
    """The target prints 'done device_count=N' (N = -1 when cudaGetDeviceCount failed)."""
    m = re.search(r"^done device_count=(-?\d+)$", stdout, re.M)
    assert m, f"the target did not finish its calls; stdout:\n{stdout}"
    return int(m.group(1))


def check_cuda_attrs(a, device_count, extra_launches_a=False):
    """Exact totals of one pass of the target's calls. With extra_launches_a (--loop), kernel
    a may have been launched more times after the pass; everything else stays exact."""
    kernels = a["cuda.kernels"]
    assert set(kernels) == {"cirron_test_kernel_a", "cirron_test_kernel_b"}, kernels
    assert kernels["cirron_test_kernel_b"] == CALLS["launch_b"]
    if extra_launches_a:
        # Still launching while the counters were read: the total and the per-kernel map
        # are two reads of moving numbers.
        assert kernels["cirron_test_kernel_a"] >= CALLS["launch_a"]
        assert a["cuda.launches"] >= N_LAUNCH
    else:
        assert kernels["cirron_test_kernel_a"] == CALLS["launch_a"]
        assert a["cuda.launches"] == N_LAUNCH
    assert a["cuda.memcpy_calls"] == N_MEMCPY
    assert a["cuda.memcpy_bytes_h2d"] == CALLS["memcpy_h2d"] * H2D_BYTES
    assert a["cuda.memcpy_bytes_d2h"] == CALLS["memcpy_d2h"] * D2H_BYTES
    assert a["cuda.memcpy_bytes_d2d"] == CALLS["memcpy_async"] * ASYNC_BYTES
    assert a["cuda.memcpy_bytes_other"] == 0
    assert a["cuda.memcpy_ns"] > 0          # timed between entry and return of cudaMemcpy
    assert a["cuda.malloc_calls"] == CALLS["malloc"]
    assert a["cuda.malloc_bytes"] == CALLS["malloc"] * MALLOC_BYTES
    assert a["cuda.free_calls"] == CALLS["free"]
    assert a["cuda.sync_calls"] == N_SYNC
    assert a["cuda.sync_ns"] > 0
    if device_count < 0:    # no GPU: cudaGetDeviceCount failed, so no usable device
        assert a["device"] == "cpu" and a["cuda_count"] == 0, a
        assert isinstance(a["cuda_error"], int) and a["cuda_error"] > 0, a
    else:
        assert a["cuda_count"] == device_count, a
        assert a["device"] == ("cuda" if device_count > 0 else "cpu"), a


def check_health(session, extra_launches=False):
    h = session.health
    assert h["ringbuf_drops"] == 0
    assert h.get("kernel_map_full", 0) == 0
    assert h["probes_failed"] == 0, [p for p in h["probes"] if not p["attached"]]
    cudart = {p["symbol"]: p for p in h["probes"] if p["group"] == "cudart"}
    names = {p["symbol"] for p in CUDART_PROBES}
    required = {p["symbol"] for p in CUDART_PROBES if not p.get("optional")}
    assert required <= set(cudart) <= names, sorted(cudart)
    for sym, p in cudart.items():
        assert p["attached"] is True and p["error"] is None, p
        hits, ret_hits = EXPECTED_HITS.get(sym, (0, 0))
        if sym == "cudaLaunchKernel" and extra_launches:
            assert p["hits"] >= hits, p
        else:
            assert (p["hits"], p["return_hits"]) == (hits, ret_hits), p
    assert h["probes_attached"] == sum(p["attached"] for p in h["probes"])
    assert h["uprobe_hits"] == sum(p.get("hits", 0) + p.get("return_hits", 0)
                                   for p in h["probes"])
    assert h["spool_files"] == session.batches[-1]["seq"]   # one session: files before this


def check_root(session, *, pid, status, end_cause, attached_mid_run):
    root = session.root
    a = root["attrs"]
    assert root["index"] is None
    assert root["status"] == status, root
    assert a["end_cause"] == end_cause, a
    assert a["pid"] == pid == session.batches[0]["pid"]
    assert a["comm"] == "cuda_calls"
    assert a["attached_mid_run"] is attached_mid_run
    assert (a["rank"], a["local_rank"], a["world_size"]) == (0, 0, 1)
    assert "cudart" in a["libraries"] and "ldso" not in a["libraries"], a["libraries"]
    if status == "open":
        assert root["end_ns"] is None and "duration_ns" not in root
    else:
        assert root["end_ns"] >= root["start_ns"]
        assert root["duration_ns"] == root["end_ns"] - root["start_ns"]
    return a
