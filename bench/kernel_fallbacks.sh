#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The extra cost per hit of the fallback for kernels without attach cookies (docs/kernels.md,
# "The fallbacks"): the same CUDA runtime call in a tight loop (bench/cuda_loop.c, on
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

# The BPF programs' own run time per hit (kernel BPF stats, enabled only while this runs:
# the bpf(BPF_ENABLE_STATS) fd a helper holds), less noisy than the loop's wall time on a
# busy machine. prog_ns MODE CALL: "entry_ns return_ns" of that run's handle_entry/_return.
"$PY" -c 'import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
attr = (ctypes.c_uint32 * 4)(0, 0, 0, 0)      # BPF_ENABLE_STATS, type BPF_STATS_RUN_TIME
fd = libc.syscall(321, 32, ctypes.byref(attr), 16)
if fd < 0: raise SystemExit("bpf(BPF_ENABLE_STATS): " + os.strerror(ctypes.get_errno()))
print("on", flush=True)
signal.pause()' > "$TMPB/stats.out" &
stats_pid=$!
on_exit "kill $stats_pid 2>/dev/null || true"
wait_for "$TMPB/stats.out" on 10
prog_ns() {
	local env=() flag=$TMPB/loop.done obs
	[[ $1 == fallback ]] && env=(CIRRON_KERNEL_WITHOUT=cookie,find_vma)
	rm -f "$flag"
	env "${env[@]}" "$PROBE" run --output none -- sh -c \
		"$OUTDIR/cuda_loop_nop $2 $N >/dev/null; echo done > $flag; sleep 5" &
	obs=$!
	wait_for "$flag" done 120
	grep -h '^prog_id:' /proc/$obs/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u |
		while read -r id; do bpftool prog show id "$id" -j; echo; done |
		"$PY" -c 'import json, sys
ns = {}
for line in sys.stdin:
    if line.strip():
        p = json.loads(line)
        if p.get("name") in ("handle_entry", "handle_return") and p.get("run_cnt"):
            ns[p["name"]] = p["run_time_ns"] / p["run_cnt"]
print("%.0f %.0f" % (ns.get("handle_entry", float("nan")), ns.get("handle_return", float("nan"))))'
	kill "$obs" 2>/dev/null
	wait "$obs" 2>/dev/null || true
}
declare -A pe pr
for r in $(seq "$ROUNDS"); do
	for m in cookie fallback; do
		read -r e x <<<"$(prog_ns $m sync)"
		pe[$m]+="$e "
		pr[$m]+="$x "
	done
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
	echo "The BPF programs' own run time per hit (kernel BPF stats, run_time_ns / run_cnt, the"
	echo "same loop on cudaStreamSynchronize), median of $ROUNDS rounds:"
	echo
	echo "| program | cookie ns/hit | address map ns/hit |"
	echo "|---|---|---|"
	echo "| handle_entry | $(summary %.0f "${pe[cookie]}") | $(summary %.0f "${pe[fallback]}") |"
	echo "| handle_return | $(summary %.0f "${pr[cookie]}") | $(summary %.0f "${pr[fallback]}") |"
	echo
	echo "An entry hit adds a hash lookup keyed by (pid, address); a return hit looks its entry"
	echo "up by (thread, stack pointer) instead of (thread, probe id), and Python-tier entries"
	echo "(nested calls) also store that state."
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
