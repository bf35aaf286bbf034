# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# Sourced by make-test.sh and .ci/run: each phase's wall time (date +%s) goes to
# $CIRRON_PHASES, one line "name<TAB>seconds<TAB>result", and phases_table prints them, so
# that a change sees what it costs. tests/kernels/run-matrix.sh adds its kernels' lines.

# phase NAME CMD...: runs CMD, records its time; returns CMD's status
phase() {
	local name=$1 t rc
	shift
	t=$(date +%s)
	echo "== phase $name: $*" >&2
	"$@" && rc=0 || rc=$?	# under set -e too: the time of a failed phase is kept
	phase_record "$name" $(($(date +%s) - t)) "$( ((rc == 0)) && echo ok || echo "failed ($rc)")"
	return $rc
}

phase_record() {
	[[ -n ${CIRRON_PHASES:-} ]] && printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$CIRRON_PHASES"
	echo "== phase $1: $2 s, $3" >&2
}

phases_table() {
	[[ -s ${CIRRON_PHASES:-} ]] || return 0
	echo "== phase times (wall; indented: within the phase above, or beside it in the background)"
	awk -F'\t' '{ printf "  %-44s %5d s %3d:%02d  %s\n", $1, $2, $2 / 60, $2 % 60, $3 }' "$CIRRON_PHASES"
}
