#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Each default-level torch probe's own cost on the host (Debian torch 1.13): the probed entry
# point called in a tight loop (bench/probe_cost.py), bare and under `cirron-probe run` at the
# default level, rounds interleaved; the cost per hit is the time per call added, over the
# hits per call that health counted. With it, in the same run, the cost of a counter-only hit
# at a `push %rbp` entry (bench/cuda_loop.c on libcudart, as bench/hit_cost.sh), so that what
# an anchor's BPF program adds (ring-buffer event, argument reads) stands apart from the trap.
# Which instruction each probe sits on comes from `cirron-probe doctor` (bench/probe_list.py).
#   N=100000 ROUNDS=5 bench/probe_cost.sh
source "$(dirname "$0")/lib.sh"
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
NAME=probe_cost
KINDS="grad record backward"
reset_results $NAME
build_bench_bins
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456

# wall and CPU ns per call: "W C"
ns() { "$@" | awk -F= '/^ns_per_call=/ {w = $2} /^cpu_ns_per_call=/ {c = $2} END {print w, c}'; }

# the probes and their first instructions, from doctor on a process that maps host torch
$PY bench/probe_cost.py none 1000000000 > "$TMPB/pc.idle" 2>&1 & idle=$!
on_exit "kill $idle 2>/dev/null"
wait_for "$TMPB/pc.idle" ready 60
"$PROBE" doctor -p "$idle" > "$TMPB/pc.doctor" 2>/dev/null || true
kill "$idle" 2>/dev/null; wait "$idle" 2>/dev/null || true
"$PY" bench/probe_list.py list < "$TMPB/pc.doctor" > "$TMPB/pc.list"

declare -A BARE PROBED CBARE CPROBED
for r in $(seq "$ROUNDS"); do
	for k in $KINDS; do
		read -r w c < <(ns "$PY" bench/probe_cost.py "$k" "$N")
		BARE[$k]+="$w " CBARE[$k]+="$c "
		rm -rf "$TMPB/pc.$k"
		read -r w c < <(ns "$PROBE" run --output spool --path "$TMPB/pc.$k" -- "$PY" bench/probe_cost.py "$k" "$N")
		PROBED[$k]+="$w " CPROBED[$k]+="$c "
	done
	BARE[push]+="$("$OUTDIR/cuda_loop" launch "$N" | awk '{print $2}') "
	PROBED[push]+="$("$PROBE" run --output none --cuda-calls always -- "$OUTDIR/cuda_loop" launch "$N" | awk '{print $2}') "
	log "probe_cost: round $r/$ROUNDS"
done
for k in $KINDS; do
	spool_py probe-hits "$TMPB/pc.$k" > "$TMPB/pc.hits.$k"
done

# insn SYMBOL: the probed instruction, as probe_list.py read it
insn() { awk -F'|' -v s="$1" '$2 == s {print $6; exit}' "$TMPB/pc.list"; }
# how the kernel (x86, 6.x) runs the probed instruction: emulated or single-stepped out of line
how() {
	case $1 in
	push*|call*|jmp*|j[a-z]*\ *|nop*|xchg\ %ax,%ax) echo emulated ;;
	"") echo "?" ;;
	*) echo "single-stepped (XOL)" ;;
	esac
}

{
	echo "## Per-probe cost at the default level (host torch 1.13)"
	echo
	echo "bench/probe_cost.py calls one probed entry point in a tight loop, N=$N calls after 1000"
	echo "warm-up calls, bare and under \`cirron-probe run\` at the default level (every default probe"
	echo "linked; only the probed function's probes fire in the loop); ns per call, median of $ROUNDS"
	echo "interleaved rounds (min to max). Hits per call: health's hits over the calls made (warm-up"
	echo "and import included). Cost per hit: the added time per call over the hits per call; wall"
	echo "clock, and the process's own CPU time (the trap and the BPF program run on the calling"
	echo "thread; the loader, competing for the same 2 cores, does not count there)."
	echo "Reference, same run: a counter-only hit (no ring-buffer event) at a \`push %rbp\` entry,"
	echo "cudaLaunchKernel in bench/cuda_loop.c."
	echo
	echo "| loop calls | probes hit (entries + returns per call) | probed instruction | kernel runs it | bare ns/call | probed ns/call | added us/call: wall, CPU | us per hit: wall, CPU |"
	echo "|---|---|---|---|---|---|---|---|"
	for k in $KINDS push; do
		b=$(echo "${BARE[$k]}" | lines | median)
		p=$(echo "${PROBED[$k]}" | lines | median)
		add=$(calc '(p-b)/1000' p="$p" b="$b")
		cadd=nan
		if [[ -n ${CBARE[$k]:-} ]]; then
			cadd=$(calc '(p-b)/1000' p="$(echo "${CPROBED[$k]}" | lines | median)" \
				b="$(echo "${CBARE[$k]}" | lines | median)")
		fi
		if [[ $k == push ]]; then
			what="cudaLaunchKernel (1 + 0)"; ins="push %rbp"; hits=1
		else
			what=$(awk -F'|' -v n="$((N + 1000))" '
				($3 + $4) / n > 0.5 { printf "%s%s (%.2f + %.2f)", sep, substr($2, 1, 40), $3 / n, $4 / n; sep = "; " }' "$TMPB/pc.hits.$k")
			hits=$(awk -F'|' -v n="$((N + 1000))" '($3 + $4) / n > 0.5 {h += ($3 + $4) / n} END {print h + 0}' "$TMPB/pc.hits.$k")
			ins=$(awk -F'|' -v n="$((N + 1000))" '($3 + $4) / n > 0.5 {print $2}' "$TMPB/pc.hits.$k" |
				while read -r s; do printf '%s; ' "$(insn "$s")"; done | sed 's/; $//')
		fi
		cpu_add=- cpu_hit=-
		if [[ $cadd != nan ]]; then
			cpu_add=$(fmt '%.2f' "$cadd")
			cpu_hit=$(fmt '%.2f' "$(calc 'h > 0 ? c/h : 0' c="$cadd" h="$hits")")
		fi
		hw=$(echo "$ins" | tr ';' '\n' | while read -r i; do how "$i"; done | sort -u | paste -sd/)
		call=$(case $k in grad) echo "torch._C._set_grad_enabled" ;; record) echo "_record_function_enter + _exit" ;;
			backward) echo "backward() of a 1-element graph" ;; push) echo "cudaLaunchKernel (libcudart)" ;; esac)
		echo "| $call | $what | \`$ins\` | $hw | $(summary %.0f "${BARE[$k]}") | $(summary %.0f "${PROBED[$k]}") | $(fmt '%.2f' "$add"), $cpu_add | $(fmt '%.2f' "$(calc 'h > 0 ? a/h : 0' a="$add" h="$hits")"), $cpu_hit |"
	done
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
