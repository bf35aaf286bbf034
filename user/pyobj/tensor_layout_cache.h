/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TENSOR_LAYOUT_CACHE_H
#define __CIRRON_TENSOR_LAYOUT_CACHE_H

#include <stddef.h>
#include "pyobj/torch_tensor.h"

/* A tensor layout found in a target (pyobj/tensor_layout_find.c), kept per libtorch build
 * (its GNU build-id) under the cache directory (--cache-dir) as
 * torch-layout-<build-id>.json, in probes/torch_layouts.json's own format (one entry, keyed
 * by the torch version): the search runs once per build. */

/* Loads the layout for build_id and version. Returns 0, -ENOENT (none kept), or -EINVAL
 * with the reason in why (a file that is not one of ours). */
int tensor_layout_cache__load(const char *dir, const char *build_id, const char *version,
			      struct torch_layout *l, char *why, size_t size);
/* Keeps l for build_id (temp file + rename). Returns 0 or -errno. */
int tensor_layout_cache__store(const char *dir, const char *build_id, const struct torch_layout *l);

#endif
