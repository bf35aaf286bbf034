#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# arm64-binfmt.sh: makes this x86-64 machine run aarch64 programs (qemu-user-static through
# binfmt_misc), which building the arm64 root and a native build inside it need. Mounts
# binfmt_misc if it is not, and registers Debian's qemu-aarch64 entry (its F flag opens the
# interpreter now, so it also works inside a chroot) if it is missing. Needs root.
set -euo pipefail

bm=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
[[ $(uname -m) == aarch64 ]] && exit 0
if [[ ! -e $bm/register ]]; then
	mount -t binfmt_misc binfmt_misc "$bm"
fi
if [[ ! -e $bm/qemu-aarch64 ]]; then
	[[ -f $conf ]] || { echo "arm64-binfmt: $conf is missing (apt-get install qemu-user-static)" >&2; exit 1; }
	cat "$conf" > "$bm/register"
fi
grep -qx enabled "$bm/qemu-aarch64" || echo 1 > "$bm/qemu-aarch64"
grep -q '^flags:.*F' "$bm/qemu-aarch64" ||
	{ echo "arm64-binfmt: qemu-aarch64 is registered without the F flag: chroots cannot use it" >&2; exit 1; }
