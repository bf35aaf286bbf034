#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# pack.sh [DIR]: what the GPU check carries to a GPU machine where nothing can be installed
# (bench/gpu/README.md): the built cirron-probe, the shared libraries it needs that a stock
# distribution may lack (every one ldd names but glibc's and the compiler's runtime), and
# launch_cost (bench/gpu/launch_cost.cu, built with nvcc) with the CUDA runtime it links.
# Each finds its libraries through a RUNPATH of $ORIGIN/lib (patchelf), not LD_LIBRARY_PATH,
# which the processes `run` starts would inherit (a torch there must load its own libcudart).
# and the CUPTI companion (libcirron_cupti.so) beside the binary. DIR defaults to .gpu-carry
# (ignored by git). Run `make` first (it builds the companion too); needs patchelf.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-carry}
rm -rf "$dir" && mkdir -p "$dir/lib"
cp cirron-probe "$dir/"
# the CUPTI companion, beside the binary: where `run` finds it (docs/gpu-time.md)
cp .output/libcirron_cupti.so "$dir/"
# libraries every Linux machine has from its C library and compiler: not carried
base='^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux.*|linux-vdso)\.so'
ldd cirron-probe | awk '/=> \// { print $1, $3 }' | while read -r name path; do
	[[ $name =~ $base ]] || cp -L "$path" "$dir/lib/$name"
done
patchelf --set-rpath '$ORIGIN/lib' "$dir/cirron-probe"
for lib in "$dir"/lib/*; do
	patchelf --set-rpath '$ORIGIN' "$lib"
done
if command -v nvcc >/dev/null; then
	nvcc -O2 -arch=sm_90 -cudart shared bench/gpu/launch_cost.cu -o "$dir/launch_cost" -ldl
	mkdir -p "$dir/cudart"
	cp -L /usr/local/cuda/lib64/libcudart.so.13 "$dir/cudart/"
	patchelf --set-rpath '$ORIGIN/cudart' "$dir/launch_cost"
else
	echo "pack: no nvcc: launch_cost left out (the per-hit costs are not measured)" >&2
fi
du -sh "$dir" | sed 's/^/pack: /'
ls "$dir/lib" | tr '\n' ' ' | sed 's/^/pack: libraries: /;s/$/\n/'
