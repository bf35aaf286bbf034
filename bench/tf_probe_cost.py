# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The cost of each TensorFlow anchor's hits, from the calls that pass them (for
bench/tf_step_overhead.sh): a call of a trivial tf.function (TFE_Py_ExecuteCancelable, entry
and exit) and an eager next() on a tf.data iterator (IteratorResource::GetNext, entry and
exit), each timed over REPS batches of N calls; the fastest batch is kept (other load on the
machine only adds time). Prints `CALL_US <us per call>` and `NEXT_US <us per next>`.

  python tf_probe_cost.py [--n 2000] [--reps 15]"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def fastest(fn, n, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn(n)
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--reps", type=int, default=15)
    a = p.parse_args()
    x = tf.constant(1.0)

    @tf.function
    def trivial(v):
        return v + 1.0

    def calls(n):
        for _ in range(n):
            trivial(x)

    ds = tf.data.Dataset.range(10 ** 9)

    def nexts(n, it=iter(ds)):
        for _ in range(n):
            next(it)

    calls(10)
    nexts(10)
    print(f"CALL_US {fastest(calls, a.n, a.reps):.3f}", flush=True)
    print(f"NEXT_US {fastest(nexts, a.n, a.reps):.3f}", flush=True)


if __name__ == "__main__":
    main()
