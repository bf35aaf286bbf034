#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What --metrics costs the observer: bench/synthetic_steps.py (a tiny model, thousands of
# steps a second: the worst case for per-span work) for METRICS_STEPS steps under
# `cirron-probe run --output spool`, ROUNDS times each, interleaved: without --metrics, with
# --metrics and nobody scraping, and with a scraper fetching /metrics every SCRAPE_S seconds.
# The observer's CPU time (user + system, /usr/bin/time) per mode, its median, and one
# scrape's size and time; then the CPU time of one request, alone (metrics_scrape_cost.py).
#   METRICS_STEPS=50000 ROUNDS=3 SCRAPE_S=0.1 bench/metrics_cost.sh
source "$(dirname "$0")/lib.sh"
STEPS=${METRICS_STEPS:-50000}
ROUNDS=${ROUNDS:-3}
SCRAPE_S=${SCRAPE_S:-0.1}
NAME=metrics_cost
reset_results $NAME
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"

one() {	# one MODE: observer CPU seconds
	local mode=$1 args=() tm=$TMPB/time err=$TMPB/run.err scraper=
	rm -rf "$TMPB/spool"
	[[ $mode != off ]] && args=(--metrics 127.0.0.1:0)
	/usr/bin/time -o "$tm" -f '%U %S' "$PROBE" run --output spool --path "$TMPB/spool" \
		"${args[@]}" -- $PY bench/synthetic_steps.py --steps "$STEPS" > /dev/null 2> "$err" &
	local pid=$!
	if [[ $mode == scraped ]]; then
		wait_for "$err" 'metrics at' 30
		local url
		url=$(grep -o 'http://[^ ]*/metrics' "$err")
		( while kill -0 $pid 2>/dev/null; do
			curl -s -o /dev/null -w '%{size_download} %{time_total}\n' "$url" >> "$TMPB/scrapes" || true
			sleep "$SCRAPE_S"
		done ) &
		scraper=$!
	fi
	wait $pid || die "run failed: $(tail -3 "$err")"
	[[ -n $scraper ]] && wait $scraper
	awk '{print $1 + $2}' "$tm"
}

declare -A cpu
for ((r = 0; r < ROUNDS; r++)); do
	for mode in off idle scraped; do
		cpu[$mode]+="$(one $mode) "
		log "metrics_cost: round $r $mode: ${cpu[$mode]}"
	done
done
build_bench_bins >/dev/null 2>&1 || true
per=$($PY bench/metrics_scrape_cost.py "$PROBE" "$PWD/.output/tests/cuda_calls" "${REQUESTS:-2000}" 10)
log "metrics_cost: $per"
scrapes=$(grep -c . "$TMPB/scrapes" || true)
size=$(awk '$1 > 0 {print $1}' "$TMPB/scrapes" | median)
took=$(awk '$1 > 0 {print $2 * 1000}' "$TMPB/scrapes" | median)
{
	echo "## What --metrics costs the observer"
	echo
	echo "bench/synthetic_steps.py, $STEPS steps (~5 spans each) under \`cirron-probe run --output"
	echo "spool\`, $ROUNDS rounds, modes interleaved; the observer's user + system CPU seconds"
	echo "(/usr/bin/time). scraped: curl fetches /metrics every $SCRAPE_S s while the job runs"
	echo "($scrapes scrapes in all; a page of $size bytes, $(fmt '%.2f' "$took") ms per request, median)."
	echo
	echo "Per request, measured alone (bench/metrics_scrape_cost.py: one live session, sequential"
	echo "requests, the observer's own CPU time): \`$per\`."
	echo
	echo "| mode | observer CPU (s), median | runs |"
	echo "|---|---|---|"
	for mode in off idle scraped; do
		echo "| $mode | $(lines <<<"${cpu[$mode]}" | median) | ${cpu[$mode]} |"
	done
} > "$(section_file $NAME)"
off=$(lines <<<"${cpu[off]}" | median)
scr=$(lines <<<"${cpu[scraped]}" | median)
target $NAME "--metrics, scraped every $SCRAPE_S s, costs the observer under 5% more CPU" \
	"$off -> $scr s" "$(verdict_le "$(calc '(s-o)/o*100' o="$off" s="$scr")" 5 "%")"
cat "$(section_file $NAME)"
