#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The TensorFlow tree's cost per step: Keras 3 model.fit on tensorflow-cpu
# (bench/tf_fit_steps.py, in the venv of tests/scripts/make-tf-venv.sh), side by side in
# interleaved rounds:
#   none            no observer
#   cirron-probe    `cirron-probe run` at the default level (spool sink)
# The median training step time of each run (Keras's callback clock, epochs after the first),
# the job's CPU time per step, the ratios to none (median and spread over rounds), and the
# uprobe hits per step the observer's health counted; then, in the same rounds, what one
# anchor's call costs (bench/tf_probe_cost.py: a trivial tf.function call, an eager next(),
# the fastest of many batches). Not in run.sh's default parts: run by hand.
#   ROUNDS=5 EPOCHS=4 BATCHES=200 WIDTH=512 BATCH=128 bench/tf_step_overhead.sh
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
EPOCHS=${EPOCHS:-4}
BATCHES=${BATCHES:-200}
WIDTH=${WIDTH:-512}
BATCH=${BATCH:-128}
NAME=tf_step_overhead
reset_results $NAME

VENV=$(tests/scripts/make-tf-venv.sh | tail -1)
TFPY=$VENV/bin/python
ARGS=(bench/tf_fit_steps.py --epochs "$EPOCHS" --batches "$BATCHES" --width "$WIDTH" --batch "$BATCH")
export TF_CPP_MIN_LOG_LEVEL=2

step_ms() { grep -oP '^STEP_MS \K[0-9.]+' "$1"; }
cpu_ms() { grep -oP '^CPU_MS \K[0-9.]+' "$1"; }
declare -A times cpus calls nexts
hits=()
for r in $(seq 1 "$ROUNDS"); do
	for mode in none cirron-probe; do
		out=$TMPB/$mode.$r.out
		case $mode in
		none) "$TFPY" "${ARGS[@]}" > "$out" 2>&1 ;;
		cirron-probe)
			rm -rf "$TMPB/spool.$r"
			"$PROBE" run --path "$TMPB/spool.$r" --cache-dir "$TMPB/cache" -- \
				"$TFPY" "${ARGS[@]}" > "$out" 2>&1
			hits+=("$(spool_py health "$TMPB/spool.$r" | awk -F= '$1 == "steady_hits_per_step" {print $2}')") ;;
		esac
		pc=$TMPB/$mode.$r.pc
		case $mode in
		none) "$TFPY" bench/tf_probe_cost.py > "$pc" 2>&1 ;;
		cirron-probe) "$PROBE" run --path "$TMPB/pcspool.$r" --cache-dir "$TMPB/cache" -- \
			"$TFPY" bench/tf_probe_cost.py > "$pc" 2>&1 ;;
		esac
		calls[$mode]+="$(grep -oP '^CALL_US \K[0-9.]+' "$pc") "
		nexts[$mode]+="$(grep -oP '^NEXT_US \K[0-9.]+' "$pc") "
		t=$(step_ms "$out") || die "$mode round $r: no STEP_MS ($(tail -3 "$out"))"
		times[$mode]+="$t "
		cpus[$mode]+="$(cpu_ms "$out") "
		log "round $r $mode: $t ms/step"
	done
done
ratios="" cratios=""
none=(${times[none]})
probe=(${times[cirron-probe]})
cnone=(${cpus[none]})
cprobe=(${cpus[cirron-probe]})
for i in "${!none[@]}"; do
	ratios+="$(calc 'p/n' p="${probe[$i]}" n="${none[$i]}") "
	cratios+="$(calc 'p/n' p="${cprobe[$i]}" n="${cnone[$i]}") "
done
{
	echo "## TensorFlow: the tree's cost per step (issue 45)"
	echo
	echo "bench/tf_step_overhead.sh, $(date -u +%Y-%m-%d): Keras 3.15.1 model.fit on tensorflow-cpu 2.21.0"
	echo "(pyenv's CPython 3.11.7), an MLP of two ${WIDTH}-wide layers, batch $BATCH, SGD, $BATCHES steps an"
	echo "epoch, $EPOCHS epochs (the first left out), one thread per op pool; $ROUNDS interleaved rounds."
	echo "Step time: a Keras callback's clock from on_train_batch_begin to on_train_batch_end; CPU:"
	echo "the process's CPU time (all threads, user and system) per step over the same epochs."
	echo "Load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine)."
	echo
	echo "| mode | step time, median of runs (ms) | ratio to none | CPU per step (ms) | CPU ratio to none | uprobe hits per step (steady state) |"
	echo "|---|---|---|---|---|---|"
	echo "| none | $(summary '%.3f' "${times[none]}") | 1 | $(summary '%.3f' "${cpus[none]}") | 1 | 0 |"
	echo "| cirron-probe run (default level) | $(summary '%.3f' "${times[cirron-probe]}") | $(summary '%.3f' "$ratios") | $(summary '%.3f' "${cpus[cirron-probe]}") | $(summary '%.3f' "$cratios") | $(summary '%.1f' "${hits[*]}") |"
	echo
	echo "One anchor's call (bench/tf_probe_cost.py, the fastest of 15 batches of 2000 calls, us):"
	echo
	echo "| mode | a trivial tf.function call (TFE_Py_ExecuteCancelable entry and exit) | an eager next() (IteratorResource::GetNext entry and exit) |"
	echo "|---|---|---|"
	echo "| none | $(summary '%.1f' "${calls[none]}") | $(summary '%.1f' "${nexts[none]}") |"
	echo "| cirron-probe run | $(summary '%.1f' "${calls[cirron-probe]}") | $(summary '%.1f' "${nexts[cirron-probe]}") |"
} | tee "$(section_file $NAME)"
