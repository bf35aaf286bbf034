// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The locals of every thread's running Python frames, read from the target's memory while it
// runs (--snapshots looks for the models there). A busy thread pushes and pops frames faster
// than a walk reads them, so a walk must be quick: one read per frame (its header and first
// slots together), and what a code object says (that it is one, its locals' names) read
// once per look and kept.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/py_model.h"

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

#define OB_TYPE			8
#define TP_NAME			24
#define CO_LOCALSPLUSNAMES	96
#define TUPLE_SIZE		16
#define TUPLE_ITEMS		24
#define FRAMES_MAX		256
#define THREADS_MAX		256
#define SLOTS_MAX		512
#define SLOTS_INLINE		32	/* slots read with the frame's header */
#define NAMES_KEPT		128	/* a code object's local names kept (later slots: "") */
#define CODES_KEPT		64
#define WALK_TRIES		16

/* A code object as a walk needs it: its locals' names. */
struct code_info {
	uint64_t code;
	int64_t nnames;
	char (*names)[64];	/* min(nnames, NAMES_KEPT) */
};

struct walk_ctx {
	int pid;
	const struct py_layout *l;
	const struct frame_layout *fl;
	uint64_t code_type;	/* the class "code", once seen */
	struct code_info codes[CODES_KEPT];
	int ncodes;
	struct code_info unnamed;	/* a code object past CODES_KEPT: its names unread */
};

struct frame_slots {
	struct frame_slot {
		uint64_t value;
		const char *name;	/* in a code_info, or "" */
		int frame;		/* its frame, 0: the newest */
	} *v;
	size_t n, cap;
	int frames;			/* frames walked */
};

static uint64_t current_frame(const struct walk_ctx *w, uint64_t ts)
{
	uint64_t p = 0, fr = 0;

	if (!procfs__read_mem(w->pid, ts + w->fl->ts_frame, &p, 8) || !p)
		return 0;
	if (w->fl->cframe_frame < 0)
		return p;
	return procfs__read_mem(w->pid, p + (uint32_t)w->fl->cframe_frame, &fr, 8) ? fr : 0;
}

/* Whether code is a code object (its class named "code": known once seen). */
static bool is_code(struct walk_ctx *w, uint64_t code)
{
	uint64_t type = 0, tp_name = 0;
	char name[5] = {};

	if (!code || !procfs__read_mem(w->pid, code + OB_TYPE, &type, 8) || !type)
		return false;
	if (w->code_type)
		return type == w->code_type;
	if (!procfs__read_mem(w->pid, type + TP_NAME, &tp_name, 8) ||
	    !procfs__read_mem(w->pid, tp_name, name, sizeof(name)) || memcmp(name, "code", 5) != 0)
		return false;
	w->code_type = type;
	return true;
}

/* The code object's names, read once per look; NULL when code is no code object (the
 * frame changed under the walk: its memory holds something else by now). */
static const struct code_info *code_info(struct walk_ctx *w, uint64_t code)
{
	uint64_t names = 0, objs[NAMES_KEPT];
	struct code_info *ci;
	int64_t n = 0, keep;

	for (int i = 0; i < w->ncodes; i++)
		if (w->codes[i].code == code)
			return &w->codes[i];
	if (!is_code(w, code))
		return NULL;
	if (!procfs__read_mem(w->pid, code + CO_LOCALSPLUSNAMES, &names, 8) || !names ||
	    !procfs__read_mem(w->pid, names + TUPLE_SIZE, &n, 8) || n < 0 || n > SLOTS_MAX)
		n = 0;
	keep = n < NAMES_KEPT ? n : NAMES_KEPT;
	if (w->ncodes == CODES_KEPT) {	/* full (slots point at names kept): no names */
		w->unnamed.code = code;
		w->unnamed.nnames = n;
		return &w->unnamed;
	}
	ci = &w->codes[w->ncodes];
	ci->names = calloc(keep ? (size_t)keep : 1, sizeof(*ci->names));
	if (!ci->names)
		return NULL;
	ci->code = code;
	ci->nnames = n;
	if (keep && !procfs__read_mem(w->pid, names + TUPLE_ITEMS, objs, (size_t)keep * 8))
		keep = 0;
	for (int64_t i = 0; i < keep; i++)
		if (!py_str__read(w->pid, w->l, objs[i], ci->names[i], sizeof(ci->names[i])))
			ci->names[i][0] = 0;
	w->ncodes++;
	return ci;
}

