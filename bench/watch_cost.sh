#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What the node agent (`cirron-probe watch`) costs: its CPU time (utime + stime, all threads)
# and memory (VmRSS, VmHWM) while idle, while CROWD trivial processes start (`python3 -c
# pass`, Debian's, and the same number of /bin/true), and while a 3-rank DDP job runs (gloo,
# tests/workloads/ddp_train.py under tests/workloads/launch_ranks.py), each phase on its own.
#   CROWD=200 IDLE=10 bench/watch_cost.sh
source "$(dirname "$0")/lib.sh"
CROWD=${CROWD:-200}
IDLE=${IDLE:-10}
NAME=watch_cost
reset_results $NAME
mkdir -p "$TMPB"
hz=$(getconf CLK_TCK)

"$PROBE" watch -v --path "$TMPB/spool" --cache-dir "$TMPB/cache" > /dev/null 2> "$TMPB/watch.err" &
agent=$!
on_exit "kill -INT $agent 2>/dev/null"
wait_for "$TMPB/watch.err" "watching for processes that load torch"

# phase NAME CMD...: one row "NAME cpu_s rss_mib hwm_mib wall_s"
phase() {
	local name=$1 c0 c1 t0
	shift
	c0=$(cpu_ticks $agent)
	t0=$(date +%s.%N)
	"$@"
	c1=$(cpu_ticks $agent)
	echo "$name $(calc '(b-a)/h' a="$c0" b="$c1" h="$hz") \
$(calc 'k/1024' k="$(rss_kb $agent)") \
$(calc 'k/1024' k="$(awk '/^VmHWM:/ {print $2}' /proc/$agent/status)") \
$(calc 'b-a' a="$t0" b="$(date +%s.%N)")"
}
idle() { sleep "$IDLE"; }
python_crowd() { for ((i = 0; i < CROWD; i++)); do "$PY" -c pass; done; }
true_crowd() { for ((i = 0; i < CROWD; i++)); do /bin/true; done; }
job() {
	"$PY" tests/workloads/launch_ranks.py --nproc 3 tests/workloads/ddp_train.py --epochs 4 \
		--batches 50 > "$TMPB/job.out" 2>&1 || die "the job failed: $(tail -3 "$TMPB/job.out")"
	sleep 1.5	# the ranks' exits, their last batches
}

rows=()
for p in idle python_crowd true_crowd job; do
	rows+=("$(phase $p $p)")
	log "watch_cost: ${rows[-1]}"
done
kill -INT $agent
wait $agent
sessions=$(ls "$TMPB/spool/spool" | sed 's/\.[0-9]*\.json$//' | sort -u | wc -l)
looked=$(sed -n 's/.*looked at \([0-9]*\) library loads.*/\1/p' "$TMPB/watch.err")

{
	echo "## The node agent's cost"
	echo
	echo "\`cirron-probe watch\` alone on this machine; its CPU time (utime + stime) and memory"
	echo "per phase, each phase after the one before: idle for ${IDLE} s; $CROWD \`$PY -c pass\`"
	echo "one after the other; $CROWD \`/bin/true\`; a 3-rank DDP job (gloo, 4 epochs of 50 steps,"
	echo "tests/workloads/launch_ranks.py). Sessions written: $sessions (the 3 ranks expected);"
	echo "link-map changes looked at in processes not traced: $looked."
	echo
	echo "| phase | agent CPU (s) | RSS after (MiB) | peak RSS (MiB) | wall (s) |"
	echo "|---|---|---|---|---|"
	for row in "${rows[@]}"; do
		read -r name cpu rss hwm wall <<<"$row"
		echo "| $name | $(fmt '%.3f' "$cpu") | $(fmt '%.1f' "$rss") | $(fmt '%.1f' "$hwm") | $(fmt '%.1f' "$wall") |"
		[[ $name == python_crowd ]] && target $NAME "agent CPU for $CROWD python3 -c pass" \
			"$(fmt '%.3f' "$cpu") s ($(fmt '%.2f' "$(calc 'c*1000/n' c="$cpu" n="$CROWD")") ms each)" "—"
		[[ $name == job ]] && target $NAME "agent CPU and peak RSS, 3-rank job" \
			"$(fmt '%.2f' "$cpu") s CPU in $(fmt '%.0f' "$wall") s, $(fmt '%.1f' "$hwm") MiB" "—"
	done
	target $NAME "sessions for the 3-rank job and the crowds" "$sessions" \
		"$([[ $sessions == 3 ]] && echo "met: the ranks only" || echo "NOT met: expected 3")"
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
