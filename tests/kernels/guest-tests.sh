#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# Runs inside a test guest (boot.sh), chrooted into the host's read-only root: the e2e tests
# listed in tests/kernels/tests.txt, against the binaries the host built. Writes go to the
# guest's tmpfs only. Exit status: pytest's.
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 126
export HOME=/root PYTHONDONTWRITEBYTECODE=1 CI=true
export CIRRON_TEST_TIME_SCALE=${CIRRON_TEST_TIME_SCALE:-4}
echo "guest: kernel $(uname -r), $(nproc) cpus"
# The share is read-only: what the tests run must be built (make test-kernels does it first)
if ! make -q cirron-probe .output/cirron-probe-san .output/tests/cuda_calls .output/tests/spin \
	.output/tests/cuda_steps; then
	echo "guest: the binaries are older than their sources; build them on the host first" >&2
	exit 1
fi
./cirron-probe doctor -p $$ | sed -n '/^  kernel /,/^target/p' | grep -v '^target'
# shellcheck disable=SC2046
exec python3 -m pytest -p no:cacheprovider --color=no -q -rs --basetemp=/tmp/pytest \
	$(grep -v '^#' tests/kernels/tests.txt) "$@"
