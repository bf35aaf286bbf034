#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-cupti-headers.sh: fetch once, and cache, the CUPTI headers the companion library
# (companion/, loaded into GPU jobs through CUDA_INJECTION64_PATH) is built against: NVIDIA's
# wheels from PyPI, pinned in tests/scripts/cupti-requirements.txt, downloaded with pip (no
# install, no dependencies) and only their include/ folders kept:
#
#   $CACHE/cupti-headers-<hash>/cu13   CUPTI 13.0 + cuda.h (what torch 2.11+cu130 maps)
#   $CACHE/cupti-headers-<hash>/cu12   CUPTI 12.8 + cuda.h (torch's cu12 wheels)
#
#   CIRRON_VENV_CACHE   where the caches live (default /var/cache/cirron-probe), outside the repo
#
# <hash> is the requirements file's: a new pin makes a new folder. A marker (.cirron-ok) is
# written last; a folder without it is made again. Prints the folder on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQS="$HERE/cupti-requirements.txt"
CACHE="${CIRRON_VENV_CACHE:-/var/cache/cirron-probe}"
hash=$(sha256sum "$REQS" | cut -c1-12)
DIR="$CACHE/cupti-headers-$hash"
MARKER="$DIR/.cirron-ok"

if [[ ! -f "$MARKER" ]]; then
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.cupti-headers-$hash.lock"	# a parallel build waits for this one
	flock 9
	if [[ ! -f "$MARKER" ]]; then
		rm -rf "$DIR"
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		grep -v '^#' "$REQS" | grep . | while read -r pin; do
			/usr/bin/python3 -m pip --disable-pip-version-check -q download --no-deps \
				-d "$tmp/wheels" "$pin" >&2
		done
		mkdir -p "$DIR/cu13" "$DIR/cu12"
		for w in "$tmp"/wheels/*.whl; do
			case "$(basename "$w")" in
			*_cu12-*) dest="$DIR/cu12" ;;
			*) dest="$DIR/cu13" ;;
			esac
			rm -rf "$tmp/x" && mkdir "$tmp/x"
			/usr/bin/python3 -m zipfile -e "$w" "$tmp/x"
			find "$tmp/x" -type d -name include -path '*/nvidia/*' | while read -r inc; do
				cp -r "$inc"/. "$dest"/
			done
		done
		for v in cu13 cu12; do
			[[ -f "$DIR/$v/cupti_activity.h" && -f "$DIR/$v/cuda.h" ]] || {
				echo "make-cupti-headers.sh: no cupti_activity.h or cuda.h in $DIR/$v" >&2
				exit 1
			}
		done
		date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
	fi
fi
echo "$DIR"
