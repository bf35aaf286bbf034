#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# The kernel matrix: for each suite of CIRRON_KERNEL_SUITES (default "bookworm bullseye
# arm64"), fetch its kernel (cached), boot it (boot.sh) and run guest-tests.sh inside.
# bookworm and bullseye: Debian's amd64 cloud kernels, Linux 6.1 and 5.10, on this machine's
# root. arm64: Debian trixie's arm64 cloud kernel (6.12) under qemu-system-aarch64, on the
# arm64 root (make-arm64-root.sh: built once, cached) with the cross build (make ARCH=arm64,
# made here first: its CUDA test targets link with that root's libcudart). Consoles:
# .output/kernels/<suite>/console.log. Prints one line per kernel (result, wall time) and
# exits non-zero if any kernel failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/scripts/phases.sh
. tests/scripts/phases.sh	# each kernel's time in make test's table
here=tests/kernels
summary=.output/kernels/summary.txt
mkdir -p .output/kernels
: > "$summary"
failed=0
total_start=$SECONDS

# The arm64 guest's root and binaries; prints the root. Its build times go to the summary.
prepare_arm64() {
	local t=$SECONDS root
	"$here/install-deps.sh" arm64 >&2 || return 1
	root=$("$here/make-arm64-root.sh" | tail -1) || return 1
	echo "kernels: arm64: root $(basename "$(realpath "$root")") ready in $((SECONDS - t))s" |
		tee -a "$summary" >&2
	phase_record "  arm64 root" $((SECONDS - t)) ok
	t=$SECONDS
	${MAKE:-make} --no-print-directory -j"$(nproc)" ARCH=arm64 kernel-test-bins >&2 || return 1
	echo "kernels: arm64: cross build ready in $((SECONDS - t))s" | tee -a "$summary" >&2
	phase_record "  arm64 cross build" $((SECONDS - t)) ok
	echo "$root"
}

for suite in ${CIRRON_KERNEL_SUITES:-bookworm bullseye arm64}; do
	start=$SECONDS
	root=
	if [[ $suite == arm64 ]]; then
		kdir=$("$here/fetch-kernel.sh" "${CIRRON_ARM64_SUITE:-trixie}" arm64) &&
			root=$(prepare_arm64)
	else
		kdir=$("$here/fetch-kernel.sh" "$suite")
	fi
	# shellcheck disable=SC2181 # either branch's status
	if (($? != 0)); then
		echo "kernels: $suite: cannot fetch its kernel or build what it runs" | tee -a "$summary"
		failed=1
		continue
	fi
	echo "kernels: $suite: booting $(cat "$kdir/.complete")"
	CIRRON_VM_ROOT=${root:-/} "$here/boot.sh" "$kdir" ".output/kernels/$suite" "$here/guest-tests.sh"
	rc=$?
	result=$(tr -d '\r' < ".output/kernels/$suite/console.log" |
		grep -E '^=*.* (passed|failed|error)' | tail -1 | tr -d '=' | sed 's/^ *//;s/ *$//')
	printf 'kernels: %-9s %-40s exit %d in %ds: %s\n' "$suite" "$(cat "$kdir/.complete")" \
		"$rc" $((SECONDS - start)) "${result:-no pytest summary}" | tee -a "$summary"
	phase_record "  kernel $suite ($(cat "$kdir/.complete"))" $((SECONDS - start)) \
		"exit $rc: ${result:-no pytest summary}"
	((rc == 0)) || failed=1
done
echo "kernels: matrix wall time $((SECONDS - total_start))s" | tee -a "$summary"
cat "$summary"
exit $failed
