// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Reads PyObject / PyTypeObject fields of a running target (procfs__read_mem). The
// offsets used here have been stable on x86-64 from CPython 3.8 to 3.13: ob_type +8,
// tp_name +24, tp_base +256, tp_mro +344 (a tuple: ob_size +16, items +24).
#include <stdio.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/py_dict.h"
#include "pyobj/pytypes.h"

#define OB_TYPE		8
#define TP_NAME		24
#define TP_FLAGS	168
#define TP_BASE		256
#define F_MANAGED_DICT	(1ul << 4)
#define TP_MRO		344
#define TUPLE_SIZE	16
#define TUPLE_ITEMS	24
#define MAX_BASES	32

static bool read_name(int pid, uint64_t type, char *buf, size_t size)
{
	uint64_t p;

	if (!procfs__read_mem(pid, type + TP_NAME, &p, sizeof(p)))
		return false;
	memset(buf, 0, size);
	/* tp_name may sit near the end of a mapping: read less rather than fail */
	for (size_t len = size - 1; len >= 8; len /= 2)
		if (procfs__read_mem(pid, p, buf, len)) {
			buf[len] = 0;
			return true;
		}
	return false;
}

struct py_type *py_types__classify(struct py_types *c, int pid, uint64_t obj)
{
	uint64_t type;

	if (!procfs__read_mem(pid, obj + OB_TYPE, &type, sizeof(type)))
		return NULL;
	return py_types__classify_type(c, pid, type);
}

struct py_type *py_types__classify_type(struct py_types *c, int pid, uint64_t type)
{
	struct py_type *t;
	uint64_t base, mro = 0, flags = 0;
	int64_t nmro = 0;
	bool optimizer = false;
	char name[64];

	if (!type)
		return NULL;
	for (int i = 0; i < c->n; i++)
		if (c->v[i].type == type)
			return &c->v[i];
	if (c->n == PYTYPES_MAX || !read_name(pid, type, name, sizeof(name)))
		return NULL;
	t = &c->v[c->n++];
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->kind = PYK_OTHER;
	snprintf(t->name, sizeof(t->name), "%s", name);
	/* dynamo's frame callback (torch._dynamo.convert_frame): called once per frame it
	 * compiles (or decides to skip), never for a frame it has compiled */
	if (!strcmp(name, "CatchErrorsWrapper")) {
		t->kind = PYK_COMPILER;
		return t;
	}
	t->wrapper = !strcmp(name, "OptimizedModule");
	t->managed_dict = procfs__read_mem(pid, type + TP_FLAGS, &flags, sizeof(flags)) &&
			  (flags & F_MANAGED_DICT);
	/* Walk the MRO (tp_base alone misses mixins: a Keras model on torch is a Module only
	 * through its third base): Module makes it a model part, _Loss a loss function. */
	if (procfs__read_mem(pid, type + TP_MRO, &mro, sizeof(mro)) && mro &&
	    procfs__read_mem(pid, mro + TUPLE_SIZE, &nmro, sizeof(nmro)) && nmro > 0) {
		for (int64_t i = 0; i < nmro && i < MAX_BASES; i++) {
			if (!procfs__read_mem(pid, mro + TUPLE_ITEMS + 8 * (uint64_t)i, &base,
					      sizeof(base)) || !read_name(pid, base, name, sizeof(name)))
				break;
			if (!strcmp(name, "_Loss") || !strcmp(name, "_WeightedLoss")) {
				t->kind = PYK_LOSS;
				break;
			}
			if (!strcmp(name, "Module"))
				t->kind = PYK_MODULE;
			optimizer |= !strcmp(name, "Optimizer");
		}
		if (t->kind == PYK_OTHER && optimizer)
			t->kind = PYK_OPTIMIZER;
		return t;
	}
	/* no MRO yet (a class being built): the tp_base chain */
	base = type;
	for (int depth = 0; depth < MAX_BASES && base; depth++) {
		if (!read_name(pid, base, name, sizeof(name)))
			break;
		if (!strcmp(name, "_Loss") || !strcmp(name, "_WeightedLoss")) {
			t->kind = PYK_LOSS;
			break;
		}
		if (!strcmp(name, "Module"))
			t->kind = PYK_MODULE;
		if (!procfs__read_mem(pid, base + TP_BASE, &base, sizeof(base)))
			break;
	}
	return t;
}

