#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# What the kernel matrix (make test-kernels) needs besides the main suite's packages:
# qemu (with virtiofsd, in qemu-system-common), busybox-static for the initramfs.
set -euo pipefail

PKGS=(qemu-system-x86 qemu-system-common busybox-static)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [[ $(id -u) != 0 ]]; then
	echo "kernels: missing packages: ${missing[*]} (run as root to install)" >&2
	exit 1
fi
echo "kernels: installing ${missing[*]}"
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
