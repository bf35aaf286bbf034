#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Attach and detach time per kind of uprobe link, in one run: `cirron-probe attach -v
# --duration 1` to a running target (symbol cache warm), with uprobe_multi links (Linux 6.6+,
# one per file and batch) and with one perf link per probe (CIRRON_KERNEL_WITHOUT=uprobe_multi,
# the path of kernels 5.15-6.5), the two interleaved per round:
#   attach  from starting the command to its "attached N probes" line
#   detach  from its "session ... ended (detach)" line to its exit (every link closed)
# Targets: torch (bench/synthetic_steps.py --forever, host torch 1.13: cpython, libtorch,
# libtorch_python, libc10) and cuda (.output/tests/cuda_calls --loop, libcudart).
#   TARGETS="torch cuda" ROUNDS=5 bench/detach_time.sh
source "$(dirname "$0")/lib.sh"
TARGETS=${TARGETS:-"torch cuda"}
ROUNDS=${ROUNDS:-5}
DUR=${DUR:-1}
NAME=detach_time
LINKS="uprobe_multi perf"
reset_results $NAME
[[ -x $CUDA_CALLS ]] || make --no-print-directory "$CUDA_CALLS" >/dev/null

# once PID LINKS: "attach_s detach_s probes links_closed"
once() {
	local pid=$1 links=$2 env=() t0
	[[ $links == perf ]] && env=(CIRRON_KERNEL_WITHOUT=uprobe_multi)
	t0=$(now_ns)
	env "${env[@]}" "$PROBE" attach -p "$pid" -v --duration "$DUR" --output none \
		--cache-dir "$TMPB/cache" 2>&1 >/dev/null | "$PY" -S -u -c '
import sys, time
for line in sys.stdin:
    print(time.time_ns(), line, end="", flush=True)
print(time.time_ns(), "EXIT", flush=True)' > "$TMPB/detach.err"
	awk -v t0="$t0" '
		/attached [0-9]+ probes/ && !a { a = $1; n = $4 }
		/ended \(detach\)/ && !d { d = $1 }
		/closing [0-9]+ uprobe links/ { c = $4 }
		/ EXIT$/ { e = $1 }
		END { if (a && d && e) printf "%.4f %.4f %s %s\n", (a - t0) / 1e9, (e - d) / 1e9, n, c + 0;
		      else print "nan nan nan nan" }' "$TMPB/detach.err"
}

declare -A AT DT NP NL
for t in $TARGETS; do
	pid=$(start_target "$t" "$TMPB/target.$t.out")
	once "$pid" uprobe_multi > /dev/null	# fills the symbol cache
	for r in $(seq "$ROUNDS"); do
		for l in $LINKS; do
			read -r at dt np nl < <(once "$pid" "$l")
			AT[$t|$l]+="$at " DT[$t|$l]+="$dt " NP[$t]=$np NL[$t|$l]=$nl
		done
	done
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
	log "detach_time: $t done"
done

{
	echo "## Attach and detach time per kind of uprobe link"
	echo
	echo "\`cirron-probe attach -v --duration $DUR --output none\` to a running target, symbol cache"
	echo "warm; seconds from starting the command to its \`attached N probes\` line (attach) and"
	echo "from its \`session ... ended (detach)\` line to its exit, every link closed (detach). Median"
	echo "of $ROUNDS rounds (min to max), the two kinds interleaved. uprobe_multi: one link per file"
	echo "and batch of probes (Linux 6.6+); perf: one perf link per probe"
	echo "(\`CIRRON_KERNEL_WITHOUT=uprobe_multi\`, the path of Linux 5.15 to 6.5). In parentheses:"
	echo "the links its \`closing N uprobe links\` line counted at the end (perf links close one by"
	echo "one during the detach itself: none are left for the end)."
	echo
	echo "| target | probes | links | attach (s) | detach (s) |"
	echo "|---|---|---|---|---|"
	for t in $TARGETS; do
		for l in $LINKS; do
			echo "| $t | ${NP[$t]} | $l (${NL[$t|$l]}) | $(summary %.3f "${AT[$t|$l]}") | $(summary %.3f "${DT[$t|$l]}") |"
		done
		dm=$(echo "${DT[$t|uprobe_multi]}" | lines | median)
		dp=$(echo "${DT[$t|perf]}" | lines | median)
		target $NAME "detach from $t under 0.2 s (uprobe_multi links; perf links: $(fmt '%.3f' "$dp") s)" \
			"$(fmt '%.3f' "$dm") s" "$(verdict_le "$dm" 0.2 s)"
	done
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
