#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# All the benchmarks, then bench/RESULTS.md: the machine and versions, a table of the targets
# (each result next to it), and each script's section. About 15-20 minutes on a 2-core VM.
#   bench/run.sh                 everything, full sizes
#   QUICK=1 bench/run.sh         tiny sizes: checks that every script works end to end (the
#                                numbers mean nothing; RESULTS.md goes to .output/bench)
#   PARTS="hit_cost step_overhead" bench/run.sh   only these (others keep their last section)
# Each part runs on its own too: bench/<part>.sh, sizes in its header.
source "$(dirname "$0")/lib.sh"
PARTS=${PARTS:-"hit_cost step_overhead example_overhead throughput attach_time detach_time memory watch_cost kernel_fallbacks mark_cost export_cost read_cost watch_long_life exit_cost syscall_cost fleet"}
OUT=bench/RESULTS.md
if [[ ${QUICK:-0} == 1 ]]; then
	export N=20000 ROUNDS=1 STEPS=20 WARMUP=5 RATES="100000 0" SECONDS_EACH=1 MEM_STEPS=5000 \
		EPOCHS=2 BATCHES=200 EXPORT_STEPS=2000 READ_STEPS="2000 20000" \
		TARGETS="cuda torch" DUR=0.5 LIFE_JOBS=40 LIFE_TORCH=2
	OUT=$OUTDIR/RESULTS.quick.md
	export BENCH_RES=$OUTDIR/results.quick
	RES=$BENCH_RES
	mkdir -p "$RES"
fi

declare -A took
for p in $PARTS; do
	[[ -x bench/$p.sh ]] || die "no bench/$p.sh"
	log "== $p"
	t0=$(date +%s)
	bench/"$p".sh > /dev/null
	took[$p]=$(($(date +%s) - t0))
	log "== $p: ${took[$p]} s"
done

pkgver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
host_ver=$($PY -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)' 2>/dev/null || echo "? ?")
ALL="hit_cost step_overhead example_overhead throughput attach_time detach_time memory watch_cost watch_long_life read_cost fleet"
{
	echo "# cirron-probe benchmarks"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), \`make bench\` (bench/run.sh$([[ ${QUICK:-0} == 1 ]] && echo ", QUICK=1: tiny sizes, numbers meaningless"))."
	echo
	echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs),"
	echo "  $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) memory, $(systemd-detect-virt 2>/dev/null || echo "virtualization unknown"); kernel $(uname -r)."
	echo "  Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "- cirron-probe $("$PROBE" --version 2>/dev/null | awk '{print $NF}') at $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- user bpf probes 2>/dev/null || echo " (user/, bpf/ or probes/ modified)"),"
	echo "  $(stat -c %s "$PROBE") bytes; libbpf $(pkgver libbpf-dev) (linked statically), bpftool $(pkgver bpftool), clang $(pkgver clang)."
	echo "- Host workload: Python ${host_ver% *}, torch ${host_ver#* } (Debian bookworm)."
	if [[ -f $TRIXIE_ROOT/.cirron-trixie-versions ]]; then
		echo "- Trixie workload ($TRIXIE_ROOT, chroot): $(tr '\n' ' ' < "$TRIXIE_ROOT/.cirron-trixie-versions")."
	fi
	echo "- bpftrace $(pkgver bpftrace); CUDA runtime $(readlink -f $CUDART/libcudart.so.13 2>/dev/null | xargs -r basename)."
	echo "- Time per part (s): $(for p in $PARTS; do printf '%s %s; ' "$p" "${took[$p]}"; done)"
	echo
	echo "## Targets"
	echo
	echo "| target | result | verdict |"
	echo "|---|---|---|"
	for p in $ALL; do
		[[ -f $RES/$p.targets ]] && awk -F'|' '{printf "| %s | %s | %s |\n", $1, $2, $3}' "$RES/$p.targets"
	done
	for p in $ALL; do
		[[ -f $RES/$p.md ]] || continue
		echo
		cat "$RES/$p.md"
	done
} > "$OUT"
log "wrote $OUT"
cat "$OUT"
