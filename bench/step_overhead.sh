#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Step-time overhead on the bundled training workload (bench/train_cnn.py), on the host
# (Python 3.11 + torch 1.13) and in the Debian trixie root (Python 3.13 + torch 2.6, entered
# with chroot, the observers outside), side by side in interleaved rounds:
#   none                   no observer
#   cirron-probe:LEVEL     `cirron-probe run --python-frames LEVEL` (spool sink, the default),
#                          one mode per word of LEVELS
#   bpftrace:LEVEL         bpftrace counting the same uprobes cirron-probe attaches at LEVEL
#                          (list from `cirron-probe doctor`), one per word of BPFTRACE_LEVELS
#   torch.profiler         in process, default settings, active over every step
#   sys.setprofile         in process, a Python hook counting calls
# Also the uprobe hits per step of each level (from the spool's health), and how the overhead
# compares with hits per step x the cost of a hit (bench/hit_cost.sh's numbers).
#   WORKLOADS="host trixie" LEVELS="off sampled always" ROUNDS=5 STEPS=200 BATCH=128 bench/step_overhead.sh
source "$(dirname "$0")/lib.sh"
WORKLOADS=${WORKLOADS:-"host trixie"}
LEVELS=${LEVELS:-"off sampled always"}		# one mode per word
DEFAULT_LEVEL=${DEFAULT_LEVEL:-off}		# the targets: < 1% at the default level,
CHEAPEST_LEVEL=${CHEAPEST_LEVEL:-off}		# hits x cost + 5% at the cheapest
BPFTRACE_LEVELS=${BPFTRACE_LEVELS-"off always"}	# empty: no bpftrace modes
ROUNDS=${ROUNDS:-5}
STEPS=${STEPS:-200}
WARMUP=${WARMUP:-30}
BATCH=${BATCH:-128}
NAME=step_overhead
reset_results $NAME
export PROBE_LIST_CACHE=$OUTDIR/elf-syms

[[ -n $BPFTRACE_LEVELS ]] && need_pkg bpftrace bpftrace
[[ -s $RES/hit_cost.env ]] || log "no $RES/hit_cost.env: run bench/hit_cost.sh first for the hits x cost columns"

MODES=(none)
for l in $LEVELS; do MODES+=("cirron-probe:$l"); done
for l in $BPFTRACE_LEVELS; do MODES+=("bpftrace:$l"); done
MODES+=(torch.profiler sys.setprofile)

# workload WL: the command line of the training script
workload() {
	local args=(--steps "$STEPS" --warmup "$WARMUP" --batch "$BATCH")
	case $1 in
	host) echo "$PY bench/train_cnn.py ${args[*]}" ;;
	trixie) echo "$CHROOT $TRIXIE_ROOT python3 $TRIXIE_DIR/train_cnn.py ${args[*]}" ;;
	*) die "unknown workload $1" ;;
	esac
}
# interp WL: the command line that starts the workload's interpreter (without a script)
interp() { [[ $1 == host ]] && echo "$PY" || echo "$CHROOT $TRIXIE_ROOT python3"; }

# probes_of WL LEVEL: doctor on a live `import torch` process of the workload -> the probe
# list and a bpftrace program counting the same probes
probes_of() {
	local wl=$1 level=$2 pid out=$TMPB/torch-idle.$1.out
	$(interp "$wl") -c 'import torch, time; print("ready", flush=True); time.sleep(600)' > "$out" 2>&1 &
	pid=$!
	wait_for "$out" ready 120
	"$PROBE" doctor -p "$pid" --python-frames "$level" > "$TMPB/doctor.$wl.$level" || true
	kill "$pid"; wait "$pid" 2>/dev/null || true
	"$PY" bench/probe_list.py list < "$TMPB/doctor.$wl.$level" > "$TMPB/probes.$wl.$level"
	"$PY" bench/probe_list.py bpftrace < "$TMPB/doctor.$wl.$level" > "$TMPB/bt.$wl.$level.bt"
}

step_ms() { awk '/^median_step_ms/ {v=$2} END {print v}'; }

