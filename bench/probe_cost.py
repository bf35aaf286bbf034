#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""One probed torch entry point called in a tight loop, for the per-probe cost table
(bench/probe_cost.sh). Prints "ready", then after N calls "ns_per_call=X" (wall clock) and
"cpu_ns_per_call=Y" (the process's CPU time, user + system: a uprobe's trap and BPF program
run on the calling thread and count here; a loader competing for the CPU does not).

    probe_cost.py KIND N
      grad      torch._C._set_grad_enabled(b)         c10::GradMode::set_enabled
      record    _record_function_enter + _exit         the record_function scope probes
      backward  backward() of a one-element graph      torch::autograd::Engine::execute
      none      the loop alone (Python's own cost)
"""
import sys
import time

import torch


def make(kind):
    if kind == "grad":
        f = torch._C._set_grad_enabled

        def call():
            f(True)
    elif kind == "record":
        enter = torch.ops.profiler._record_function_enter
        leave = torch.ops.profiler._record_function_exit

        def call():
            leave(enter("cirron.bench", None))
    elif kind == "backward":
        x = torch.ones(1, requires_grad=True)

        def call():
            (x * 2).backward()
    elif kind == "none":
        def call():
            pass
    else:
        sys.exit(f"probe_cost.py: unknown kind {kind!r}")
    return call


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    call, n = make(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(1)
    for _ in range(1000):   # warm: first-call paths, and the kernel's first hit of a probe
        call()
    print("ready", flush=True)
    t0, c0 = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(n):
        call()
    dt, dc = time.perf_counter_ns() - t0, time.process_time_ns() - c0
    print(f"ns_per_call={dt / n:.1f}", flush=True)
    print(f"cpu_ns_per_call={dc / n:.1f}", flush=True)


if __name__ == "__main__":
    main()
