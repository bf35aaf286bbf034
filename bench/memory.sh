#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Loader memory over a long session: bench/synthetic_steps.py (a tiny model, one optimizer
# step per iteration, no DataLoader: cirron-probe cuts an epoch every 1000 steps) for
# MEM_STEPS steps under `cirron-probe run`, once per sink in SINKS; the loader's VmRSS sampled
# from /proc/PID/status every INTERVAL seconds, reported at 10%, 50% and 100% of the steps,
# and its maximum.
#   MEM_STEPS=100000 SINKS="spool none" INTERVAL=0.5 bench/memory.sh
source "$(dirname "$0")/lib.sh"
STEPS=${MEM_STEPS:-100000}
SINKS=${SINKS:-"spool none"}
INTERVAL=${INTERVAL:-0.5}
NAME=memory
reset_results $NAME
PROGRESS=$((STEPS / 10 > 0 ? STEPS / 10 : 1))

# rss_at SAMPLES T: the sample nearest after time T (seconds since the epoch)
rss_at() { awk -v t="$2" '$1 >= t {print $2; exit}' "$1"; }

one() {	# one SINK: "rss10 rss50 rss100 rssmax steps_seen spool_mb seconds"
	local sink=$1 spool=$TMPB/spool pid out=$TMPB/steps.out samples=$TMPB/rss.$1 r t0 n
	rm -rf "$spool" "$out" "$samples"
	t0=$(date +%s.%N)
	"$PROBE" run --output "$sink" --path "$spool" -- $PY bench/synthetic_steps.py \
		--steps "$STEPS" --progress "$PROGRESS" > "$out" 2> "$TMPB/run.err" &
	pid=$!
	while r=$(rss_kb "$pid") && [[ -n $r ]]; do
		echo "$(date +%s.%N) $r" >> "$samples"
		sleep "$INTERVAL"
	done
	wait "$pid" || log "memory: cirron-probe run exited $?"
	n=$(awk '/^done/ {print $2}' "$out")
	[[ $n == "$STEPS" ]] || { tail -5 "$TMPB/run.err" >&2; die "the workload did not finish"; }
	local t10 t50 t100 steps_seen=- mb=-
	t10=$(awk -v k=$((PROGRESS)) '$1 == "step" && $2 == k {print $3}' "$out")
	t50=$(awk -v k=$((PROGRESS * 5)) '$1 == "step" && $2 == k {print $3}' "$out")
	t100=$(awk -v k=$((PROGRESS * 10)) '$1 == "step" && $2 == k {print $3}' "$out")
	if [[ $sink == spool ]]; then
		steps_seen=$(spool_py health "$spool" | awk -F= '$1 == "steps" {print $2}')
		mb=$(du -sm "$spool" | cut -f1)
	fi
	echo "$(rss_at "$samples" "$t10") $(rss_at "$samples" "$t50") $(rss_at "$samples" "$t100") \
$(awk '$2 > m {m = $2} END {print m}' "$samples") $steps_seen $mb $(calc 'b-a' a="$t0" b="$(date +%s.%N)")"
}

rows=()
for sink in $SINKS; do
	rows+=("$sink $(one "$sink")")
	log "memory: $sink: ${rows[-1]}"
done

{
	echo "## Loader memory over a long session"
	echo
	echo "bench/synthetic_steps.py: $STEPS optimizer steps of a tiny linear model (well under a"
	echo "millisecond each) under \`cirron-probe run --output SINK\`; the loader's VmRSS from"
	echo "/proc/PID/status every ${INTERVAL} s, at the sample after the workload reached 10%, 50% and"
	echo "100% of its steps, and the largest sample. Counted as flat: no more than 1 MiB (allocator"
	echo "noise) between the 10% and the 100% samples. One run per sink."
	echo
	echo "| sink | RSS at 10% (MiB) | at 50% | at 100% | max | growth 10% to 100% | steps in the spool | spool size (MiB) | wall (s) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for row in "${rows[@]}"; do
		read -r sink a b c mx seen mb secs <<<"$row"
		mib() { fmt '%.1f' "$(calc 'k/1024' k="$1")"; }
		grow=$(calc 'c-a' a="$a" c="$c")
		echo "| $sink | $(mib "$a") | $(mib "$b") | $(mib "$c") | $(mib "$mx") | $(fmt '%+.1f' "$(calc 'g/1024' g="$grow")") MiB | $seen | $mb | $(fmt '%.0f' "$secs") |"
		# flat: no more than 1 MiB (allocator noise) between 10% and the end
		target $NAME "loader RSS flat over $STEPS steps (--output $sink)" \
			"$(mib "$a") -> $(mib "$c") MiB" "$(verdict_le "$(calc 'g/1024' g="$grow")" 1 "MiB (over the 1 MiB allowed)")"
	done
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
