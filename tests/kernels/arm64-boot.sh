#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# arm64-boot.sh SCRIPT [WORKDIR]: boots Debian's arm64 cloud kernel of CIRRON_ARM64_SUITE
# (default trixie: 6.12; bookworm: 6.1) under qemu-system-aarch64 with the arm64 root
# (make-arm64-root.sh; built first if missing) and runs SCRIPT, a file of this repository,
# in it (boot.sh). WORKDIR defaults to .output/kernels/arm64-<suite>. Exits with the script's
# status (boot.sh's codes).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
script=${1:?usage: arm64-boot.sh SCRIPT [WORKDIR]}
suite=${CIRRON_ARM64_SUITE:-trixie}
work=${2:-$(realpath -m "$here/../../.output/kernels/arm64-$suite")}
root=$("$here/make-arm64-root.sh" | tail -1)
kdir=$("$here/fetch-kernel.sh" "$suite" arm64)
CIRRON_VM_ROOT=$root exec "$here/boot.sh" "$kdir" "$work" "$script"
