# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2034
# Shared helpers of the bench/*.sh scripts. Source it; it cds to the repository root.
#
# Each script writes its section of RESULTS.md to $RES/<name>.md (and prints it), and the
# targets it checks to $RES/<name>.targets, one "target|result|verdict" line each; run.sh
# puts them together.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY=${PY:-/usr/bin/python3}		# Debian's python3 + python3-torch (host workload)
PROBE=${PROBE:-$PWD/cirron-probe}
OUTDIR=$PWD/.output/bench
RES=${BENCH_RES:-$OUTDIR/results}	# sections and targets of the last run of each script
TMPB=${TMPB:-/tmp/cirron-bench.$$}	# spools, caches and logs of one script run
TRIXIE_ROOT=${CIRRON_TRIXIE_ROOT:-/var/cache/cirron-probe/trixie-root}
CHROOT=$(command -v chroot)	# a full path: bpftrace -c will not search PATH for it
CUDART=/usr/local/cuda/lib64
mkdir -p "$OUTDIR" "$RES" "$TMPB"

# Glibc otherwise hands large tensor buffers back to the kernel after every step and takes
# page faults again on the next: step times turn bimodal. Every mode runs with these.
BENCH_MALLOC_ENV="MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456"
export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456

_cleanups=()
on_exit() { _cleanups+=("$1"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[i]}" || true; done
	[[ ${KEEP_TMP:-0} == 1 ]] || rm -rf "$TMPB"
}
trap _run_cleanups EXIT
trap 'exit 130' INT TERM

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "needs root (BPF, chroot, drop_caches)"
[[ -x $PROBE ]] || die "no $PROBE: run 'make cirron-probe' first"

# ---- numbers (one value per line on stdin) ----
median() { sort -g | awk '{a[NR]=$1} END {if (!NR) {print "nan"; exit} print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minmax() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {if (!NR) print "nan"; else printf "%s-%s\n", lo, hi}'; }
# calc EXPR [var=value ...]: awk arithmetic, e.g. calc 'a/b' a=1 b=3
calc() {
	local e=$1; shift
	local args=() kv
	for kv in "$@"; do args+=(-v "$kv"); done
	awk "${args[@]}" "BEGIN {print ($e)}"
}
fmt() { awk -v v="$2" "BEGIN {printf \"$1\", v}"; }	# fmt '%.2f' 3.14159
lines() { tr ' ' '\n' | grep -v '^$' || true; }	# "a b c" -> one per line
# summary FMT "v1 v2 ...": "median (min-max)", each printed with FMT
summary() {
	local med lo hi
	med=$(echo "$2" | lines | median)
	lo=$(echo "$2" | lines | sort -g | head -1)
	hi=$(echo "$2" | lines | sort -g | tail -1)
	printf "$1 ($1 to $1)\n" "$med" "${lo:-nan}" "${hi:-nan}"
}
now_ns() { date +%s%N; }

# ---- results ----
# section NAME: start $RES/NAME.md (stdout of the block that follows goes there)
section_file() { echo "$RES/$1.md"; }
# target NAME "what" "measured" "verdict": one row of the targets table
target() { printf '%s|%s|%s\n' "$2" "$3" "$4" >> "$RES/$1.targets"; }
reset_results() { rm -f "$RES/$1.md" "$RES/$1.targets"; }
# verdict_le MEASURED LIMIT UNIT: "met" or "missed by X UNIT" (lower is better)
verdict_le() {
	awk -v m="$1" -v l="$2" -v u="$3" 'BEGIN {
		if (m == "" || m == "nan") print "not measured";
		else if (m + 0 <= l + 0) print "met";
		else printf "missed by %.3g %s\n", m - l, u }'
}

# ---- spool read-back (the newest batch of the session with the most steps / events) ----
spool_py() { "$PY" "$PWD/bench/spool_info.py" "$@"; }

# ---- packages only the benchmarks need ----
need_pkg() {	# need_pkg CMD PACKAGE
	command -v "$1" >/dev/null && return 0
	log "installing $2 (only the benchmarks need it)"
	apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "$2" >/dev/null ||
		die "cannot install $2"
}

# ---- the Debian trixie root (Python 3.13 + torch 2.6) ----
# trixie_enter: build the root if missing, bind-mount /proc into it (unmounted on exit if we
# mounted it), copy the bench workloads into $TRIXIE_ROOT/tmp/cirron-bench.
TRIXIE_DIR=/tmp/cirron-bench	# as seen inside the root
trixie_enter() {
	tests/scripts/make-trixie-root.sh >/dev/null || die "no trixie root"
	if ! mountpoint -q "$TRIXIE_ROOT/proc"; then
		mount --bind /proc "$TRIXIE_ROOT/proc"
		on_exit "umount -l '$TRIXIE_ROOT/proc'"
	fi
	mkdir -p "$TRIXIE_ROOT$TRIXIE_DIR"
	cp bench/train_cnn.py bench/synthetic_steps.py "$TRIXIE_ROOT$TRIXIE_DIR/"
}

# ---- builds ----
build_bench_bins() {
	local cuda="-I$CUDART/../include"
	[[ -e $CUDART/libcudart.so || -e $CUDART/libcudart.so.13 ]] || die "no CUDA runtime in $CUDART"
	cc -O2 -fPIC -shared -Wl,-soname,libcudart_nop.so bench/nop_cudart.c -o "$OUTDIR/libcudart_nop.so"
	cc -O2 $cuda bench/cuda_loop.c -o "$OUTDIR/cuda_loop" -L$CUDART -lcudart -Wl,-rpath,$CUDART
	cc -O2 $cuda bench/cuda_loop.c -o "$OUTDIR/cuda_loop_nop" "$OUTDIR/libcudart_nop.so" \
		-Wl,-rpath,"$OUTDIR"
	cc -O2 -pthread $cuda bench/launch_storm.c -o "$OUTDIR/launch_storm" \
		"$OUTDIR/libcudart_nop.so" -Wl,-rpath,"$OUTDIR"
}

# wait_for FILE PATTERN [SECONDS]: until a line matching PATTERN is in FILE
wait_for() {
	local i n=$(( ${3:-60} * 20 ))
	for ((i = 0; i < n; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	die "timed out waiting for '$2' in $1"
}

# start_target T OUTFILE: a target of the attach benchmarks (cuda: a CUDA launch loop; torch:
# the host's synthetic steps; torch-trixie: the same in the trixie root, after trixie_enter),
# its pid on stdout once it is ready
CUDA_CALLS=.output/tests/cuda_calls
start_target() {
	local pid
	case $1 in
	cuda) "$CUDA_CALLS" --loop > "$2" 2>&1 & pid=$!; wait_for "$2" "done" 30 ;;
	torch) $PY bench/synthetic_steps.py --forever > "$2" 2>&1 & pid=$!; wait_for "$2" ready 60 ;;
	torch-trixie)
		"$CHROOT" "$TRIXIE_ROOT" python3 "$TRIXIE_DIR/synthetic_steps.py" --forever > "$2" 2>&1 &
		pid=$!; wait_for "$2" ready 60 ;;
	*) die "unknown target $1" ;;
	esac
	echo "$pid"
}

# rss_kb PID: VmRSS of a process, empty once it is gone
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
# cpu_ticks PID: utime + stime in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || true; }
