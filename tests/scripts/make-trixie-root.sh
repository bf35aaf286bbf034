#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-trixie-root.sh: build once, and cache, a Debian trixie root holding
# Python 3.13 and python3-torch 2.6, the "newer stack" target of the e2e tests.
#
#   CIRRON_TRIXIE_ROOT  where the root lives (default /var/cache/cirron-probe/trixie-root),
#                       outside the repository.
#   CIRRON_TRIXIE_MIRROR  Debian mirror (default http://deb.debian.org/debian, the host
#                       this machine's apt sources use).
#
# Idempotent: a marker file (.cirron-trixie-root-ok) is written last. If it is present the
# script exits 0 at once; a directory without it (an interrupted build) is removed and
# rebuilt. Needs root and debootstrap; takes a few minutes and about 1.5 GB.
#
# Nothing is mounted permanently. torch needs /proc inside the root, so a test that runs a
# target there mounts it for the run and unmounts it afterwards, e.g.
#   mount --bind /proc "$ROOT/proc"
#   chroot "$ROOT" python3 train.py ...
#   umount "$ROOT/proc"
# The observer stays outside and sees the target's libraries as /proc/PID/root/usr/lib/...
set -euo pipefail

ROOT="${CIRRON_TRIXIE_ROOT:-/var/cache/cirron-probe/trixie-root}"
MIRROR="${CIRRON_TRIXIE_MIRROR:-http://deb.debian.org/debian}"
MARKER="$ROOT/.cirron-trixie-root-ok"

if [[ -f "$MARKER" ]]; then
	echo "trixie root ready: $ROOT"
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "make-trixie-root.sh: must run as root (debootstrap, chroot)" >&2
	exit 1
fi
command -v debootstrap >/dev/null || {
	echo "make-trixie-root.sh: debootstrap not found (apt-get install debootstrap)" >&2
	exit 1
}

start=$(date +%s)

if [[ -e "$ROOT" ]]; then
	echo "removing half-built root $ROOT"
	# An interrupted run of a test may have left /proc mounted inside: unmount first,
	# never delete through a live mount.
	for m in proc sys dev/pts dev; do
		if mountpoint -q "$ROOT/$m" 2>/dev/null; then
			umount -l "$ROOT/$m"
		fi
	done
	if findmnt -rno TARGET | grep -q "^$ROOT/"; then
		echo "make-trixie-root.sh: something is still mounted under $ROOT; not removing" >&2
		exit 1
	fi
	rm -rf --one-file-system "$ROOT"
fi
mkdir -p "$(dirname "$ROOT")"

debootstrap --variant=minbase --include=python3,python3-torch trixie "$ROOT" "$MIRROR"

# Smaller root: downloaded .debs are not needed once unpacked.
rm -f "$ROOT"/var/cache/apt/archives/*.deb

# Record what was installed, then the marker (last).
chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}\n' python3 python3-torch \
	>"$ROOT/.cirron-trixie-versions"
date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"

end=$(date +%s)
echo "trixie root built at $ROOT in $((end - start)) s ($(du -sh --one-file-system "$ROOT" | cut -f1))"
cat "$ROOT/.cirron-trixie-versions"
