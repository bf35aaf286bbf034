#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Reading a long job's spool back (issue 46): spools of READ_STEPS optimizer steps made by the
# real writer (bench/synthetic_steps.py under `cirron-probe run`; READ_GEN=1: the writer
# without a job, tests/targets/spool_gen), then each read command's wall time, CPU time
# (user + system) and peak RSS, beside two floors: `cat` of every file, and reading and
# parsing every file with cJSON, nothing kept (bench/spool_parse.c). `trace --ranks` also runs
# on 4-rank spools of the same number of steps in all (tests/targets/spool_gen: a single
# process has no ranks). OLD_PROBE=BINARY adds an older binary's numbers for the spools of up
# to OLD_MAX_STEPS steps.
#   READ_STEPS="10000 100000 300000 1000000" bench/read_cost.sh
source "$(dirname "$0")/lib.sh"
STEPS_LIST=${READ_STEPS:-"10000 100000 300000 1000000"}
OLD_MAX=${OLD_MAX_STEPS:-300000}
NAME=read_cost
reset_results $NAME
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
cc -O2 -o "$TMPB/spool_parse" bench/spool_parse.c -lcjson || die "cannot build spool_parse"
make -s .output/tests/spool_gen || die "cannot build spool_gen"

make_spool() {	# make_spool STEPS DIR
	if [[ ${READ_GEN:-0} == 1 ]]; then
		.output/tests/spool_gen "$2" --steps "$1" > /dev/null
	else
		"$PROBE" run --output spool --path "$2" -- $PY bench/synthetic_steps.py --steps "$1" \
			> "$TMPB/steps.out" 2> "$TMPB/run.err" || { tail -5 "$TMPB/run.err" >&2; die "run failed"; }
	fi
}

# one LABEL CMD...: "LABEL wall_s cpu_s rss_mib"
one() {
	local label=$1 tm=$TMPB/time; shift
	# glibc's defaults, not lib.sh's settings for training jobs (they change what RSS is)
	env -u MALLOC_MMAP_THRESHOLD_ -u MALLOC_TRIM_THRESHOLD_ -u MALLOC_TOP_PAD_ \
		/usr/bin/time -o "$tm" -f '%e %U %S %M' "$@" > /dev/null 2> "$TMPB/err" ||
		{ cat "$TMPB/err" >&2; die "$label failed"; }
	read -r e u s m < "$tm"
	echo "$label $e $(calc 'u+s' u="$u" s="$s") $(fmt '%.1f' "$(calc 'k/1024' k="$m")")"
}

commands() {	# commands PROBE DIR TAG
	one "$3trace" "$1" trace "$2"
	one "$3trace_--format_json" "$1" trace --format json "$2"
	one "$3trace_--format_csv" "$1" trace --format csv "$2"
	one "$3trace_--last_5" "$1" trace --last 5 "$2"
	one "$3trace_--name_epoch" "$1" trace --name epoch "$2"
	one "$3health" "$1" health "$2"
	one "$3report" "$1" report -o "$TMPB/report.html" "$2"
	one "$3trace_--format_perfetto" "$1" trace --format perfetto -o "$TMPB/p.json" "$2"
	one "$3trace_--ranks" "$1" trace --ranks "$2"
}

