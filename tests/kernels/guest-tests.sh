#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# Runs inside a test guest (boot.sh), chrooted into the host's read-only root (or the arm64
# root): the e2e tests listed in tests/kernels/tests.txt (tests-arm64.txt in the arm64 guest;
# CIRRON_GUEST_TESTS, node ids, instead), against the binaries the host built. Writes go to
# the guest's tmpfs only. Exit status: pytest's.
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 126
export HOME=/root PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 CI=true	# the console: live
export CIRRON_TEST_TIME_SCALE=${CIRRON_TEST_TIME_SCALE:-4}
export CIRRON_TEST_SYMCACHE=/tmp/symcache	# one symbol cache for the guest's tests (tmpfs)
echo "guest: kernel $(uname -r), $(uname -m), $(nproc) cpus"
# The arm64 guest (its own root, the repository at /repo): the cross build in .output-arm64
# (make ARCH=arm64) is what the tests find where they look, .output and ./cirron-probe.
if [ "$(uname -m)" = aarch64 ]; then
	for p in .output cirron-probe; do
		[ -e "$p" ] || { echo "guest: $repo/$p is missing: make on the host first" >&2; exit 1; }
	done
	mount --bind .output-arm64 .output && mount --bind .output-arm64/cirron-probe cirron-probe ||
		exit 126
	tests=tests/kernels/tests-arm64.txt
	# the [venv] tests take the root's venv, if it has one (CIRRON_ARM64_VENV=1
	# make-arm64-root.sh): PyPI's aarch64 torch CPU wheel
	[ ! -x /opt/torch-venv/bin/python ] || export CIRRON_TEST_VENV=/opt/torch-venv
else
	tests=tests/kernels/tests.txt
fi
[ -n "${CIRRON_GUEST_TESTS:-}" ] || [ -r "$tests" ] || { echo "guest: $tests is missing" >&2; exit 1; }
# The share is read-only: what the tests run must be built (make test-kernels does it first)
if ! make -q kernel-test-bins; then
	echo "guest: the binaries are older than their sources; build them on the host first" >&2
	exit 1
fi
./cirron-probe doctor -p $$ | sed -n '/^  kernel /,/^target/p' | grep -v '^target'
# shellcheck disable=SC2046
exec python3 -m pytest -p no:cacheprovider --color=no -q -rs --durations=5 --basetemp=/tmp/pytest \
	${CIRRON_GUEST_TESTS:-$(grep -v '^#' "$tests")} "$@"
