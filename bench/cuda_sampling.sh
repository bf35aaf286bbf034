#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --cuda-calls levels on a launch-bound client (tests/targets/cuda_steps.c: N launches, one
# cudaMemcpyAsync and one cudaStreamSynchronize per step, real libcudart, no GPU): launch rate
# under `cirron-probe run` as a ratio to the bare rate, the launch count error (estimate or
# exact count vs the client's own count) and uprobe hits per step, per level and N; rounds
# interleaved. Then the probed functions' first instructions (emulated or single-stepped).
# LAUNCH_NS: busy CPU time the client adds after each launch (0: a failing launch alone, ~30
# ns; 2000: about what a launch costs the host on a GPU), so that the ratio is also measured
# at a realistic step length.
#   PER_STEP="100 1000 5000" LAUNCH_NS="0 2000" LEVELS="sampled always off" DUR=6 ROUNDS=3 bench/cuda_sampling.sh
source "$(dirname "$0")/lib.sh"
PER_STEP=${PER_STEP:-"100 1000 5000"}
LAUNCH_NS=${LAUNCH_NS:-"0 2000"}
LEVELS=${LEVELS:-"sampled always off"}
DUR=${DUR:-6}
ROUNDS=${ROUNDS:-3}
NAME=cuda_sampling
BIN=$PWD/.output/tests/cuda_steps
reset_results $NAME
[[ -x $BIN ]] || make -s "$BIN" || die "cannot build $BIN"
mkdir -p "$TMPB"
on_exit "rm -rf $TMPB"

