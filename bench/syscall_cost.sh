#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What the node agent costs the node's other processes (issue 24): an untraced process's system
# calls (`dd if=/dev/zero of=/dev/null bs=1 count=N`: 2N read/write calls) with no agent, with
# `cirron-probe watch` running and nothing to trace, and with it tracing a torch job (the
# marks hook on the write path attached: fentry on ksys_write where the kernel allows it, else
# a uprobe on the job's own write()). dd runs on CPU 0, the agent and the job on CPU 1; modes
# interleaved per round, medians.
#   N=3000000 ROUNDS=5 bench/syscall_cost.sh
source "$(dirname "$0")/lib.sh"
N=${N:-3000000}
ROUNDS=${ROUNDS:-5}
NAME=syscall_cost
reset_results $NAME
DD="taskset -c 0 dd if=/dev/zero of=/dev/null bs=1 count=$N"
O="taskset -c 1"
ns_per_call() {	# wall ns per system call of one dd run
	local t0 t1
	t0=$(now_ns); $DD 2>/dev/null; t1=$(now_ns)
	calc '(t1-t0)/(2*n)' t1="$t1" t0="$t0" n="$N"
}
dir=$(mktemp -d)
on_exit "rm -rf $dir"
declare -A r
hook=
for round in $(seq "$ROUNDS"); do
	r[none]+="$(ns_per_call) "
	# the same job with no agent: what the job itself costs dd (shared caches, the VM)
	$O $PY bench/synthetic_steps.py --forever > "$dir/bare.out" 2>&1 &
	job=$!
	wait_for "$dir/bare.out" ready 120
	r[job]+="$(ns_per_call) "
	kill $job; wait $job 2>/dev/null || true
	$O "$PROBE" watch --path "$dir/idle" -v > "$dir/idle.log" 2>&1 &
	agent=$!
	wait_for "$dir/idle.log" "watching the processes that" 30
	r[idle]+="$(ns_per_call) "
	: > "$dir/job.out"
	$O $PY bench/synthetic_steps.py --forever > "$dir/job.out" 2>&1 &
	job=$!
	wait_for "$dir/idle.log" "pid $job: session .* started" 120
	r[tracing]+="$(ns_per_call) "
	kill $job; wait $job 2>/dev/null || true
	wait_for "$dir/idle.log" "pid $job: session .* ended" 30
	kill -INT $agent; wait $agent 2>/dev/null || true
	hook=$(spool_py health "$dir/idle" 2>/dev/null | awk -F= '$1 == "marks_hook" {print $2}' || true)
	rm -rf "$dir/idle"
	log "syscall_cost: round $round/$ROUNDS"
done
row() { printf '| %s | %s | %s |\n' "$1" "$(echo "${r[$2]}" | lines | median)" "$(echo "${r[$2]}" | lines | minmax)"; }
{
	echo "## What an agent costs untraced processes (issue 24)"
	echo
	echo "\`dd bs=1\` (2 x $N read/write system calls) on CPU 0, ns per system call, median of $ROUNDS"
	echo "interleaved rounds; the agent and the job on CPU 1. Marks hook while tracing: $hook."
	echo
	echo "| agent | ns per system call | min-max |"
	echo "|---|---|---|"
	row "none" none
	row "\`watch\`, nothing traced" idle
	row "none, a torch job running" job
	row "\`watch\` tracing that torch job" tracing
} > "$(section_file $NAME)"
target $NAME "untraced syscall, idle agent vs none (ns)" \
	"$(echo "${r[idle]}" | lines | median) vs $(echo "${r[none]}" | lines | median)" "equal within noise"
target $NAME "untraced syscall, agent tracing a job vs the job alone (ns)" \
	"$(echo "${r[tracing]}" | lines | median) vs $(echo "${r[job]}" | lines | median)" "equal within noise"
