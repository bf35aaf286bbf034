# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix (tests/kernels/README.md): a subset of the e2e suite inside Debian's 6.1
# and 5.10 kernels, booted under qemu with this machine's root shared read-only, and inside
# Debian's arm64 kernel (6.12) under qemu-system-aarch64 with an arm64 root.
.PHONY: test-kernels kernel-test-bins arm64-root arm64-kernel arm64-boot arm64-vmlinux

# What the e2e tests' `built` fixture (tests/e2e/conftest.py) makes: built here, since the
# guest's share is read-only. guest-tests.sh checks `make -q kernel-test-bins` inside.
# (The arm64 guest's: `make ARCH=arm64 kernel-test-bins`, which run-matrix.sh makes after
# the arm64 root.)
kernel-test-bins: cirron-probe $(OUTPUT)/cirron-probe-san $(OUTPUT)/tests/cuda_calls \
	$(OUTPUT)/tests/spin $(OUTPUT)/tests/with_pid $(OUTPUT)/tests/sigcount \
	$(OUTPUT)/tests/cuda_steps

test-kernels: kernel-test-bins
	$(Q)tests/kernels/install-deps.sh
	$(Q)tests/kernels/run-matrix.sh

# The arm64 guest by hand: its root (Debian trixie arm64 with python3-torch, the aarch64
# torch CPU wheel and libcudart), its kernel, a boot that prints what it runs on, and the
# arm64 vmlinux.h from its BTF. All cached under /var/cache/cirron-probe.
ARM64_SUITE ?= trixie
arm64-root:
	$(Q)tests/kernels/install-deps.sh arm64
	$(Q)tests/kernels/make-arm64-root.sh >/dev/null

arm64-kernel:
	$(Q)tests/kernels/fetch-kernel.sh $(ARM64_SUITE) arm64

arm64-boot: arm64-root
	$(Q)CIRRON_ARM64_SUITE=$(ARM64_SUITE) tests/kernels/arm64-boot.sh tests/kernels/guest-probe.sh

arm64-vmlinux: arm64-root
	$(Q)CIRRON_ARM64_SUITE=$(ARM64_SUITE) tests/kernels/arm64-vmlinux.sh
