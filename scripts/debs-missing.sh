#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# debs-missing.sh PKG...: prints (one per line) the Debian packages of PKG... not installed.
# PKG is name or name:arch. A bare name wants this machine's architecture (or "all"): once
# arm64 is a foreign architecture (tests/kernels/install-deps.sh arm64), dpkg-query answers a
# bare libcjson-dev with libcjson-dev:arm64, which does not build for this machine.
set -uo pipefail
native=$(dpkg --print-architecture)
for p in "$@"; do
	want="$native|all"
	[[ $p == *:* ]] && want=${p##*:}
	dpkg-query -W -f='${Architecture} ${Status}\n' "$p" 2>/dev/null |
		grep -qE "^($want) install ok installed$" || echo "$p"
done
