#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost per hit of the ways to see a C++ function's exit (issue 24), in one run: an entry-style
# uprobe on the function's own `ret` and on a tail jump (what cirron-probe does now), on the
# instruction after its call site (what it did before: the first call needed a hold), and a
# uretprobe (ruled out: it breaks C++ exceptions), beside entry probes at `push %rbp` and
# `endbr64`. Empty BPF programs, perf uprobes, a function called N times in a loop
# (bench/exit_cost/), cases interleaved per round. x86-64 only (funcs.S).
#   N=300000 ROUNDS=7 bench/exit_cost.sh
source "$(dirname "$0")/lib.sh"
N=${N:-300000}
ROUNDS=${ROUNDS:-7}
NAME=exit_cost
reset_results $NAME
[[ $(uname -m) == x86_64 ]] || die "exit_cost: bench/exit_cost/funcs.S is x86-64 only"
D=$OUTDIR/exit_cost
mkdir -p "$D"
cc -O2 -o "$D/loop" bench/exit_cost/loop.c bench/exit_cost/funcs.S
clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c bench/exit_cost/hit.bpf.c -o "$D/hit.bpf.o"
cc -O2 -o "$D/hitcost" bench/exit_cost/hitcost.c -lbpf -lelf -lz
out=$("$D/hitcost" "$D/loop" "$N" "$ROUNDS" "$D/hit.bpf.o") || die "exit_cost: hitcost failed"
log "exit_cost: done"
get() { echo "$out" | awk -v c="$1" 'index($0, c) == 1 {print $(NF-3)}'; }
cost() { calc '(a-b)/1000' a="$(get "$1")" b="$(get "$2")"; }
{
	echo "## Cost per hit of exit probes (issue 24)"
	echo
	echo "A function called N=$N times (bench/exit_cost/), ns per call, median of $ROUNDS interleaved"
	echo "rounds (min, max), and the process's CPU ns per call; empty BPF programs on perf uprobes."
	echo "The kernel emulates \`push\` and \`jmp rel32\`; it single-steps \`ret\`, \`endbr64\` and a \`mov\`"
	echo "out of line (arch/x86/kernel/uprobes.c)."
	echo
	echo '```'
	echo "$out"
	echo '```'
	echo
	echo "| exit probe | cost per hit (us) |"
	echo "|---|---|"
	echo "| on the function's \`ret\` (now) | $(cost 'ret (c3)' 'none (f_push)') |"
	echo "| on a tail jump out of it (now) | $(cost 'tail jmp' 'none (f_tail)') |"
	echo "| on the instruction after its call site (before) | $(cost 'after call' 'none (f_push)') |"
	echo "| uretprobe (ruled out: C++ exceptions) | $(cost 'uretprobe' 'none (f_push)') |"
} > "$(section_file $NAME)"
target $NAME "exit probe on ret vs call site (us per hit)" "$(cost 'ret (c3)' 'none (f_push)') vs $(cost 'after call' 'none (f_push)')" "same order: both single-stepped"
