#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# The kernel matrix: for each Debian suite (CIRRON_KERNEL_SUITES, default "bookworm bullseye":
# Linux 6.1 and 5.10), fetch its cloud kernel (cached), boot it (boot.sh) and run
# guest-tests.sh inside. Consoles: .output/kernels/<suite>/console.log. Prints one line per
# kernel (result, wall time) and exits non-zero if any kernel failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=tests/kernels
summary=.output/kernels/summary.txt
mkdir -p .output/kernels
: > "$summary"
failed=0
total_start=$SECONDS
for suite in ${CIRRON_KERNEL_SUITES:-bookworm bullseye}; do
	start=$SECONDS
	if ! kdir=$("$here/fetch-kernel.sh" "$suite"); then
		echo "kernels: $suite: cannot fetch its kernel" | tee -a "$summary"
		failed=1
		continue
	fi
	echo "kernels: $suite: booting $(cat "$kdir/.complete")"
	"$here/boot.sh" "$kdir" ".output/kernels/$suite" "$here/guest-tests.sh"
	rc=$?
	result=$(tr -d '\r' < ".output/kernels/$suite/console.log" |
		grep -E '^=*.* (passed|failed|error)' | tail -1 | tr -d '=' | sed 's/^ *//;s/ *$//')
	printf 'kernels: %-9s %-40s exit %d in %ds: %s\n' "$suite" "$(cat "$kdir/.complete")" \
		"$rc" $((SECONDS - start)) "${result:-no pytest summary}" | tee -a "$summary"
	((rc == 0)) || failed=1
done
echo "kernels: matrix wall time $((SECONDS - total_start))s" | tee -a "$summary"
cat "$summary"
exit $failed
