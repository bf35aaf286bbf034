#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of mark capture per printed line (issue 18), and the two ways in measured against each
# other: bench/print_loop.c writes N metric lines (one write(2) each) to stdout, bare and under
# `cirron-probe run --marks off|on|uprobe` (on: the syscall-entry tracepoint filtered in BPF;
# uprobe: libc's write() probed for the traced pid only). The tracepoint runs for every
# syscall of every process on the node, so the cost it puts on processes it does not trace
# (N writes, N getppid calls) is measured too, bare and beside an observer that traces another
# process. The writer runs on CPU 0 and the observer on CPU 1, rounds interleaved.
#   N=100000 ROUNDS=5 bench/mark_cost.sh
source "$(dirname "$0")/lib.sh"
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
NAME=mark_cost
reset_results $NAME
cc -O2 -I$CUDART/../include bench/print_loop.c -o "$OUTDIR/print_loop" -L$CUDART -lcudart \
	-Wl,-rpath,$CUDART
LOOP=$OUTDIR/print_loop
W="taskset -c 0"
O="taskset -c 1"
ns() { "$@" 2>&1 >/dev/null | awk '/^ns_per_line/ {print $2}'; }

declare -A r
for round in $(seq "$ROUNDS"); do
	r[bare]+="$(ns $W "$LOOP" lines "$N") "
	for m in off on uprobe; do
		r[$m]+="$(ns $O "$PROBE" run --output none --marks $m -- $W "$LOOP" lines "$N") "
	done
	# processes the observer does not trace, bare and beside one that traces a sleeper
	for kind in other syscall; do
		r[free_$kind]+="$(ns $W "$LOOP" $kind "$N") "
	done
	$O "$PROBE" run --output none --marks on -- "$LOOP" sleep 8 >/dev/null 2>&1 &
	obs=$!
	sleep 3	# attached: the first probes are in long before (a bench, not a test)
	for kind in other syscall; do
		r[beside_$kind]+="$(ns $W "$LOOP" $kind "$N") "
	done
	wait $obs 2>/dev/null || true	# the sleeper ends, and with it the observer
	log "mark_cost: round $round/$ROUNDS"
done

med() { echo "${r[$1]}" | lines | median; }
{
	echo "## Cost of mark capture per printed line"
	echo
	echo "bench/print_loop.c: N=$N lines of ~45 bytes, one write(2) each, to /dev/null; ns per"
	echo "line, median of $ROUNDS interleaved rounds (min to max); writer on CPU 0, observer on"
	echo "CPU 1 (\`--output none\`: the loader still parses every line into marks)."
	echo
	echo "| mode | ns/line | cost per line (us, medians) |"
	echo "|---|---|---|"
	b=$(med bare)
	echo "| bare | $(summary %.0f "${r[bare]}") | - |"
	for m in off on uprobe; do
		echo "| \`run --marks $m\` | $(summary %.0f "${r[$m]}") | $(fmt '%.2f' "$(calc '(p-b)/1000' p="$(med $m)" b="$b")") |"
	done
	echo
	echo "Processes the observer does not trace, bare and while it traces another process with"
	echo "\`--marks on\` (the tracepoint program runs for each of their syscalls and returns at"
	echo "the syscall number or the pid lookup):"
	echo
	echo "| call | bare ns/call | beside the observer ns/call | cost per call (ns, medians) |"
	echo "|---|---|---|---|"
	for kind in other syscall; do
		what=$([[ $kind == other ]] && echo "write(2) to /dev/null" || echo "getppid()")
		echo "| $what | $(summary %.0f "${r[free_$kind]}") | $(summary %.0f "${r[beside_$kind]}") | $(fmt '%.0f' "$(calc 'p-b' p="$(med beside_$kind)" b="$(med free_$kind)")") |"
	done
} > "$(section_file $NAME)"
target $NAME "mark capture per printed line (tracepoint)" \
	"$(fmt '%.2f' "$(calc '(p-b)/1000' p="$(med on)" b="$b")") us" "reported"
cat "$(section_file $NAME)"
