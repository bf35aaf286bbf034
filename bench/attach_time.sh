#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Attach time: from starting `cirron-probe attach -p PID` to the first event it records, and to
# its "attached N probes" log line (-v: every probe in), for running targets:
#   cuda          .output/tests/cuda_calls --loop (libcudart, cudaLaunchKernel in a loop;
#                 attached with --cuda-detail, so every call is an event)
#   torch         bench/synthetic_steps.py --forever on the host (maps libtorch_cpu.so 1.13)
#   torch-trixie  the same in the trixie root (libtorch_cpu.so 2.6, Python 3.13)
# in three states, in this order each round:
#   cold          empty symbol cache (--cache-dir) and `echo 3 > /proc/sys/vm/drop_caches`
#                 (page cache dropped: the loader reads the ELF files from disk)
#   cache-cold    empty symbol cache, page cache as the previous attach left it
#   warm          the symbol cache the previous attach filled
# The first event's time is the earliest event timestamp in the spool (a CUDA mark, or the
# start of a torch span); the log line's is when it reached this script.
#   TARGETS="cuda torch torch-trixie" ROUNDS=3 bench/attach_time.sh
source "$(dirname "$0")/lib.sh"
TARGETS=${TARGETS:-"cuda torch torch-trixie"}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1}			# seconds attached each time
NAME=attach_time
STATES="cold cache-cold warm"
reset_results $NAME
[[ -x $CUDA_CALLS ]] || make --no-print-directory "$CUDA_CALLS" >/dev/null

# attach_once T PID STATE CACHE: "first_event_s attached_s" after the attach started
attach_once() {
	local t=$1 pid=$2 state=$3 cache=$4 spool=$TMPB/spool t0 ta fe extra=()
	rm -rf "$spool"
	[[ $state == warm ]] || rm -rf "$cache"
	if [[ $state == cold ]]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
	fi
	[[ $t == cuda ]] && extra=(--cuda-detail)
	t0=$(now_ns)
	# stderr lines, each stamped when it arrives
	"$PROBE" attach -p "$pid" -v --duration "$DUR" --path "$spool" --cache-dir "$cache" "${extra[@]}" \
		2>&1 >/dev/null | "$PY" -S -u -c '
import sys, time
for line in sys.stdin:
    print(time.time_ns(), line, end="", flush=True)' > "$TMPB/attach.err"
	ta=$(awk '/attached [0-9]+ probes/ {print $1; exit}' "$TMPB/attach.err")
	fe=$(spool_py first-event "$spool" | awk -F= '$1 == "first_event_ns" {print $2}')
	if [[ -z $ta || -z $fe ]]; then
		log "attach to $t ($state): no attach line or no event"; cat "$TMPB/attach.err" >&2
		echo "nan nan"; return
	fi
	echo "$(calc '(f-t)/1e9' f="$fe" t="$t0") $(calc '(a-t)/1e9' a="$ta" t="$t0")"
}

declare -A FE AT
[[ " $TARGETS " == *" torch-trixie "* ]] && trixie_enter	# here: its unmount must run at our exit
for t in $TARGETS; do
	pid=$(start_target "$t" "$TMPB/target.$t.out")
	for r in $(seq "$ROUNDS"); do
		for s in $STATES; do
			read -r fe at < <(attach_once "$t" "$pid" "$s" "$TMPB/cache.$t.$r")
			FE[$t|$s]+="$fe " AT[$t|$s]+="$at "
		done
	done
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
	log "attach_time: $t done"
done

{
	echo "## Attach time"
	echo
	echo "\`cirron-probe attach -v --duration $DUR\` to an already running target; seconds from"
	echo "starting the command to the first event it recorded (the earliest event timestamp in the"
	echo "spool) and to its \`attached N probes\` log line (every probe in). Median of $ROUNDS rounds"
	echo "(min to max). cold: empty symbol cache (\`--cache-dir\`) and \`echo 3 > /proc/sys/vm/drop_caches\`"
	echo "(page cache dropped too, so the ELF files are read from disk); cache-cold: empty symbol"
	echo "cache, page cache warm; warm: the symbol cache the previous attach filled. cirron-probe -v"
	echo "prints no timing lines of its own; the times are taken outside."
	echo
	echo "| target | state | to first event (s) | to \"attached\" line (s) |"
	echo "|---|---|---|---|"
	for t in $TARGETS; do
		for s in $STATES; do
			echo "| $t | $s | $(summary %.3f "${FE[$t|$s]}") | $(summary %.3f "${AT[$t|$s]}") |"
		done
		fe=$(echo "${FE[$t|warm]}" | lines | median)
		at=$(echo "${AT[$t|warm]}" | lines | median)
		target $NAME "attach to $t under 1 s warm (to first event)" "$(fmt '%.3f' "$fe") s" "$(verdict_le "$fe" 1 s)"
		target $NAME "attach to $t under 1 s warm (all probes in)" "$(fmt '%.3f' "$at") s" "$(verdict_le "$at" 1 s)"
	done
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