# run_mode WL MODE ROUND: prints the median step (ms); cirron-probe modes leave their spool's
# health in $TMPB/health.WL.MODE.ROUND and per-probe hits in $TMPB/hits.WL.LEVEL
run_mode() {
	local wl=$1 mode=$2 r=$3 cmd spool v
	cmd=$(workload "$wl")
	case $mode in
	none) v=$($cmd 2>"$TMPB/err" | step_ms) ;;
	torch.profiler) v=$($cmd --profiler 2>"$TMPB/err" | step_ms) ;;
	sys.setprofile) v=$($cmd --setprofile 2>"$TMPB/err" | step_ms) ;;
	cirron-probe:*)
		spool=$TMPB/spool.$wl.$r
		rm -rf "$spool"
		v=$("$PROBE" run --path "$spool" --python-frames "${mode#*:}" -- $cmd 2>"$TMPB/err" | step_ms)
		spool_py health "$spool" > "$TMPB/health.$wl.$mode.$r" || true
		spool_py probes "$spool" > "$TMPB/hits.$wl.${mode#*:}" || true
		rm -rf "$spool" ;;
	bpftrace:*)
		v=$(bpftrace --unsafe "$TMPB/bt.$wl.${mode#*:}.bt" -c "$cmd" 2>"$TMPB/err" | step_ms) ;;
	esac
	[[ -n $v ]] || { log "$wl $mode round $r: no step time; stderr:"; tail -5 "$TMPB/err" >&2; v=nan; }
	echo "$v"
}

hget() { awk -F= -v k="$2" '$1 == k {print $2}' "$1" 2>/dev/null; }	# hget FILE KEY

declare -A T
for wl in $WORKLOADS; do
	[[ $wl == trixie ]] && trixie_enter
	for l in $BPFTRACE_LEVELS $LEVELS; do
		[[ -s $TMPB/probes.$wl.$l ]] || probes_of "$wl" "$l"
	done
