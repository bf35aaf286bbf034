#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The extra cost per hit of the fallback for kernels without attach cookies (README,
# "Kernels"): the same CUDA runtime call in a tight loop (bench/cuda_loop.c, on
# bench/nop_cudart.c, whose 5-byte-nop entries make a hit cheapest, so the difference shows),
# under `cirron-probe run` with cookies and with CIRRON_KERNEL_WITHOUT=cookie,find_vma (probe
# ids from a (pid, address) map, returns found by stack pointer), rounds interleaved.
#   N=200000 ROUNDS=7 bench/kernel_fallbacks.sh
source "$(dirname "$0")/lib.sh"
N=${N:-200000}
ROUNDS=${ROUNDS:-7}
NAME=kernel_fallbacks
reset_results $NAME
build_bench_bins

# call|hits per call|what
CASES=("launch|1|entry only (cudaLaunchKernel)" "sync|2|entry + return (cudaStreamSynchronize)")
ns_per_call() { "$@" | awk '{print $2}'; }
declare -A cookie fallback
for r in $(seq "$ROUNDS"); do
	for c in "${CASES[@]}"; do
		IFS='|' read -r call _ _ <<<"$c"
		cookie[$call]+="$(ns_per_call "$PROBE" run --output none -- \
			"$OUTDIR/cuda_loop_nop" "$call" "$N") "
		fallback[$call]+="$(CIRRON_KERNEL_WITHOUT=cookie,find_vma ns_per_call "$PROBE" run \
			--output none -- "$OUTDIR/cuda_loop_nop" "$call" "$N") "
	done
	log "$NAME: round $r/$ROUNDS"
done

{
	echo "## Kernels without attach cookies: the fallback's cost per hit"
	echo
	echo "bench/cuda_loop.c on bench/nop_cudart.c (5-byte-nop entries), N=$N calls under"
	echo "\`cirron-probe run --output none\`, with attach cookies and with"
	echo "\`CIRRON_KERNEL_WITHOUT=cookie,find_vma\` (the path kernels before 5.15 take); ns per"
	echo "call, median of $ROUNDS interleaved rounds (min to max in parentheses); kernel $(uname -r)."
	echo
	echo "| probes per call | cookie ns/call | address map ns/call | extra ns per hit (medians) |"
	echo "|---|---|---|---|"
	for c in "${CASES[@]}"; do
		IFS='|' read -r call hits what <<<"$c"
		a=$(echo "${cookie[$call]}" | lines | median)
		b=$(echo "${fallback[$call]}" | lines | median)
		echo "| $what | $(summary %.1f "${cookie[$call]}") | $(summary %.1f "${fallback[$call]}") | $(fmt '%.0f' "$(calc '(b-a)/h' a="$a" b="$b" h="$hits")") |"
	done
	echo
	echo "An entry hit adds a hash lookup keyed by (pid, address); a return hit looks its entry"
	echo "up by (thread, stack pointer) instead of (thread, probe id), and Python-tier entries"
	echo "(nested calls) also store that state."
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
