#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of one uprobe hit, three ways: a trapped function entry (`push %rbp`, the real
# libcudart), an entry at a 5-byte nop (bench/nop_cudart.c, same symbols), and entry plus
# return probe (cudaStreamSynchronize, which cirron-probe probes on both ends), each a CUDA
# runtime call in a tight loop (bench/cuda_loop.c), bare and under `cirron-probe run`, rounds
# interleaved. Also writes $RES/hit_cost.env (ns per hit) for step_overhead.sh.
#   N=200000 ROUNDS=5 bench/hit_cost.sh
source "$(dirname "$0")/lib.sh"
N=${N:-200000}
ROUNDS=${ROUNDS:-5}
NAME=hit_cost
reset_results $NAME
build_bench_bins

# kind|binary|library|call|probes per call
CASES=(
	"push|$OUTDIR/cuda_loop|$(readlink -f $CUDART/libcudart.so.13 2>/dev/null || readlink -f $CUDART/libcudart.so)|launch|1 entry (cudaLaunchKernel)"
	"push_ret|$OUTDIR/cuda_loop|@|sync|1 entry + 1 return (cudaStreamSynchronize)"
	"nop|$OUTDIR/cuda_loop_nop|$OUTDIR/libcudart_nop.so|launch|1 entry (cudaLaunchKernel)"
	"nop_ret|$OUTDIR/cuda_loop_nop|@|sync|1 entry + 1 return (cudaStreamSynchronize)"
)
ns_per_call() { "$@" | awk '{print $2}'; }
declare -A bare probed
for r in $(seq "$ROUNDS"); do
	for c in "${CASES[@]}"; do
		IFS='|' read -r kind bin _ call _ <<<"$c"
		bare[$kind]+="$(ns_per_call "$bin" "$call" "$N") "
		probed[$kind]+="$(ns_per_call "$PROBE" run --output none --cuda-calls always -- "$bin" "$call" "$N") "
	done
	log "hit_cost: round $r/$ROUNDS"
done

insn_of() {	# insn_of LIB SYMBOL
	local a
	a=$(nm -D --defined-only "$1" | awk -v s="$2" '{n=$3; sub(/@.*/, "", n)} n == s {print $1; exit}')
	objdump -d --start-address=0x$a --stop-address=$((0x$a + 8)) "$1" |
		awk -F'\t' '/^ *[0-9a-f]+:\t/ {gsub(/ +/, " ", $3); print $3; exit}'
}

{
	echo "## Cost of one uprobe hit"
	echo
	echo "A CUDA runtime call in a tight loop (bench/cuda_loop.c), N=$N calls, bare and under"
	echo "\`cirron-probe run --output none\`; ns per call, median of $ROUNDS interleaved rounds"
	echo "(min to max in parentheses). The real libcudart's functions begin with \`push %rbp\` (the kernel"
	echo "emulates it); bench/nop_cudart.c exports the same symbols, each beginning with the 5-byte"
	echo "nop that \`-pg -mfentry -mnop-mcount\` puts at a function entry."
	echo
	echo "| entry instruction | probes per call | bare ns/call | probed ns/call | cost per call (us, medians) |"
	echo "|---|---|---|---|---|"
	lib=
	for c in "${CASES[@]}"; do
		IFS='|' read -r kind bin l call what <<<"$c"
		[[ $l == @ ]] || lib=$l
		sym=$([[ $call == launch ]] && echo cudaLaunchKernel || echo cudaStreamSynchronize)
		b=$(echo "${bare[$kind]}" | lines | median)
		p=$(echo "${probed[$kind]}" | lines | median)
		cost=$(calc '(p-b)/1000' p="$p" b="$b")
		printf '%s_NS=%s\n' "$(echo "$kind" | tr a-z A-Z)" "$(calc '(p-b)' p="$p" b="$b")" >> "$RES/$NAME.env.tmp"
		echo "| \`$(insn_of "$lib" "$sym")\` ($(basename "$lib")) | $what | $(summary %.1f "${bare[$kind]}") | $(summary %.1f "${probed[$kind]}") | $(fmt '%.2f' "$cost") |"
	done
	echo
	# shellcheck source=/dev/null
	source "$RES/$NAME.env.tmp"
	echo "A return probe adds $(fmt '%.2f' "$(calc '(a-b)/1000' a="$PUSH_RET_NS" b="$PUSH_NS")") us to a"
	echo "\`push\` entry and $(fmt '%.2f' "$(calc '(a-b)/1000' a="$NOP_RET_NS" b="$NOP_NS")") us to a nop entry."
	echo "The cost per call includes cirron-probe's BPF program (counters in maps, no ring-buffer event)."
} > "$(section_file $NAME)"
mv "$RES/$NAME.env.tmp" "$RES/$NAME.env"
cat "$(section_file $NAME)"
