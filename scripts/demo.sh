#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make demo`: trace the bundled examples with cirron-probe, live on stdout and into a spool.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_PATH:-./.cirron-demo}
rm -rf "$OUT"

echo "== 1. a CUDA runtime client (no GPU needed: the calls fail, their probes fire)"
# the default --cuda-calls sampled counts a process's first second call by call: this short
# client's totals are exact (cuda.launches=57, cuda.sampled says totals exact)
make --no-print-directory -s .output/tests/cuda_calls
./cirron-probe run --path "$OUT" --output spool,stdout -- .output/tests/cuda_calls

echo
echo "== 2. an unmodified PyTorch training script (examples/train_mlp.py), traced from its start"
./cirron-probe run --path "$OUT" --output spool,stdout -- \
	/usr/bin/python3 examples/train_mlp.py --epochs 2 --batches 4

echo
echo "== spool batches written under $OUT/spool:"
ls "$OUT/spool" | head -20

echo
echo "== read back from the spool: cirron-probe trace $OUT"
./cirron-probe trace "$OUT"
