#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `trace --format perfetto` on a long real spool: bench/synthetic_steps.py for EXPORT_STEPS
# steps under `cirron-probe run` (a real spool, ~5 spans per step), then the export of the
# whole spool and of its first tenth (a copy of the earliest batches), timed, with the
# exporter's peak RSS (/usr/bin/time) and the file's size; `trace --format json` (which
# builds the whole tree in memory) beside it for contrast.
#   EXPORT_STEPS=100000 bench/export_cost.sh
source "$(dirname "$0")/lib.sh"
STEPS=${EXPORT_STEPS:-100000}
NAME=export_cost
reset_results $NAME
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"

spool=$TMPB/spool
log "export_cost: tracing $STEPS steps"
"$PROBE" run --output spool --path "$spool" -- $PY bench/synthetic_steps.py --steps "$STEPS" \
	> "$TMPB/steps.out" 2> "$TMPB/run.err" || { tail -5 "$TMPB/run.err" >&2; die "run failed"; }
spans=$(cat "$spool"/spool/*.json | $PY -c '
import json, sys
print(sum(len(json.loads(l)["spans"]) for l in sys.stdin))')
steps=$(spool_py health "$spool" | awk -F= '$1 == "steps" {print $2}')
# the first tenth of the batches, as a smaller spool of the same run
small=$TMPB/small
mkdir -p "$small/spool"
n=$(ls "$spool/spool" | wc -l)
ls "$spool/spool" | sort | head -n $(((n + 9) / 10)) | while read -r f; do cp "$spool/spool/$f" "$small/spool/"; done

one() {	# one DIR FORMAT: "seconds max_rss_kb bytes"
	local out=$TMPB/out.$2 tm=$TMPB/time
	if [[ $2 == perfetto ]]; then
		/usr/bin/time -o "$tm" -f '%e %M' "$PROBE" trace "$1" --format perfetto -o "$out" 2>/dev/null
	else
		/usr/bin/time -o "$tm" -f '%e %M' "$PROBE" trace "$1" --format "$2" > "$out" 2>/dev/null
	fi
	echo "$(cat "$tm") $(stat -c %s "$out")"
	rm -f "$out"
}

rows=()
for dir in "$small" "$spool"; do
	for f in perfetto json; do
		rows+=("$(basename "$dir") $f $(one "$dir" $f)")
		log "export_cost: ${rows[-1]}"
	done
done

{
	echo "## Perfetto export of a long spool"
	echo
	echo "bench/synthetic_steps.py: $STEPS optimizer steps under \`cirron-probe run\`: $steps steps and"
	echo "$spans span copies in $n batch files ($(du -sm "$spool/spool" | cut -f1) MiB). \`trace --format"
	echo "perfetto -o FILE\` streams (one batch file at a time, only open spans held); \`trace --format"
	echo "json\` builds every session's tree in memory first. \"first tenth\" is a copy of the run's"
	echo "earliest batch files. Peak RSS from /usr/bin/time; one run each."
	echo
	echo "| spool | format | time (s) | peak RSS (MiB) | output (MiB) |"
	echo "|---|---|---|---|---|"
	for row in "${rows[@]}"; do
		read -r dir f secs kb bytes <<<"$row"
		[[ $dir == small ]] && dir="first tenth" || dir="all $STEPS steps"
		echo "| $dir | $f | $secs | $(fmt '%.1f' "$(calc 'k/1024' k="$kb")") | $(fmt '%.1f' "$(calc 'b/1048576' b="$bytes")") |"
	done
} > "$(section_file $NAME)"
read -r _ _ _ kb_small _ <<<"${rows[0]}"
read -r _ _ secs_big kb_big _ <<<"${rows[2]}"
target $NAME "perfetto export of $STEPS steps: bounded memory (peak RSS within 4 MiB of a tenth of the spool)" \
	"$(fmt '%.1f' "$(calc 'k/1024' k="$kb_small")") -> $(fmt '%.1f' "$(calc 'k/1024' k="$kb_big")") MiB, ${secs_big} s" \
	"$(verdict_le "$(calc '(b-a)/1024' a="$kb_small" b="$kb_big")" 4 "MiB more for 10x the spool")"
cat "$(section_file $NAME)"
