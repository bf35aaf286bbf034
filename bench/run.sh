#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of one uprobe hit on this machine, measured side by side: the same CUDA runtime call
# in a tight loop, bare and under `cirron-probe run`, rounds interleaved. Writes RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200000}
ROUNDS=${ROUNDS:-5}
OUT=bench/RESULTS.md
BIN=.output/bench/cuda_loop
mkdir -p .output/bench
cc -O2 -I/usr/local/cuda/include bench/cuda_loop.c -o $BIN -L/usr/local/cuda/lib64 -lcudart \
	-Wl,-rpath,/usr/local/cuda/lib64

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ns_per_call() { "$@" | awk '{print $2}'; }

declare -A bare probed
for r in $(seq "$ROUNDS"); do
	for api in launch sync; do
		bare[$api]+="$(ns_per_call $BIN $api "$N") "
		probed[$api]+="$(ns_per_call ./cirron-probe run --output none -- $BIN $api "$N") "
	done
done
{
	echo "# cirron-probe benchmarks"
	echo
	echo "$(date -u +%Y-%m-%d) on $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)."
	echo "Binary: $(stat -c %s cirron-probe) bytes (stripped: $(strip -o /tmp/cirron-probe.stripped cirron-probe && stat -c %s /tmp/cirron-probe.stripped))."
	echo
	echo "## Cost of one uprobe hit (CUDA runtime call in a loop, N=$N, median of $ROUNDS interleaved rounds)"
	echo
	echo "| call | probes per call | bare ns/call | under cirron-probe ns/call | cost per call |"
	echo "|---|---|---|---|---|"
	for api in launch sync; do
		b=$(echo ${bare[$api]} | tr ' ' '\n' | median)
		p=$(echo ${probed[$api]} | tr ' ' '\n' | median)
		hits=$([[ $api == launch ]] && echo "1 entry (cudaLaunchKernel)" || echo "1 entry + 1 return (cudaStreamSynchronize)")
		echo "| $api | $hits | $b | $p | $(awk -v b="$b" -v p="$p" 'BEGIN {printf "%.2f us", (p-b)/1000}') |"
	done
	echo
	echo "Both symbols begin with \`push %rbp\`, which the kernel emulates (no single-step)."
} > "$OUT"

# Step-time overhead on a training workload, side by side with in-process alternatives.
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456
STEPS=${STEPS:-300}
CNN=(/usr/bin/python3 bench/train_cnn.py --steps "$STEPS")
step_ms() { "$@" 2>/dev/null | awk '/^median_step_ms/ {print $2}'; }
declare -A t
for r in $(seq "$ROUNDS"); do
	t[none]+="$(step_ms "${CNN[@]}") "
	t[cirron-probe]+="$(step_ms ./cirron-probe run --output none -- "${CNN[@]}") "
	t[cirron-probe-pyframes]+="$(step_ms ./cirron-probe run --output none --python-frames always -- "${CNN[@]}") "
	t[torch.profiler]+="$(step_ms "${CNN[@]}" --profiler) "
	t[sys.setprofile]+="$(step_ms "${CNN[@]}" --setprofile) "
done
hits_per_step() {
	rm -rf /tmp/cirron-bench
	./cirron-probe run --path /tmp/cirron-bench "$@" -- "${CNN[@]}" >/dev/null 2>&1
	/usr/bin/python3 -c 'import json,glob
f=sorted(glob.glob("/tmp/cirron-bench/spool/*.json"))[-1]; h=json.load(open(f))["health"]
print("%.1f" % h.get("uprobe_hits_per_step", 0))'
	rm -rf /tmp/cirron-bench
}
hits=$(hits_per_step)
hits_py=$(hits_per_step --python-frames always)
base=$(echo ${t[none]} | tr ' ' '\n' | median)
{
	echo
	echo "## Step-time overhead (bench/train_cnn.py: small CNN, batch 64, SGD, one thread; median of $ROUNDS interleaved rounds of $STEPS steps)"
	echo
	echo "Run with MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456"
	echo "(glibc otherwise returns tensor buffers to the kernel and steps turn bimodal)."
	echo "uprobe hits per step (health.uprobe_hits_per_step, including start-up): cirron-probe"
	echo "$hits (--python-frames off, the default), $hits_py (--python-frames always)."
	echo
	echo "| observer | median step (ms) | ratio to none | rounds (ms) |"
	echo "|---|---|---|---|"
	for m in none cirron-probe cirron-probe-pyframes torch.profiler sys.setprofile; do
		med=$(echo ${t[$m]} | tr ' ' '\n' | median)
		echo "| $m | $med | $(awk -v a="$med" -v b="$base" 'BEGIN {printf "%.3f", a/b}') | ${t[$m]}|"
	done
} >> "$OUT"
cat "$OUT"
