#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# make-arm64-root.sh: builds once, and caches, the arm64 guest's root (tests/kernels/README.md):
# Debian trixie for arm64 made with mmdebstrap, its maintainer scripts run by qemu-user-static
# (arm64-binfmt.sh), holding
#   - Debian's python3 (3.13) and python3-torch (2.6), pytest and jsonschema for the tests;
#   - with CIRRON_ARM64_VENV=1 only, /opt/torch-venv: a venv on that python3 with the official
#     aarch64 torch CPU wheel from PyPI and its dependencies, pinned by hash
#     (arm64-requirements.txt), for [venv] tests run by hand: the guest's list has none;
#   - /usr/local/cuda: NVIDIA's CUDA runtime for aarch64 (sbsa), libcudart.so.13 and the
#     headers that wheel has (not crt/: a cross build uses this machine's), from the
#     nvidia-cuda-runtime wheel on PyPI (pinned by hash below), the same release as this
#     machine's /usr/local/cuda (13.0.88);
#   - busybox-static (the guest's initramfs takes its busybox from here), the libraries of the
#     cross-built binaries (ASan and UBSan runtimes too) and /repo, where the guest mounts the
#     repository.
#
#   CIRRON_ARM64_CACHE   where roots live (default /var/cache/cirron-probe), outside the repo
#   CIRRON_ARM64_EXTRA   more Debian packages, comma-separated (e.g. a native build's:
#                        gcc,libc6-dev,clang,llvm,bpftool,libbpf-dev,libelf-dev,libcjson-dev,
#                        zlib1g-dev); part of the key
#   CIRRON_ARM64_VENV    1: the root has /opt/torch-venv too (~2 minutes more); part of the key
#   CIRRON_DEBIAN_MIRROR, CIRRON_DEBIAN_SECURITY  as fetch-kernel.sh
#
# The root is $CACHE/arm64-root-<key>, the key a hash of what goes into it: this script but
# its comments (the package list, the CUDA pin, the steps), arm64-requirements.txt,
# CIRRON_ARM64_EXTRA and CIRRON_ARM64_VENV. Debian's
# versions are those of the day it was built (like the trixie root): they are recorded in
# .cirron-arm64-versions with the venv's. arm64-root-current links the one without extra
# packages and without the venv (the tests').
# Idempotent: the marker .cirron-arm64-root-ok is written last; a directory without it is
# removed and rebuilt. Wheels are downloaded once, into $CACHE/wheels-arm64. Needs root,
# mmdebstrap, qemu-user-static and the network; 4-7 minutes on 2 cores, 0.9 GB (with the
# venv 6-12 minutes, 1.5 GB). Prints the root's path last.
set -euo pipefail

here=$(dirname "$(realpath "$0")")
reqs=$here/arm64-requirements.txt
cache=${CIRRON_ARM64_CACHE:-/var/cache/cirron-probe}
mirror=${CIRRON_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${CIRRON_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
suite=trixie
# the cross-built binaries' shared libraries (sanitizer runtimes included) are here too
pkgs=(python3 python3-torch python3-pytest python3-jsonschema busybox-static
	procps mount make libelf1t64 libdw1t64 zlib1g libcjson1 libcurl4t64 libstdc++6 libasan8
	libubsan1)
extra=${CIRRON_ARM64_EXTRA:-}
venv=false
[[ ${CIRRON_ARM64_VENV:-} == 1 ]] && { venv=true; pkgs+=(python3-venv); }
cudart_pin=nvidia-cuda-runtime==13.0.88
cudart_hash=sha256:8ba16a33998ee3ee2bf11c8f13e36e3ff86a1d6ad165ffeee863d6eabd0b5f67

# qemu-user's default CPU computes pointer authentication the architected way: import torch
# took 50 s under it, 11 s with QEMU's cheap hash (boot.sh does the same for the guests).
export QEMU_CPU=max,pauth-impdef=on
# Commands in the root under construction: a clean environment (no PIP_* or PYTHON* of
# this machine's).
in_root() {
	chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		QEMU_CPU="$QEMU_CPU" "${@:2}"
}
# What the tests import, run once at build time so that its bytecode is in the root (the
# guest's root is read-only and its Python ~15x slower than here).
warm_up='
import importlib.util, sys
import torch, torch.nn as nn, torch.optim, torch.utils.data, torch.distributed
for extra in ("pytest", "jsonschema"):
    if importlib.util.find_spec(extra):
        __import__(extra)
m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 8), torch.randn(16, 1)), batch_size=4)
for x, y in data:
    opt.zero_grad(); nn.functional.mse_loss(m(x), y).backward(); opt.step()
print(sys.executable, torch.__version__, "warm")'

# mmdebstrap's hooks (this script again, the root as $2). Debian's python3 packages
# byte-compile everything they install, in emulation (qemu-user): 19 of the 44 minutes the
# first build took. py3compile is a no-op while packages install; the warm-up compiles
# what the tests import instead.
case ${1:-} in
--essential-hook)
	in_root "$2" dpkg-divert --quiet --local --rename --divert /usr/bin/py3compile.real \
		--add /usr/bin/py3compile
	printf '#!/bin/sh\nexit 0\n' > "$2/usr/bin/py3compile"
	chmod 0755 "$2/usr/bin/py3compile"
	exit 0
	;;
