#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# install-deps.sh [arm64]: what the kernel matrix (make test-kernels) needs besides the main
# suite's packages: qemu (with virtiofsd, in qemu-system-common), busybox-static for the
# initramfs. With arm64, also what the arm64 guest and the cross build need: qemu-system-arm,
# qemu-user-static, mmdebstrap and arch-test (the arm64 root), unzip (the CUDA runtime's
# wheel), the cross compiler (g++ for libstdc++) and the arm64 -dev packages (which makes
# arm64 a foreign architecture of this machine's dpkg).
set -euo pipefail

PKGS=(qemu-system-x86 qemu-system-common busybox-static)
ARM64_PKGS=(qemu-system-arm qemu-user-static mmdebstrap arch-test unzip gcc-aarch64-linux-gnu
	g++-aarch64-linux-gnu libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 libcapstone-dev:arm64
	libcjson-dev:arm64 zlib1g-dev:arm64 libcurl4-openssl-dev:arm64)
arm64=false
[[ ${1:-} == arm64 ]] && { arm64=true; PKGS+=("${ARM64_PKGS[@]}"); }
mapfile -t missing < <("$(dirname "$0")/../../scripts/debs-missing.sh" "${PKGS[@]}")
((${#missing[@]})) || exit 0
if [[ $(id -u) != 0 ]]; then
	echo "kernels: missing packages: ${missing[*]} (run as root to install)" >&2
	exit 1
fi
echo "kernels: installing ${missing[*]}"
if $arm64 && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
