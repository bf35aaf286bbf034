#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Loader throughput: bench/launch_storm.c (THREADS threads calling cudaLaunchKernel at an
# offered rate, through bench/nop_cudart.c so each hit is as cheap as this kernel makes one)
# under `cirron-probe attach --cuda-detail` (one ring-buffer event per call). For each rate in
# RATES (0: as fast as the threads can), the events the loader received, the ring-buffer
# drops (health.ringbuf_drops), where drops begin, and the loader's CPU time (after attaching)
# and max RSS per million events (/usr/bin/time -v, /proc/PID/stat).
#   RATES="100000 250000 500000 1000000 0" THREADS=2 SECONDS_EACH=3 bench/throughput.sh
source "$(dirname "$0")/lib.sh"
RATES=${RATES:-"100000 250000 500000 750000 1000000 0"}
THREADS=${THREADS:-2}
SECONDS_EACH=${SECONDS_EACH:-3}
NAME=throughput
reset_results $NAME
[[ -x /usr/bin/time ]] || need_pkg /usr/bin/time time
build_bench_bins
TICK=$(getconf CLK_TCK)

# one RATE: "offered achieved events drops loader_cpu_s loader_startup_cpu_s max_rss_kb"
one() {
	local rate=$1 spool=$TMPB/spool pid tpid lpid c0 out
	rm -rf "$spool" "$TMPB/storm.out" "$TMPB/attach.err"	# wait_for must not see the last run's
	"$OUTDIR/launch_storm" "$THREADS" "$rate" "$SECONDS_EACH" > "$TMPB/storm.out" &
	pid=$!
	wait_for "$TMPB/storm.out" ready 10
	/usr/bin/time -f '%U %S %M' -o "$TMPB/time" \
		"$PROBE" attach -p "$pid" --cuda-detail --path "$spool" -v 2> "$TMPB/attach.err" &
	tpid=$!
	wait_for "$TMPB/attach.err" "attached [0-9]* probes" 30
	lpid=$(pgrep -P "$tpid")
	c0=$(cpu_ticks "$lpid")			# start-up: BPF load, symbols, attach
	kill -USR1 "$pid"
	wait "$pid"
	wait "$tpid" || true			# attach ends when the target exits
	out=$(spool_py health "$spool")
	read -r u s m < "$TMPB/time"
	echo "$rate $(awk '/^calls/ {print $6}' "$TMPB/storm.out") $(echo "$out" | awk -F= '$1=="events" {print $2}') \
$(echo "$out" | awk -F= '$1=="ringbuf_drops" {print $2}') $(calc 'u+s' u="$u" s="$s") $(calc 'c/t' c="$c0" t="$TICK") $m"
}

rows=()
for rate in $RATES; do
	rows+=("$(one "$rate")")
	log "throughput: rate $rate: ${rows[-1]}"
done

{
	echo "## Loader throughput"
	echo
	echo "bench/launch_storm.c: $THREADS threads call cudaLaunchKernel for ${SECONDS_EACH} s at an offered"
	echo "rate (in all; \"max\": as fast as they can) under \`cirron-probe attach --cuda-detail\`, one"
	echo "ring-buffer event per call; the calls go to bench/nop_cudart.c (nop5 entries, the cheapest"
	echo "hit here). Achieved: calls per second the target made. Loader CPU: user+sys after"
	echo "attaching (start-up, BPF load and symbol resolution, subtracted). The target's own hits"
	echo "share the same $(nproc) cores with the loader. One run per rate."
	echo
	echo "| offered (events/s) | achieved (events/s) | events received | ring-buffer drops | loader CPU after attach (s) | CPU per 1M events (s) | loader max RSS (MiB) |"
	echo "|---|---|---|---|---|---|---|"
	first_drop='' best_clean=0
	for row in "${rows[@]}"; do
		read -r rate ach ev dr cpu c0 rss <<<"$row"
		run_cpu=$(calc 'c-s' c="$cpu" s="$c0")
		per_m=$(calc 'e>0 ? r/e*1e6 : 0' r="$run_cpu" e="$ev")
		echo "| $([[ $rate == 0 ]] && echo max || echo "$rate") | $ach | $ev | $dr | $(fmt '%.2f' "$run_cpu") | $(fmt '%.2f' "$per_m") | $(fmt '%.1f' "$(calc 'k/1024' k="$rss")") |"
		if [[ $dr != 0 && -z $first_drop ]]; then first_drop=$ach; fi
		if [[ $dr == 0 ]] && awk -v a="$ach" -v b="$best_clean" 'BEGIN {exit !(a > b)}'; then best_clean=$ach; fi
	done
	echo
	echo "Highest rate with zero drops: $best_clean events/s. Drops begin: ${first_drop:-not within the rates tried}${first_drop:+ events/s}."
	verdict=$(awk -v b="$best_clean" 'BEGIN {
		if (b >= 1000000) print "met";
		else printf "not reached: the target made at most %.0f events/s here (short by %.0f), all without drops\n", b, 1000000 - b }')
	[[ -n $first_drop ]] && awk -v f="$first_drop" 'BEGIN {exit !(f < 1000000)}' &&
		verdict="missed: drops begin at $first_drop events/s"
	target $NAME "zero drops at 1M events/s" "$best_clean events/s without drops${first_drop:+, drops from $first_drop}" "$verdict"
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
