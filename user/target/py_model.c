// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Finds a torch model's parameters in a running target: Module.__dict__ holds
// `_parameters` (name -> Parameter, or None) and `_modules` (name -> Module, or None), plain
// dicts in torch 2 and OrderedDicts (a dict subclass, same head) in torch 1. Offsets come
// from the build's object_layout (probes/cpython.json).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target/procfs.h"
#include "target/py_model.h"

#define OB_TYPE		8
#define DK_KIND		10	/* PyDictKeysObject.dk_kind, 3.11 to 3.13: 0 general, 1 str, 2 split */
#define STR_LENGTH	16
#define MAX_ENTRIES	65536
#define MAX_DEPTH	64

static bool read_str(int pid, const struct py_layout *l, uint64_t obj, char *buf, size_t size)
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

		if (value && read_str(pid, l, key, name, sizeof(name)))
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

static uint64_t attr(int pid, const struct py_layout *l, uint64_t obj, const char *name)
{
	struct find_ctx f = { .key = name };

	py_dict__each(pid, l, py_dict__of_instance(pid, l, obj), find_key, &f);
	return f.value;
}

struct walk {
	int pid;
	const struct py_layout *l;
	struct py_params *out;
	const char *prefix;
	int depth;
	uint64_t none;		/* Py_None, once told apart from a Parameter */
};

static bool is_none(struct walk *w, uint64_t obj)
{
	uint64_t type = 0, tp_name = 0;
	char name[9] = {};

	if (w->none)
		return obj == w->none;
	if (!procfs__read_mem(w->pid, obj + 8, &type, 8) ||
	    !procfs__read_mem(w->pid, type + 24, &tp_name, 8) ||
	    !procfs__read_mem(w->pid, tp_name, name, sizeof(name) - 1))
		return true;
	if (strcmp(name, "NoneType") != 0)
		return false;
	w->none = obj;
	return true;
}

static bool add_param(const char *key, uint64_t value, void *ctx)
{
	struct walk *w = ctx;
	struct py_params *p = w->out;

	if (is_none(w, value))
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].obj == value)
			return false;	/* shared (tied) weights: named once */
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct py_param *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return true;
		p->v = v;
		p->cap = cap;
	}
	snprintf(p->v[p->n].name, sizeof(p->v[p->n].name), "%s%s", w->prefix, key);
	p->v[p->n].type = 0;
	procfs__read_mem(w->pid, value + OB_TYPE, &p->v[p->n].type, 8);
	p->v[p->n++].obj = value;
	return false;
}

static int walk_module(struct walk *w, uint64_t module);

static bool add_module(const char *key, uint64_t value, void *ctx)
{
	struct walk *w = ctx, sub = *w;
	char prefix[256];

	if (is_none(w, value) || w->depth >= MAX_DEPTH)
		return false;
	snprintf(prefix, sizeof(prefix), "%s%s.", w->prefix, key);
	sub.prefix = prefix;
	sub.depth++;
	walk_module(&sub, value);
	w->none = sub.none;
	return false;
}

static int walk_module(struct walk *w, uint64_t module)
{
	uint64_t params = attr(w->pid, w->l, module, "_parameters");
	uint64_t modules = attr(w->pid, w->l, module, "_modules");

	if (!params)
		return -EINVAL;
	py_dict__each(w->pid, w->l, params, add_param, w);
	if (modules)
		py_dict__each(w->pid, w->l, modules, add_module, w);
	return 0;
}

int py_model__params(int pid, const struct py_layout *l, uint64_t module, struct py_params *out)
{
	struct walk w = { .pid = pid, .l = l, .out = out, .prefix = "" };

	return walk_module(&w, module);
}