static void slot_add(struct frame_slots *fs, uint64_t value, const char *name, int frame)
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
	fs->v[fs->n].frame = frame;
	fs->v[fs->n++].name = name;
}

/* One frame's header and first slots in one read (the end of a data stack chunk may cut
 * it short: then the header alone). Returns how many slots buf holds, or -1. */
static int read_frame(const struct walk_ctx *w, uint64_t fr, uint64_t *buf)
{
	size_t head = w->fl->fr_localsplus;

	if (procfs__read_mem(w->pid, fr, buf, head + SLOTS_INLINE * 8))
		return SLOTS_INLINE;
	return procfs__read_mem(w->pid, fr, buf, head) ? 0 : -1;
}

/* One walk of a thread's frames, newest first, into fs. Returns true when it reached the
 * oldest frame; false when a frame changed under it. */
static bool walk_thread(struct walk_ctx *w, uint64_t ts, struct frame_slots *fs)
{
	const struct frame_layout *fl = w->fl;
	uint64_t fr = current_frame(w, ts), buf[(72 + SLOTS_INLINE * 8) / 8], slots[SLOTS_MAX];

	for (int k = 0; fr && k < FRAMES_MAX; k++) {
		const unsigned char *b = (const unsigned char *)buf;
		const struct code_info *ci;
		uint64_t code, *v = slots;
		int32_t top;
		int got = read_frame(w, fr, buf);

		if (got < 0)
			return false;
		if (fl->fr_owner && b[fl->fr_owner] == FRAME_OWNED_BY_CSTACK) {
			memcpy(&fr, b + fl->fr_previous, 8);
			continue;
		}
		memcpy(&code, b + fl->fr_code, 8);
		memcpy(&top, b + fl->fr_stacktop, 4);
		ci = code_info(w, code);
		if (!ci)
			return false;
		/* A frame that runs (or called C) has stacktop -1: its locals (the first
		 * co_nlocalsplus slots) are valid all the same */
		if (top < ci->nnames)
			top = (int32_t)ci->nnames;
		if (top > SLOTS_MAX)
			top = SLOTS_MAX;
		if (top > got) {
			if (!procfs__read_mem(w->pid, fr + fl->fr_localsplus, slots, (size_t)top * 8))
				top = 0;
		} else {
			v = buf + fl->fr_localsplus / 8;
		}
		for (int32_t i = 0; i < top; i++)
			if (v[i])
				slot_add(fs, v[i], ci->names && i < ci->nnames && i < NAMES_KEPT ?
					 ci->names[i] : "", fs->frames);
		fs->frames++;
		memcpy(&fr, b + fl->fr_previous, 8);
	}
	return true;
}

int py_frames__each(int pid, const struct py_layout *l, uint32_t minor, uint64_t interp,
		    void (*fn)(uint64_t value, const char *name, int outer, void *ctx), void *ctx)
{
	struct walk_ctx *w = calloc(1, sizeof(*w));
	uint64_t ts = 0;
	int partial = 0;

	if (!w)
		return -ENOMEM;
	w->pid = pid;
	w->l = l;
	for (size_t i = 0; i < sizeof(frame_layouts) / sizeof(frame_layouts[0]); i++)
		if (frame_layouts[i].minor == minor)
			w->fl = &frame_layouts[i];
	if (!w->fl || !procfs__read_mem(pid, interp + w->fl->threads_head, &ts, 8)) {
		partial = w->fl ? -EIO : -ENOTSUP;
		free(w);
		return partial;
	}
	for (int t = 0; ts && t < THREADS_MAX; t++) {
		struct frame_slots best = {}, fs = {};
		bool whole_seen = false;

		/* walked again until one walk sees a whole chain (the outer frames, main()'s,
		 * change least), else the longest */
		for (int tries = 0; tries < WALK_TRIES; tries++) {
			bool whole;

			fs.n = 0;
			fs.frames = 0;
			whole = walk_thread(w, ts, &fs);
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
			fn(best.v[i].value, best.v[i].name, best.frames - 1 - best.v[i].frame, ctx);
		free(best.v);
		free(fs.v);
		if (!procfs__read_mem(pid, ts + w->fl->ts_next, &ts, 8))
			break;
	}
	for (int i = 0; i < w->ncodes; i++)
		free(w->codes[i].names);
	free(w);
	return partial;
}