done
n=${#MODES[@]}
for r in $(seq "$ROUNDS"); do
	for wl in $WORKLOADS; do
		for ((i = 0; i < n; i++)); do	# each round starts one mode later
			m=${MODES[(i + r - 1) % n]}
			T[$wl|$m]+="$(run_mode "$wl" "$m" "$r") "
		done
	done
	log "step_overhead: round $r/$ROUNDS"
done

# per-round ratios of MODE to none, one per line
ratios() {
	local a b i
	read -ra a <<<"${T[$1|$2]}"
	read -ra b <<<"${T[$1|none]}"
	for i in "${!a[@]}"; do calc 'x/y' x="${a[i]}" y="${b[i]}"; done
}

{
	echo "## Step-time overhead"
	echo
	echo "bench/train_cnn.py: a small CNN (2 conv + 2 linear), DataLoader over a TensorDataset,"
	echo "batch $BATCH, SGD, one thread; median step time of $STEPS steps after $WARMUP warm-up steps,"
	echo "$ROUNDS interleaved rounds (each round starts one mode later). Ratio: a round's step time"
	echo "over the same round's no-observer step time; median and spread (min to max) over rounds. Every mode"
	echo "runs with $BENCH_MALLOC_ENV"
	echo "(glibc otherwise returns tensor buffers to the kernel and steps turn bimodal)."
	echo "cirron-probe runs with its default sink (spool, flushed every second) into /tmp. Hits per"
	echo "step: health.uprobe_hits_per_step as the tool reports it (since the process started: import"
	echo "included), and steady (between the spool batch that counted a tenth of the steps and the"
	echo "last before the final one)."
	echo "bpftrace attaches the uprobes (and uretprobes) that \`cirron-probe doctor\` lists at that"
	echo "level, each counting into a map, with \`bpftrace --unsafe -c\`."
	for wl in $WORKLOADS; do
		ver=$($(interp "$wl") -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)' 2>/dev/null)
		base=$(echo "${T[$wl|none]}" | lines | median)
		echo
		echo "### $wl: Python ${ver% *}, torch ${ver#* }"
		echo
		echo "| observer | median step (ms) | ratio to none: median (min to max) | rounds (ms) | hits/step: tool, steady | ring-buffer drops |"
		echo "|---|---|---|---|---|---|"
		for m in "${MODES[@]}"; do
			med=$(echo "${T[$wl|$m]}" | lines | median)
			if [[ $m == none ]]; then
				rat="1.000"
			else
				rat=$(summary %.3f "$(ratios "$wl" "$m" | tr '\n' ' ')")
			fi
			hits=- drops=-
			if [[ $m == cirron-probe:* ]]; then
				hits="$(for f in "$TMPB"/health."$wl"."$m".*; do hget "$f" uprobe_hits_per_step; done | median | xargs printf '%.1f'), $(for f in "$TMPB"/health."$wl"."$m".*; do hget "$f" steady_hits_per_step; done | median | xargs printf '%.1f')"
				drops=$(for f in "$TMPB"/health."$wl"."$m".*; do hget "$f" ringbuf_drops; done | awk '{s+=$1} END {print s+0}')
			fi
			echo "| $m | $med | $rat | ${T[$wl|$m]}| $hits | $drops |"
		done

		if [[ -s $RES/hit_cost.env ]]; then
			set -a; source "$RES/hit_cost.env"; set +a
			echo
			echo "Hits per step x cost per hit ($wl): each probe's steady hits per step (last round) times the"
			echo "cost of one hit at its entry instruction (push/branch: the \`push %rbp\` figure; nop5: the"
			echo "nop figure; a return probe adds the measured return cost; xol: single-stepped, dearer than"
			echo "any figure here, so the prediction is a lower bound)."
			echo
			echo "| level | probe group | symbol | entry instruction | entries/step | returns/step | predicted us/step |"
			echo "|---|---|---|---|---|---|---|"
			declare -A PRED=()
			for l in $LEVELS; do
				[[ -s $TMPB/hits.$wl.$l ]] || continue
				"$PY" bench/probe_list.py cost "$TMPB/probes.$wl.$l" "$TMPB/hits.$wl.$l" > "$TMPB/cost.$wl.$l"
				grep '^|' "$TMPB/cost.$wl.$l" | sed "s/^|/| $l |/"
				PRED[$l]=$(hget "$TMPB/cost.$wl.$l" total_us)
			done
			echo
			echo "| level | steady hits/step | predicted us/step | measured us/step (median step - none) | measured / predicted | predicted ratio + 0.05 | measured ratio |"
			echo "|---|---|---|---|---|---|---|"
			for l in $LEVELS; do
				[[ -n ${PRED[$l]:-} ]] || continue
				m=cirron-probe:$l
				med=$(echo "${T[$wl|$m]}" | lines | median)
				meas=$(calc '(a-b)*1000' a="$med" b="$base")
				hs=$(for f in "$TMPB"/health."$wl"."$m".*; do hget "$f" steady_hits_per_step; done | median)
				lim=$(calc '1 + p/1000/b + 0.05' p="${PRED[$l]}" b="$base")
				mr=$(ratios "$wl" "$m" | median)
				echo "| $l | $(fmt '%.1f' "$hs") | ${PRED[$l]} | $(fmt '%.1f' "$meas") | $(fmt '%.2f' "$(calc 'p > 0 ? m/p : 0' m="$meas" p="${PRED[$l]}")") | $(fmt '%.3f' "$lim") | $(fmt '%.3f' "$mr") |"
				if [[ $l == "$CHEAPEST_LEVEL" ]]; then
					target $NAME "$wl: cheapest level ($l) <= hits/step x cost/hit + 5% (ratio <= $(fmt '%.3f' "$lim"))" \
						"$(fmt '%.3f' "$mr")" "$(verdict_le "$mr" "$lim" "(ratio)")"
				fi
			done
		fi
		# targets
		d=$(ratios "$wl" "cirron-probe:$DEFAULT_LEVEL" | median)
		over=$(calc '(d-1)*100' d="$d")
		note=$(awk -v b="$base" 'BEGIN {if (b < 10) printf " (steps of %.1f ms here: under 10 ms)", b}')
		target $NAME "$wl: overhead at the default level ($DEFAULT_LEVEL) < 1% of step time, steps >= 10 ms$note" \
			"$(fmt '%.2f' "$over")% (median ratio $(fmt '%.3f' "$d"))" "$(verdict_le "$over" 1 "percentage points")"
		for l in $LEVELS; do
			c=$(ratios "$wl" "cirron-probe:$l" | median)
			for alt in torch.profiler sys.setprofile; do
				ar=$(ratios "$wl" "$alt" | median)
				target $NAME "$wl: cirron-probe $l overhead lower than $alt" \
					"$(fmt '%.3f' "$c") vs $(fmt '%.3f' "$ar")" \
					"$(awk -v c="$c" -v a="$ar" 'BEGIN {if (c < a) print "met"; else printf "missed by %.3f (ratio)\n", c - a}')"
			done
		done
	done
} > "$(section_file $NAME)"
cat "$(section_file $NAME)"
