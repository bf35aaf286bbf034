# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix (tests/kernels/README.md): a subset of the e2e suite inside Debian's 6.1
# and 5.10 kernels, booted under qemu with this machine's root shared read-only.
.PHONY: test-kernels

test-kernels: cirron-probe $(OUTPUT)/cirron-probe-san $(OUTPUT)/tests/cuda_calls $(OUTPUT)/tests/spin \
		$(OUTPUT)/tests/cuda_steps
	$(Q)tests/kernels/install-deps.sh
	$(Q)tests/kernels/run-matrix.sh