void py_params__free(struct py_params *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* Where a running frame's locals lie, per minor version (offsets from CPython's headers, checked
 * against 3.11.2, 3.11.7, 3.12.1, 3.13.0 and 3.13.5 builds by reading a live interpreter): the
 * interpreter's threads.head; a PyThreadState's next, and its current frame (3.11, 3.12:
 * through ts->cframe, a _PyCFrame, at cframe_frame; 3.13: ts->current_frame); an
 * _PyInterpreterFrame's code object (3.13: f_executable), previous, stacktop (valid
 * localsplus entries: the locals, then the value stack, saved when the frame made a Python
 * call; -1 while it runs) and localsplus. A code object's co_localsplusnames (a tuple, as
 * long as the frame's locals, cells and free variables) is at +96 in all three. 3.12 and
 * 3.13 put an entry frame owned by the C stack (owner FRAME_OWNED_BY_CSTACK, 3) where C
 * code calls into Python: it holds no locals (3.13's f_executable is None there), and the
 * walk steps over it. */
struct frame_layout {
	uint32_t minor;
	uint32_t threads_head, ts_next, ts_frame;
	int32_t cframe_frame;	/* -1: ts_frame points at the frame itself */
	uint32_t fr_code, fr_previous, fr_stacktop, fr_localsplus;
	uint32_t fr_owner;	/* 0: no entry frames (3.11) */
};

static const struct frame_layout frame_layouts[] = {
	{ 11, 16, 8, 56, 8, 32, 48, 64, 72, 0 },
	{ 12, 72, 8, 56, 0, 0, 8, 64, 72, 70 },
	{ 13, 7344, 8, 72, -1, 0, 8, 64, 72, 70 },
};
#define FRAME_OWNED_BY_CSTACK	3

#define CO_LOCALSPLUSNAMES	96
#define TUPLE_SIZE		16
#define TUPLE_ITEMS		24
#define FRAMES_MAX		256
#define THREADS_MAX		256
#define SLOTS_MAX		512

static uint64_t current_frame(int pid, const struct frame_layout *fl, uint64_t ts)
{
	uint64_t p = 0, fr = 0;

	if (!procfs__read_mem(pid, ts + fl->ts_frame, &p, 8) || !p)
		return 0;
	if (fl->cframe_frame < 0)
		return p;
	return procfs__read_mem(pid, p + (uint32_t)fl->cframe_frame, &fr, 8) ? fr : 0;
}

/* The names of a frame's locals (co_localsplusnames): how many, and where the tuple's items
 * are. 0 when unreadable (a frame whose f_executable is no code object reads as garbage
 * and is caught by the bounds). */
static int64_t local_names(int pid, const struct frame_layout *fl, uint64_t fr, uint64_t *items)
{
	uint64_t code = 0, names = 0;
	int64_t n = 0;

	if (!procfs__read_mem(pid, fr + fl->fr_code, &code, 8) || !code ||
	    !procfs__read_mem(pid, code + CO_LOCALSPLUSNAMES, &names, 8) || !names ||
	    !procfs__read_mem(pid, names + TUPLE_SIZE, &n, 8) || n < 0 || n > SLOTS_MAX)
		return 0;
	*items = names + TUPLE_ITEMS;
	return n;
}

/* Whether the frame's code is a code object (its class named "code": known once seen). */
static bool is_code(int pid, const struct frame_layout *fl, uint64_t fr, uint64_t *code_type)
{
	uint64_t code = 0, type = 0, tp_name = 0;
	char name[5] = {};

	if (!procfs__read_mem(pid, fr + fl->fr_code, &code, 8) || !code ||
	    !procfs__read_mem(pid, code + OB_TYPE, &type, 8) || !type)
		return false;
	if (*code_type)
		return type == *code_type;
	if (!procfs__read_mem(pid, type + 24, &tp_name, 8) ||
	    !procfs__read_mem(pid, tp_name, name, sizeof(name)) || memcmp(name, "code", 5) != 0)
		return false;
	*code_type = type;
	return true;
}

struct frame_slots {
	struct frame_slot {
		uint64_t value;
		char name[64];
	} *v;
	size_t n, cap;
};

static void slot_add(struct frame_slots *fs, uint64_t value, const char *name)
{
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 256;
		struct frame_slot *v = cap <= 8192 ? realloc(fs->v, cap * sizeof(*v)) : NULL;

		if (!v)
			return;
		fs->v = v;
		fs->cap = cap;
	}
	fs->v[fs->n].value = value;
	snprintf(fs->v[fs->n++].name, sizeof(fs->v[0].name), "%s", name);
}