/* Where obj's __dict__ keeps `training`. A small module's dict is split (the keys object
 * lists attribute names in order, the values array holds them at the same index): the chain
 * managed_dict -> ma_values -> values[i]. A module with many attributes (HF and Lightning
 * models: more than the 30 keys a split dict shares) has a combined dict: the entries after
 * the index table hold {key, value} ({hash, key, value} for non-str keys), so the chain is
 * managed_dict -> ma_keys -> entries[i].value. A combined dict that grows moves its entries;
 * the loader finds the chain again when the value read is not a bool. */
void py_types__find_training(struct py_type *t, int pid, uint64_t obj, const struct py_layout *l)
{
	uint64_t dict, keys, values, nentries, key, entries;
	uint8_t log2_index_bytes, kind = 0;
	size_t esize;
	char name[sizeof("training")];

	t->nderef = 0;
	if (!l->known ||
	    !procfs__read_mem(pid, obj + (uint64_t)l->managed_dict, &dict, sizeof(dict)) || !dict ||
	    !procfs__read_mem(pid, dict + (uint64_t)l->ma_values, &values, sizeof(values)) ||
	    !procfs__read_mem(pid, dict + (uint64_t)l->ma_keys, &keys, sizeof(keys)) || !keys ||
	    !procfs__read_mem(pid, keys + (uint64_t)l->dk_log2_index_bytes, &log2_index_bytes, 1) ||
	    log2_index_bytes > 20 ||
	    /* dk_kind is the byte after dk_log2_index_bytes (3.11 to 3.13) */
	    (!values && !procfs__read_mem(pid, keys + (uint64_t)l->dk_log2_index_bytes + 1, &kind, 1)) ||
	    !procfs__read_mem(pid, keys + (uint64_t)l->dk_nentries, &nentries, sizeof(nentries)))
		return;
	esize = !values && kind == 0 ? 24 : 16;	/* DICT_KEYS_GENERAL entries carry the hash */
	entries = keys + (uint64_t)l->dk_indices + (1ull << log2_index_bytes);
	/* Module.__init__ sets training first: it is entry 0, but look a little further. */
	for (uint64_t i = 0; i < nentries && i < 16; i++) {
		uint64_t entry = entries + esize * i + (esize - 16);

		if (!procfs__read_mem(pid, entry, &key, sizeof(key)) || !key ||
		    !procfs__read_mem(pid, key + (uint64_t)l->ascii_data, name, sizeof(name)) ||
		    memcmp(name, "training", sizeof(name)) != 0)
			continue;
		t->chain[0] = (int32_t)l->managed_dict;
		if (values) {
			t->chain[1] = (int32_t)l->ma_values;
			t->chain[2] = (int32_t)(l->values_header + 8 * (int64_t)i);
		} else {
			t->chain[1] = (int32_t)l->ma_keys;
			t->chain[2] = (int32_t)(entry + 8 - keys);
		}
		t->nderef = 3;
		return;
	}
}

/* bool is an int subclass: its first digit (+24 in 3.11 to 3.13) is 0 or 1. */
int py_types__read_bool(int pid, uint64_t addr)
{
	uint64_t type;
	uint32_t digit;
	char name[16];

	if (!addr || !procfs__read_mem(pid, addr + OB_TYPE, &type, sizeof(type)) ||
	    !read_name(pid, type, name, sizeof(name)) || strcmp(name, "bool") != 0 ||
	    !procfs__read_mem(pid, addr + 24, &digit, sizeof(digit)) || digit > 1)
		return -1;
	return (int)digit;
}

/* OptimizedModule registers the module it wraps as a submodule: _modules["_orig_mod"]. */
struct py_type *py_types__wrapped(struct py_types *c, int pid, uint64_t obj,
				  const struct py_layout *l)
{
	uint64_t dict = 0, orig, type = 0;
	struct py_wrapped *w;

	for (int i = 0; i < c->nwrapped; i++)
		if (c->wrapped[i].obj == obj)
			return c->wrapped[i].orig;
	w = &c->wrapped[c->nwrapped < PY_WRAPPED_MAX ? c->nwrapped++ : (int)(obj % PY_WRAPPED_MAX)];
	w->obj = obj;
	w->orig = NULL;
	if (l->known && procfs__read_mem(pid, obj + (uint64_t)l->managed_dict, &dict, sizeof(dict)) &&
	    (orig = py_dict__get(pid, l, py_dict__get(pid, l, dict, "_modules"), "_orig_mod")) &&
	    procfs__read_mem(pid, orig + OB_TYPE, &type, sizeof(type)))
		w->orig = py_types__classify_type(c, pid, type);
	return w->orig;
}