rows=()
for n in $STEPS_LIST; do
	spool=$TMPB/s$n
	log "read_cost: a spool of $n steps"
	make_spool "$n" "$spool"
	files=$(ls "$spool/spool" | wc -l)
	mib=$(du -sm "$spool/spool" | cut -f1)
	cat "$spool"/spool/*.json > /dev/null	# in the page cache, as for every command after
	rows+=("$n $files $mib $(one floor_cat sh -c "cat $spool/spool/*.json")")
	rows+=("$n $files $mib $(one floor_parse "$TMPB/spool_parse" "$spool/spool")")
	while read -r row; do
		rows+=("$n $files $mib $row")
		log "read_cost: $n steps: $row"
	done < <(commands "$PROBE" "$spool" "")
	if [[ -n ${OLD_PROBE:-} && $n -le $OLD_MAX ]]; then
		while read -r row; do
			rows+=("$n $files $mib $row")
			log "read_cost: $n steps, old: $row"
		done < <(commands "$OLD_PROBE" "$spool" "old:")
	fi
	rm -rf "$spool"
	# the ranks of a job: 4 of n/4 steps each
	.output/tests/spool_gen "$spool" --steps $((n / 4)) --ranks 4 > /dev/null
	rows+=("$n $files $mib $(one ranks4 "$PROBE" trace --ranks "$spool")")
	log "read_cost: $n steps, 4 ranks: ${rows[-1]}"
	if [[ -n ${OLD_PROBE:-} && $n -le $OLD_MAX ]]; then
		rows+=("$n $files $mib $(one old:ranks4 "$OLD_PROBE" trace --ranks "$spool")")
	fi
	rm -rf "$spool"
done

# value STEPS LABEL FIELD (4 wall, 5 cpu, 6 rss)
value() {
	local r
	for r in "${rows[@]}"; do
		read -r -a f <<<"$r"
		[[ ${f[0]} == "$1" && ${f[3]} == "$2" ]] && { echo "${f[$3]}"; return; }
	done
	echo "-"
}
labels=(floor_cat floor_parse trace trace_--format_json trace_--format_csv trace_--last_5
	trace_--name_epoch health report trace_--format_perfetto trace_--ranks ranks4)
{
	echo "## Reading a long spool back (issue 46)"
	echo
	echo "Spools of synthetic_steps.py's optimizer steps made by $([[ ${READ_GEN:-0} == 1 ]] &&
		echo "the writer without a job (tests/targets/spool_gen)" || echo "\`cirron-probe run\`"),"
	echo "about 1 KiB a step. Each command alone, its output to /dev/null, the spool in the page"
	echo "cache; wall and CPU (user + system) seconds and peak RSS (MiB) from /usr/bin/time,"
	echo "one run each. Floors: \`cat\` of every batch file, and reading and parsing every"
	echo "file with cJSON (bench/spool_parse.c). On this 2-core VM shared with other work,"
	echo "wall times vary with the load; CPU time and RSS less so."
	echo
	printf "| command |"
	for n in $STEPS_LIST; do printf " %s steps (%s files, %s MiB) |" "$n" \
		"$(for r in "${rows[@]}"; do read -r -a f <<<"$r"; [[ ${f[0]} == "$n" ]] && { echo "${f[1]}"; break; }; done)" \
		"$(for r in "${rows[@]}"; do read -r -a f <<<"$r"; [[ ${f[0]} == "$n" ]] && { echo "${f[2]}"; break; }; done)"; done
	echo
	printf "|---|"; for n in $STEPS_LIST; do printf -- "---|"; done; echo
	for pre in "" "old:"; do
		[[ -n $pre && -z ${OLD_PROBE:-} ]] && continue
		for l in "${labels[@]}"; do
			[[ -n $pre && $l == floor_* ]] && continue
			name=${l//_/ }
			[[ $l == ranks4 ]] && name="trace --ranks, 4 ranks of n/4 steps"
			[[ $l == trace_--ranks ]] && name="trace --ranks (one process: no ranks)"
			printf "| %s |" "${pre:+old }$name"
			for n in $STEPS_LIST; do
				w=$(value "$n" "$pre$l" 4)
				if [[ $w == - ]]; then printf " - |"; continue; fi
				printf " %s s, %s s CPU, %s MiB |" "$w" "$(value "$n" "$pre$l" 5)" "$(value "$n" "$pre$l" 6)"
			done
			echo
		done
	done
	echo
	echo "CPU time over the parse floor's, per command (linear when flat across the sizes):"
	echo
	printf "| command |"; for n in $STEPS_LIST; do printf " %s |" "$n"; done; echo
	printf "|---|"; for n in $STEPS_LIST; do printf -- "---|"; done; echo
	for l in "${labels[@]:2}"; do
		name=${l//_/ }
		[[ $l == ranks4 ]] && name="trace --ranks, 4 ranks"
		printf "| %s |" "$name"
		for n in $STEPS_LIST; do
			printf " %s |" "$(fmt '%.2f' "$(calc 'c/f' c="$(value "$n" "$l" 5)" f="$(value "$n" floor_parse 5)")")"
		done
		echo
	done
} > "$(section_file $NAME)"

last=${STEPS_LIST##* }
first=${STEPS_LIST%% *}
worst=0
for l in "${labels[@]:2}"; do
	worst=$(calc 'a > b ? a : b' a="$worst" b="$(value "$last" "$l" 6)")
done
grow=0
for l in "${labels[@]:2}"; do
	grow=$(calc 'a > b ? a : b' a="$grow" b="$(calc 'y-x' x="$(value "$first" "$l" 6)" y="$(value "$last" "$l" 6)")")
done
target $NAME "read commands: peak RSS flat from $first to $last steps" "grows by $grow MiB at most" \
	"$(verdict_le "$grow" 16 "MiB")"
target $NAME "read commands: every one under 256 MiB at $last steps" "$worst MiB at most" \
	"$(verdict_le "$worst" 256 "MiB")"
cat "$(section_file $NAME)"
