#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-fleet-venv.sh: the fleet tests' venv (tests/scripts/fleet-requirements.txt: chdb, DuckDB
# with httpfs, MLflow, opentelemetry-proto; every version pinned), built once and cached outside the
# repository like make-venv.sh:
# /var/cache/cirron-probe/fleet-venv-<hash of the pins and the interpreter's version>
# (CIRRON_VENV_CACHE). A marker file is written last; a directory without it is rebuilt.
# Prints the venv's path on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQS="$HERE/fleet-requirements.txt"
CACHE="${CIRRON_VENV_CACHE:-/var/cache/cirron-probe}"
py=/usr/bin/python3
pyver=$("$py" -c 'import sys; print(sys.version.split()[0])')
hash=$({ cat "$REQS"; echo "$pyver"; } | sha256sum | cut -c1-12)
VENV="$CACHE/fleet-venv-$hash"
MARKER="$VENV/.cirron-venv-ok"

if [[ ! -f "$MARKER" ]]; then
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.fleet-venv-$hash.lock"
	flock 9
	if [[ ! -f "$MARKER" ]]; then
		rm -rf "$VENV"
		"$py" -m venv "$VENV"
		"$VENV/bin/python" -m pip --disable-pip-version-check -q install --no-deps -r "$REQS"
		"$VENV/bin/python" -c "import chdb, duckdb, mlflow, opentelemetry.proto" >/dev/null
		date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
	fi
fi
echo "$VENV"
