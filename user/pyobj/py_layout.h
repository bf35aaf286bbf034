/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_LAYOUT_H
#define __CIRRON_PY_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* Where a CPython build keeps an instance's attributes (probes/cpython.json
 * "object_layout", byte offsets): enough to find `training` in a module's __dict__. */
struct py_layout {
	bool known;
	int64_t managed_dict;	/* PyDictObject * relative to the object (managed dicts) */
	int64_t ma_keys, ma_values;	/* in PyDictObject */
	int64_t values_header;	/* bytes before values[0] in PyDictValues */
	int64_t dk_log2_index_bytes, dk_nentries, dk_indices;	/* in PyDictKeysObject */
	int64_t ascii_data;	/* first character of a compact ASCII str */
};

#endif
