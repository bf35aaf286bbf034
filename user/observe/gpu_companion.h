/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The CUPTI companion `run` gives its command (docs/gpu-time.md): CUDA_INJECTION64_PATH set
 * to libcirron_cupti.so, which the CUDA driver loads at cuInit. */
#ifndef __CIRRON_GPU_COMPANION_H
#define __CIRRON_GPU_COMPANION_H

#include <stddef.h>

/* The companion's path into buf: $CIRRON_GPU_COMPANION, else beside this binary, in its
 * .output/ (a build tree), or in ../lib/cirron-probe/ (an install). NULL: none, or
 * CIRRON_GPU_COMPANION=off; *why says which. */
const char *gpu_companion__find(char *buf, size_t size, const char **why);
/* Before run's exec, in the child: CUDA_INJECTION64_PATH=path, unless the environment has
 * one already (the user's own injection library is kept). */
void gpu_companion__inject(const char *path);

#endif