# one_run N@LAUNCH_NS LEVEL: "rate launches steps hits est" (LEVEL bare: no observer)
one_run() {
	local n=${1%@*} ns=${1#*@} level=$2 spool=$TMPB/spool.$1.$2 out
	rm -rf "$spool"
	if [[ $level == bare ]]; then
		out=$(timeout -s USR1 "$DUR" "$BIN" "$n" "$ns" | grep '^steps=')
		echo "$out" | sed -E 's/steps=([0-9]+) launches=([0-9]+) rate=([0-9.]+)/\3 \2 \1 0 0/'
		return
	fi
	out=$("$PROBE" run --path "$spool" --cuda-calls "$level" -- timeout -s USR1 "$DUR" "$BIN" "$n" \
		"$ns" 2>"$TMPB/err" | grep '^steps=')
	read -r steps launches rate < <(echo "$out" | sed -E 's/steps=([0-9]+) launches=([0-9]+) rate=([0-9.]+)/\1 \2 \3/')
	read -r hits est < <("$PY" - "$spool" <<'PYEOF'
import glob, json, sys
best = None
for f in glob.glob(sys.argv[1] + "/spool/*.json"):
    b = json.load(open(f))
    if b.get("health") and (best is None or b["seq"] > best["seq"]):
        best = b
root = {}
for b in [best] if best else []:
    for s in b.get("spans", []):
        if s["parent_id"] is None:
            root = s["attrs"]
est = root.get("cuda.launches_est", root.get("cuda.launches", 0))
print(best["health"]["uprobe_hits"] if best else 0, est)
PYEOF
)
	echo "$rate $launches $steps $hits $est"
}

declare -A R
CASES=$(for n in $PER_STEP; do for ns in $LAUNCH_NS; do echo "$n@$ns"; done; done)
for r in $(seq "$ROUNDS"); do
	for n in $CASES; do
		for l in bare $LEVELS; do
			R[$n,$l]+="$(one_run "$n" "$l")"$'\n'
		done
	done
	log "$NAME: round $r/$ROUNDS"
done

col() { echo "${R[$1,$2]}" | awk -v c="$3" 'NF {print $c}'; }
{
	echo "## CUDA calls: sampled windows vs every call"
	echo
	echo "tests/targets/cuda_steps N (N cudaLaunchKernel + 1 cudaMemcpyAsync + 1 cudaStreamSynchronize"
	echo "per step, real libcudart.so.13, no GPU: each call fails fast, so the loop is as launch-bound"
	echo "as a client can be) for ${DUR}s, bare and under \`cirron-probe run --cuda-calls LEVEL\`; $ROUNDS"
	echo "interleaved rounds, medians (min to max). Rate: the client's own launches per second over its"
	echo "run. Count error: cuda.launches_est (sampled) or cuda.launches (always) against the launches the"
	echo "client counted. Hits per step: health's uprobe_hits / steps. Launch cost: busy CPU time the"
	echo "client adds after each launch (0: the failing launch alone; 2000 ns: about what a launch"
	echo "costs the host on a GPU)."
	echo
	echo "| launches/step | launch cost (ns) | level | launches/s (M) | rate ratio to bare | count error | uprobe hits/step |"
	echo "|---|---|---|---|---|---|---|"
	for n in $CASES; do
		bare=$(col "$n" bare 1 | median)
		echo "| ${n%@*} | ${n#*@} | bare | $(fmt '%.3f' "$(calc 'b/1e6' b="$bare")") | 1 | - | 0 |"
		for l in $LEVELS; do
			ratios=$(paste <(col "$n" "$l" 1) <(col "$n" bare 1) | awk '{printf "%.3f\n", $1/$2}')
			errs=$(col "$n" "$l" 0 | awk -v l="$l" 'NF {if (l == "off") print "n/a"; else printf "%.1f%%\n", ($5-$2)*100/$2}')
			hps=$(col "$n" "$l" 0 | awk 'NF && $3 {printf "%.1f\n", $4/$3}')
			rm=$(echo "$ratios" | median)
			echo "| ${n%@*} | ${n#*@} | $l | $(fmt '%.3f' "$(calc 'b/1e6' b="$(col "$n" "$l" 1 | median)")") | $(fmt '%.3f' "$rm") ($(echo "$ratios" | minmax)) | $(echo "$errs" | tr '\n' ' ') | $(echo "$hps" | median) |"
			if [[ $l == sampled && ${n%@*} == 1000 ]]; then
				target $NAME "launch rate ratio >= 0.95 at the default level, 1000 launches/step, launches of ${n#*@} ns" \
					"$(fmt '%.3f' "$rm")" "$(awk -v m="$rm" 'BEGIN {print (m >= 0.95) ? "met" : "missed"}')"
				e=$(col "$n" "$l" 0 | awk 'NF {e = ($5-$2)*100/$2; print (e < 0) ? -e : e}' | sort -g | tail -1)
				target $NAME "launch estimate within 10% at the default level, 1000 launches/step, launches of ${n#*@} ns (worst round)" \
					"$(fmt '%.1f' "$e")%" "$(awk -v e="$e" 'BEGIN {print (e <= 10) ? "met" : "missed"}')"
			fi
		done
	done
	echo
	echo "The default level links the per-call probes in windows (one a second here: no torch steps),"
	echo "each starting and ending on a cudaStreamSynchronize, which stays probed (entry and return:"
	echo "2 hits per step at every level). Off counts no launches (n/a)."
	echo
	echo "### Per-probe cost: the first instruction of each probed function"
	echo
	echo "Where the uprobe sits (after an \`endbr64\`, which cirron-probe skips) decides what a hit costs:"
	echo "the kernel emulates \`push\` and \`nop\` (and optimizes 5-byte nops), and single-steps anything"
	echo "else out of line (~2x the cost; see FACTS.md). The hit costs themselves are in the hit cost section."
	echo
	echo "| library | probed function | first instruction | kernel | level that links it |"
	echo "|---|---|---|---|---|"
	for lib in "$(readlink -f $CUDART/libcudart.so.13)" "$PWD/.output/tests/standin/libcuda.so.1"; do
		[[ -f $lib ]] || continue
		json=$([[ $lib == *libcudart* ]] && echo probes/cudart.json || echo probes/cuda_driver.json)
		"$PY" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["probes"]:
    print(p["symbol"], p["action"])' "$json" | while read -r sym action; do
			a=$(nm -D --defined-only "$lib" | awk -v s="$sym" '{n=$3; sub(/@.*/, "", n)} n == s {print $1; exit}' || true)
			[[ -n $a ]] || continue
			insn=$(objdump -d --start-address=0x$a --stop-address=$((0x$a + 16)) "$lib" |
				awk -F'\t' '/^ *[0-9a-f]+:\t/ {gsub(/ +/, " ", $3); print $3}' | grep -v '^endbr64' | head -1 || true)
			case $insn in
			push*|nop*) how=emulated ;;
			*) how="single-stepped" ;;
			esac
			case $action in
			cuda_sync|cuda_device_count) when="all (exact)" ;;
			*) when="always; sampled: in windows" ;;
			esac
			echo "| $(basename "$lib") | $sym | \`$insn\` | $how | $when |"
		done
	done
	echo
	echo "libcuda.so.1 here is the tests' stand-in (no NVIDIA driver on this VM): its prologues are"
	echo "gcc -O0's, not the real driver's."
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
