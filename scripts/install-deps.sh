#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs the Debian packages cirron-probe needs to build and test, only those missing.
set -euo pipefail

PKGS=(
	make gcc clang llvm pkg-config		# build; clang has the BPF target
	libclang-rt-dev				# libFuzzer and clang's sanitizers (make fuzz)
	clang-tidy cppcheck			# make lint
	mandoc					# make check-man: lints man/cirron-probe.1
	libbpf-dev bpftool libelf-dev zlib1g-dev libcjson-dev
	libcapstone-dev libdw-dev		# exits of C++ functions: disassembler, unwind tables
	libcurl4-openssl-dev curl		# --output s3:// (libcurl signs); curl: tests/e2e/test_s3.py
	python3 python3-pytest python3-pytest-xdist python3-jsonschema python3-yaml	# e2e tests
	python3-torch debootstrap		# PyTorch targets: host torch, trixie root
	python3-venv				# the venv of official wheels, where pyenv is absent
	util-linux mount procps			# setpriv, mountpoint; mount; ps
	debhelper dpkg-dev lintian		# make deb (tests/e2e/test_package.py)
	patchelf				# bench/gpu/pack.sh: the GPU check's carried binaries
	prometheus rsyslog chromium		# output consumers the e2e tests start on loopback
)

mapfile -t missing < <("$(dirname "$0")/debs-missing.sh" "${PKGS[@]}")
# Real consumers of the outputs (e2e tests): node + npm run the Chrome trace engine
# (tests/scripts/install-trace-engine.sh). Any node >= 18 will do (one from another source
# too), so these are asked for only when the command is missing.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
	if [[ $(id -u) != 0 ]]; then
		echo "install-deps: missing packages: ${missing[*]} (run as root to install)" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	# The tests start Prometheus and rsyslog themselves, with their own configs: their
	# packages' services are not started by the install (policy-rc.d, for the install only).
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [[ ! -e /usr/local/cuda/lib64/libcudart.so.13 && ! -e /usr/local/cuda/lib64/libcudart.so ]]; then
	echo "install-deps: warning: no CUDA runtime under /usr/local/cuda/lib64;" \
		"the CUDA example and tests cannot be built" >&2
fi
