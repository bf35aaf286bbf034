// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Reads CPython dicts, instance attributes and str objects in a running target's memory
// (3.11 to 3.13): a dict's keys object holds its entries ({hash, key, value} for general
// keys, {key, value} for str keys) after its index table; split dicts keep their values
// apart. Offsets come from the build's object_layout (probes/cpython.json).
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/py_dict.h"

#define OB_TYPE		8
#define DK_KIND		10	/* PyDictKeysObject.dk_kind, 3.11 to 3.13: 0 general, 1 str, 2 split */
#define STR_LENGTH	16
#define MAX_ENTRIES	65536

bool py_str__read(int pid, const struct py_layout *l, uint64_t obj, char *buf, size_t size)
{
	int64_t len = 0;

	if (!obj || !procfs__read_mem(pid, obj + STR_LENGTH, &len, sizeof(len)) || len < 0 ||
	    (uint64_t)len >= size ||
	    !procfs__read_mem(pid, obj + (uint64_t)l->ascii_data, buf, (size_t)len))
		return false;
	buf[len] = 0;
	return true;
}

/* A keys object's entries; values: the address of values[0] for split keys (0: combined). */
static bool keys_each(int pid, const struct py_layout *l, uint64_t keys, uint64_t values,
		      bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx)
{
	uint64_t nentries = 0, *e, *vals = NULL;
	uint8_t log2_index = 0, kind = 0;
	size_t esize;
	bool hit = false;

	if (!keys ||
	    !procfs__read_mem(pid, keys + (uint64_t)l->dk_log2_index_bytes, &log2_index, 1) ||
	    !procfs__read_mem(pid, keys + DK_KIND, &kind, 1) ||
	    !procfs__read_mem(pid, keys + (uint64_t)l->dk_nentries, &nentries, 8) ||
	    log2_index > 30 || nentries > MAX_ENTRIES || !nentries)
		return false;
	esize = kind == 0 ? 3 : 2;	/* general {hash, key, value}, else {key, value} */
	e = calloc(nentries, esize * 8);
	if (values)		/* split: the values live apart, same index */
		vals = calloc(nentries, 8);
	if (!e || (values && !vals))
		goto out;
	if (!procfs__read_mem(pid, keys + (uint64_t)l->dk_indices + (1ull << log2_index), e,
			      nentries * esize * 8) ||
	    (vals && !procfs__read_mem(pid, values, vals, nentries * 8)))
		goto out;
	for (uint64_t i = 0; i < nentries && !hit; i++) {
		uint64_t key = e[i * esize + esize - 2];
		uint64_t value = vals ? vals[i] : e[i * esize + esize - 1];
		char name[256];

		if (value && py_str__read(pid, l, key, name, sizeof(name)))
			hit = fn(name, value, ctx);
	}
out:
	free(vals);
	free(e);
	return hit;
}

bool py_dict__each(int pid, const struct py_layout *l, uint64_t dict,
		   bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx)
{
	uint64_t keys = 0, values = 0;

	if (!dict || !procfs__read_mem(pid, dict + (uint64_t)l->ma_keys, &keys, 8) ||
	    !procfs__read_mem(pid, dict + (uint64_t)l->ma_values, &values, 8))
		return false;
	return keys_each(pid, l, keys, values ? values + (uint64_t)l->values_header : 0, fn, ctx);
}

/* An instance whose __dict__ was never asked for keeps its attributes as values only, in
 * the order of its class's cached keys (PyHeapTypeObject.ht_cached_keys: +872 in 3.11, +880
 * in 3.12 and 3.13; checked on 3.11.2, 3.11.7, 3.12.1, 3.13.0, 3.13.5): 3.11 points at them
 * from obj - 32; 3.12 tags them at obj - 24 with bit 0 (the values 1 byte further); 3.13
 * keeps them inline after the object (tp_basicsize), behind an 8-byte header whose fourth
 * byte says they are valid. */
#define TP_BASICSIZE	32

bool py_obj__attrs_each(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
			bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx)
{
	uint64_t dict = 0, type = 0, keys = 0, values = 0, size = 0;
	uint8_t valid = 0;

	if (!l->known || minor < 11 || minor > 13 ||
	    !procfs__read_mem(pid, obj + (uint64_t)l->managed_dict, &dict, 8))
		return false;
	if (dict && !(dict & 1))
		return py_dict__each(pid, l, dict, fn, ctx);
	if (!procfs__read_mem(pid, obj + OB_TYPE, &type, 8) ||
	    !procfs__read_mem(pid, type + (minor == 11 ? 872 : 880), &keys, 8) || !keys)
		return false;
	if (minor == 11) {
		if (!procfs__read_mem(pid, obj - 32, &values, 8))
			return false;
	} else if (minor == 12) {
		values = dict ? dict + 1 : 0;
	} else if (procfs__read_mem(pid, type + TP_BASICSIZE, &size, 8) && size < 4096 &&
		   procfs__read_mem(pid, obj + size + 3, &valid, 1) && valid) {
		values = obj + size + 8;
	}
	return values && keys_each(pid, l, keys, values, fn, ctx);
}

uint64_t py_dict__of_instance(int pid, const struct py_layout *l, uint64_t obj)
{
	uint64_t dict = 0;

	if (!l->known || !procfs__read_mem(pid, obj + (uint64_t)l->managed_dict, &dict, 8))
		return 0;
	return dict & 1 ? 0 : dict;	/* 3.12 tags inline values (no dict yet) with bit 0 */
}

struct find_ctx {
	const char *key;
	uint64_t value;
};

static bool find_key(const char *key, uint64_t value, void *ctx)
{
	struct find_ctx *f = ctx;

	if (strcmp(key, f->key) != 0)
		return false;
	f->value = value;
	return true;
}

uint64_t py_dict__get(int pid, const struct py_layout *l, uint64_t dict, const char *key)
{
	struct find_ctx f = { .key = key };

	py_dict__each(pid, l, dict, find_key, &f);
	return f.value;
}

uint64_t py_obj__attr(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
		      const char *key)
{
	struct find_ctx f = { .key = key };

	py_obj__attrs_each(pid, l, minor, obj, find_key, &f);
	return f.value;
}
