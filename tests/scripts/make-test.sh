#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# make-test.sh: what `make test` runs, phase by phase, each timed (phases.sh), with a table of
# the times at the end (also in .output/phases.txt, or $CIRRON_PHASES when a caller such as
# .ci/run set it and timed its own phases there first).
#
# The kernel matrix's preparation runs no timed test and mostly waits on the network or on
# one emulated process (the arm64 root: mmdebstrap, dpkg under qemu-user): its kernels'
# downloads, the arm64 root and the cross build start in the background after fuzz-smoke
# (which fuzzes for a fixed time, so alone) and overlap the build, the unit tests, the
# trixie root and the venv. The e2e suite waits for them: its two workers (pytest-xdist,
# tests/e2e/conftest.py) keep both cores busy. make test-kernels then finds all of it cached.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/scripts/phases.sh
. tests/scripts/phases.sh
mkdir -p .output
if [[ -z ${CIRRON_PHASES:-} ]]; then
	export CIRRON_PHASES=$PWD/.output/phases.txt
	: > "$CIRRON_PHASES"
fi
make=${MAKE:-make}
jobs=$(nproc)
start=$(date +%s)
trap 'phase_record "make test (total)" $(($(date +%s) - start)) "$result"; phases_table' EXIT
result="failed"

# The kernel matrix's downloads and arm64 builds, logged to .output/kernels/prepare.log;
# run-matrix.sh does again (cached: seconds) whatever did not finish here.
prepare_kernels() {
	local suites=${CIRRON_KERNEL_SUITES:-bookworm bullseye arm64} s
	for s in $suites; do
		case $s in
		arm64) phase "  background: fetch arm64 kernel" tests/kernels/fetch-kernel.sh \
			"${CIRRON_ARM64_SUITE:-trixie}" arm64 ;;
		*) phase "  background: fetch $s kernel" tests/kernels/fetch-kernel.sh "$s" ;;
		esac
	done
	[[ " $suites " == *" arm64 "* ]] || return 0
	phase "  background: arm64 deps" tests/kernels/install-deps.sh arm64 &&
		phase "  background: arm64 root" tests/kernels/make-arm64-root.sh &&
		phase "  background: arm64 cross build" \
			"$make" --no-print-directory -j"$jobs" ARCH=arm64 kernel-test-bins
}

run() { phase "$@" || exit 1; }

run deps scripts/install-deps.sh
run check-layers "$make" --no-print-directory check-layers
run check-man "$make" --no-print-directory check-man
run check-rules "$make" --no-print-directory check-rules
run fuzz-smoke "$make" --no-print-directory -j"$jobs" fuzz-smoke
mkdir -p .output/kernels
prepare_kernels > .output/kernels/prepare.log 2>&1 &
bg=$!
run build "$make" --no-print-directory -j"$jobs" test-bins
run test-unit "$make" --no-print-directory -j"$jobs" test-unit
run trixie-root "$make" --no-print-directory trixie-root
run venv "$make" --no-print-directory venv
run tf-venv "$make" --no-print-directory tf-venv
run fleet-venv "$make" --no-print-directory fleet-venv
# a failure here is not the end: run-matrix.sh prepares again, and says what failed
phase "wait for the background" wait "$bg" ||
	{ echo "make-test: the kernels' preparation failed (.output/kernels/prepare.log):" >&2;
	  tail -20 .output/kernels/prepare.log >&2; }
run test-e2e "$make" --no-print-directory test-e2e
run test-kernels "$make" --no-print-directory test-kernels
result=ok
