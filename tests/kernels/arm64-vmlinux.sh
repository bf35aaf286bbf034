#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# arm64-vmlinux.sh [OUT]: the arm64 vmlinux.h, from the BTF of Debian's arm64 kernel
# (CIRRON_ARM64_SUITE, default trixie) read inside a booted guest (guest-probe.sh copies
# /sys/kernel/btf/vmlinux out), dumped as C by bpftool. OUT defaults to
# .output/kernels/arm64-<suite>/vmlinux.h.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
suite=${CIRRON_ARM64_SUITE:-trixie}
work=$(realpath -m "$here/../../.output/kernels/arm64-$suite")
out=${1:-$work/vmlinux.h}
"$here/arm64-boot.sh" "$here/guest-probe.sh" "$work" >/dev/null
[[ -s $work/out/btf-vmlinux ]] || { echo "arm64-vmlinux: the guest gave no BTF" >&2; exit 1; }
${BPFTOOL:-bpftool} btf dump file "$work/out/btf-vmlinux" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "arm64-vmlinux: $out from $(cat "$work/out/kernel-release")" >&2