--customize-hook)
	r=$2
	rm "$r/usr/bin/py3compile"
	in_root "$r" dpkg-divert --quiet --local --rename --remove /usr/bin/py3compile
	mkdir -p "$r/repo"
	in_root "$r" python3 -c "$warm_up"
	$venv || exit 0
	mkdir -p "$r/tmp/wheels"
	cp "$reqs" "$r/tmp/wheels/"
	cp -l "$cache"/wheels-arm64/*.whl "$r/tmp/wheels/"
	in_root "$r" python3 -m venv /opt/torch-venv
	in_root "$r" /opt/torch-venv/bin/python -m pip install -q --disable-pip-version-check \
		--no-index --no-deps --require-hashes --no-compile --find-links /tmp/wheels \
		-r /tmp/wheels/arm64-requirements.txt
	rm -rf "$r/tmp/wheels"
	in_root "$r" /opt/torch-venv/bin/python -c "$warm_up"
	exit 0
	;;
esac

# comments do not go into the root: they are not in the key
key=$({ grep -v '^[[:space:]]*#' "$0"; cat "$reqs"; echo "extra=$extra"; ! $venv || echo venv; } |
	sha256sum | cut -c1-12)
root=$cache/arm64-root-$key
marker=$root/.cirron-arm64-root-ok

# arm64-root-current: the root the tests use, the one without extra packages
link_current() { [[ -n $extra ]] || $venv || ln -sfn "$root" "$cache/arm64-root-current"; }
if [[ -f $marker ]]; then
	link_current
	echo "$root"
	exit 0
fi
[[ $(id -u) == 0 ]] || { echo "make-arm64-root: must run as root (mmdebstrap, chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null ||
	{ echo "make-arm64-root: mmdebstrap is missing (tests/kernels/install-deps.sh arm64)" >&2; exit 1; }
"$here/arm64-binfmt.sh"

mkdir -p "$cache"
exec 9>"$cache/.arm64-root-$key.lock"
flock 9
if [[ -f $marker ]]; then
	link_current
	echo "$root"
	exit 0
fi
start=$SECONDS

# The wheels, checked against their hashes (pip keeps a file already in the directory).
wheels=$cache/wheels-arm64
mkdir -p "$wheels"
cudart_req=$(mktemp)
trap 'rm -f "$cudart_req"' EXIT
echo "$cudart_pin --hash=$cudart_hash" > "$cudart_req"
for r in $($venv && echo "$reqs") "$cudart_req"; do
	python3 -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
		--only-binary=:all: --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
		--python-version 3.13 --implementation cp --abi cp313 -r "$r" -d "$wheels" >&2
done
echo "make-arm64-root: wheels ready after $((SECONDS - start)) s" >&2

# A half-built root (an interrupted build) goes first; never delete through a live mount.
tmp=$cache/.arm64-root-$key.tmp
for d in "$tmp" "$root"; do
	[[ -e $d ]] || continue
	if findmnt -rno TARGET | grep -q "^$d/"; then
		echo "make-arm64-root: something is still mounted under $d; not removing" >&2
		exit 1
	fi
	rm -rf --one-file-system "$d"
done

include=$(IFS=,; echo "${pkgs[*]}")${extra:+,$extra}
# shellcheck disable=SC2016 # mmdebstrap runs the hooks with the root as $1
# force-unsafe-io: no fsync per file unpacked (a build cut short is built again anyway)
mmdebstrap --arch=arm64 --variant=essential --include="$include" --dpkgopt=force-unsafe-io \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--essential-hook="\"$here/make-arm64-root.sh\" --essential-hook \"\$1\"" \
	--customize-hook="\"$here/make-arm64-root.sh\" --customize-hook \"\$1\"" \
	"$suite" "$tmp" \
	"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
	"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $suite-security main" >&2
echo "make-arm64-root: mmdebstrap done after $((SECONDS - start)) s" >&2

# The CUDA runtime where a CUDA client finds it (/usr/local/cuda/lib64, as on x86-64 here).
cuda=$tmp/usr/local/cuda-13.0
mkdir -p "$cuda"
unzip -q -d "$tmp/.cudart" "$wheels"/nvidia_cuda_runtime-13.0.88-*aarch64*.whl
mv "$tmp/.cudart/nvidia/cu13/include" "$cuda/include"
mv "$tmp/.cudart/nvidia/cu13/lib" "$cuda/lib64"
rm -rf "$tmp/.cudart" "$cuda"/lib64/*.a
ln -s libcudart.so.13 "$cuda/lib64/libcudart.so"
ln -s cuda-13.0 "$tmp/usr/local/cuda"

# What went in, then the marker (last).
{
	chroot "$tmp" dpkg-query -W -f='${Package} ${Version}\n' "${pkgs[@]}" ${extra//,/ }
	! $venv || chroot "$tmp" /opt/torch-venv/bin/python -m pip freeze \
		--disable-pip-version-check | sed 's/^/venv: /'
	echo "cuda: $cudart_pin"
} > "$tmp/.cirron-arm64-versions"
date -u +%Y-%m-%dT%H:%M:%SZ > "$tmp/.cirron-arm64-root-ok"
mv "$tmp" "$root"
link_current
echo "make-arm64-root: built $root in $((SECONDS - start)) s ($(du -sh --one-file-system "$root" | cut -f1))" >&2
sed 's/^/  /' "$root/.cirron-arm64-versions" >&2
echo "$root"