/* One walk of a thread's frames, newest first, into fs. Returns true when it reached the
 * oldest frame; false when a frame changed under it (its code no code object: it returned
 * and its memory holds another frame by now). */
static bool walk_thread(int pid, const struct py_layout *l, const struct frame_layout *fl,
			uint64_t ts, uint64_t *code_type, struct frame_slots *fs)
{
	uint64_t fr = current_frame(pid, fl, ts), slots[SLOTS_MAX], name_objs[SLOTS_MAX];

	for (int k = 0; fr && k < FRAMES_MAX; k++) {
		int32_t top = 0;
		uint64_t items = 0;
		int64_t nnames;
		uint8_t owner = 0;

		if (fl->fr_owner && procfs__read_mem(pid, fr + fl->fr_owner, &owner, 1) &&
		    owner == FRAME_OWNED_BY_CSTACK) {
			if (!procfs__read_mem(pid, fr + fl->fr_previous, &fr, 8))
				return false;
			continue;
		}
		if (!is_code(pid, fl, fr, code_type))
			return false;
		nnames = local_names(pid, fl, fr, &items);
		if (nnames && !procfs__read_mem(pid, items, name_objs, (size_t)nnames * 8))
			nnames = 0;
		/* A frame that runs (or called C) has stacktop -1: its locals (the first
		 * co_nlocalsplus slots) are valid all the same */
		if (!procfs__read_mem(pid, fr + fl->fr_stacktop, &top, 4) || top < nnames)
			top = (int32_t)nnames;
		if (top > 0) {
			size_t n = top < SLOTS_MAX ? (size_t)top : SLOTS_MAX;

			if (procfs__read_mem(pid, fr + fl->fr_localsplus, slots, n * 8))
				for (size_t i = 0; i < n; i++) {
					char name[64];

					if (!slots[i])
						continue;
					if ((int64_t)i >= nnames ||
					    !read_str(pid, l, name_objs[i], name, sizeof(name)))
						name[0] = 0;
					slot_add(fs, slots[i], name);
				}
		}
		if (!procfs__read_mem(pid, fr + fl->fr_previous, &fr, 8))
			return false;
	}
	return true;
}

/* A busy thread pushes and pops frames faster than a walk reads them: walked again until one
 * walk sees a whole chain (the outer frames, main()'s, change least), else the longest. */
#define WALK_TRIES 16

int py_frames__each(int pid, const struct py_layout *l, uint32_t minor, uint64_t interp,
		    void (*fn)(uint64_t value, const char *name, void *ctx), void *ctx)
{
	const struct frame_layout *fl = NULL;
	uint64_t ts = 0, code_type = 0;
	int partial = 0;

	for (size_t i = 0; i < sizeof(frame_layouts) / sizeof(frame_layouts[0]); i++)
		if (frame_layouts[i].minor == minor)
			fl = &frame_layouts[i];
	if (!fl)
		return -ENOTSUP;
	if (!procfs__read_mem(pid, interp + fl->threads_head, &ts, 8))
		return -EIO;
	for (int t = 0; ts && t < THREADS_MAX; t++) {
		struct frame_slots best = {}, fs = {};
		bool whole_seen = false;

		for (int tries = 0; tries < WALK_TRIES; tries++) {
			bool whole;

			fs.n = 0;
			whole = walk_thread(pid, l, fl, ts, &code_type, &fs);
			whole_seen |= whole;
			if (whole || fs.n > best.n) {
				struct frame_slots tmp = best;

				best = fs;
				fs = tmp;
			}
			if (whole)
				break;
		}
		if (!whole_seen)
			partial++;
		for (size_t i = 0; i < best.n; i++)
			fn(best.v[i].value, best.v[i].name, ctx);
		free(best.v);
		free(fs.v);
		if (!procfs__read_mem(pid, ts + fl->ts_next, &ts, 8))
			break;
	}
	return partial;
}
