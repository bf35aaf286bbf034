#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Overhead on the bundled example (examples/train_mlp.py, what `make demo` traces): its
# epoch time (training + validation, as it prints it) with no observer and under
# `cirron-probe run` at each --python-frames level, rounds interleaved; uprobe hits per step
# from the spool's health. The example's steps are well under a millisecond, so this is the
# worst case for an observer whose cost is per step.
#   ROUNDS=3 EPOCHS=4 BATCHES=1500 LEVELS="off sampled always" bench/example_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
EPOCHS=${EPOCHS:-4}
BATCHES=${BATCHES:-1500}
LEVELS=${LEVELS:-"off sampled always"}
# as bench/step_overhead.sh: glibc would return tensor buffers to the kernel (bimodal steps);
# one intra-op thread, so the two cores are not fought over
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456
export OMP_NUM_THREADS=1
EX=(/usr/bin/python3 examples/train_mlp.py --epochs "$EPOCHS" --batches "$BATCHES")
TMPB=$(mktemp -d)
trap 'rm -rf "$TMPB"' EXIT

# median epoch time in seconds, epoch 0 (warm-up) left out
epoch_s() { awk '/^epoch [0-9]+:/ && $2 != "0:" {gsub(/[()s]/, "", $NF); print $NF}' | sort -g |
	awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

declare -A t hits
for r in $(seq "$ROUNDS"); do
	t[none]+="$("${EX[@]}" | epoch_s) "
	for level in $LEVELS; do
		rm -rf "$TMPB/spool"
		t[$level]+="$(./cirron-probe run --path "$TMPB/spool" --python-frames "$level" -- \
			"${EX[@]}" 2>/dev/null | epoch_s) "
		hits[$level]=$(./cirron-probe health "$TMPB/spool" 2>/dev/null |
			awk '/uprobe_hits/ {for (i = 1; i <= NF; i++) if ($i == "per") print $(i-1)}')
	done
done
base=$(echo ${t[none]} | tr ' ' '\n' | median)
RES=${BENCH_RES:-.output/bench/results}	# where bench/run.sh collects sections
mkdir -p "$RES"
{
echo "## Overhead on the bundled example"
echo
echo "examples/train_mlp.py --epochs $EPOCHS --batches $BATCHES (MLP 32-64-64-2, batch 64, $BATCHES"
echo "optimizer steps and a 4-batch validation per epoch); median epoch time of epochs 1 to"
echo "$((EPOCHS - 1)), median over $ROUNDS interleaved rounds."
echo
echo "| observer | epoch (s) | ratio to none | per step (us) | uprobe hits per step |"
echo "|---|---|---|---|---|"
echo "| none | $base | 1.000 | - | - |"
for level in $LEVELS; do
	m=$(echo ${t[$level]} | tr ' ' '\n' | median)
	echo "| cirron-probe $level | $m | $(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.3f", a/b}') |" \
		"$(awk -v a="$m" -v b="$base" -v n="$BATCHES" 'BEGIN {printf "%.0f", (a-b)/n*1e6}') |" \
		"${hits[$level]:-?} |"
done
} | tee "$RES/example_overhead.md"
