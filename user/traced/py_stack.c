// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The names of the code running on a job's Python threads, read from its memory (py_stack.h):
// what tells Keras's training function from its test function where their names do not
// (Keras 3 names both multi_step_on_iterator), and a validation from an evaluate(). The
// offsets are py_frames.c's (CPython's headers, checked on live 3.11, 3.12 and 3.13 builds);
// a code object's co_filename and co_name follow co_localsplusnames (+96) in all three.
#include <string.h>
#include "pyobj/cpython.h"
#include "proc/procfs.h"
#include "traced/py_stack.h"
#include "traced/target.h"
#include "tftree/tf_tree.h"

struct stack_layout {
	uint32_t minor;
	uint32_t threads_head, ts_next, ts_frame;
	int32_t cframe_frame;	/* -1: ts_frame points at the frame itself */
	uint32_t fr_code, fr_previous, fr_owner;	/* fr_owner 0: no C-stack shims (3.11) */
	uint32_t ascii_data;	/* a compact ASCII str's first character */
};

static const struct stack_layout layouts[] = {
	{ 11, 16, 8, 56, 8, 32, 48, 0, 48 },
	{ 12, 72, 8, 56, 0, 0, 8, 70, 40 },
	{ 13, 7344, 8, 72, -1, 0, 8, 70, 40 },
};

#define CO_FILENAME	112
#define CO_NAME		120
#define FRAMES_MAX	256
#define THREADS_MAX	64
#define OWNED_BY_CSTACK	3
#define WALK_TRIES	16

static bool read_str(int pid, const struct stack_layout *l, uint64_t obj, char *buf, size_t n)
{
	memset(buf, 0, n);
	return obj && procfs__read_mem(pid, obj + l->ascii_data, buf, n - 1);
}

/* One thread's frames, innermost first: the Keras methods on them. *whole: the walk reached
 * the thread's first frame (a busy thread pops and reuses frames under a walk: a chain read
 * halfway through a change ends early or wanders off). */
static int walk_thread(int pid, const struct stack_layout *l, uint64_t ts, bool *whole,
		       bool *in_call)
{
	bool innermost = true;

	uint64_t fr = 0, p = 0;
	bool in_eval = false, in_predict = false, in_fit = false;

	*whole = false;
	*in_call = false;
	if (!procfs__read_mem(pid, ts + l->ts_frame, &p, 8) || !p)
		return TFH_NONE;
	fr = p;
	if (l->cframe_frame >= 0 && !procfs__read_mem(pid, p + (uint32_t)l->cframe_frame, &fr, 8))
		return TFH_NONE;
	for (int i = 0; fr && i < FRAMES_MAX; i++) {
		uint64_t code = 0, s = 0;
		uint8_t owner = 0;
		char name[32], file[160];

		if (l->fr_owner && procfs__read_mem(pid, fr + l->fr_owner, &owner, 1) &&
		    owner == OWNED_BY_CSTACK)
			goto next;
		if (!procfs__read_mem(pid, fr + l->fr_code, &code, 8) || !code ||
		    !procfs__read_mem(pid, code + CO_NAME, &s, 8) || !read_str(pid, l, s, name,
										sizeof(name)))
			goto next;
		if (innermost) {	/* execute.py's, around TFE_Py_Execute(Cancelable) */
			*in_call = !strcmp(name, "quick_execute") ||
				   !strcmp(name, "execute_with_cancellation");
			innermost = false;
		}
		if (strcmp(name, "fit") != 0 && strcmp(name, "evaluate") != 0 &&
		    strcmp(name, "predict") != 0)
			goto next;
		if (!procfs__read_mem(pid, code + CO_FILENAME, &s, 8) ||
		    !read_str(pid, l, s, file, sizeof(file)) || !strstr(file, "keras"))
			goto next;
		if (!strcmp(name, "fit"))
			in_fit = true;
		else if (!in_fit && !in_eval && !in_predict && name[0] == 'e')
			in_eval = true;
		else if (!in_fit && !in_eval && !in_predict)
			in_predict = true;
next:
		if (!procfs__read_mem(pid, fr + l->fr_previous, &fr, 8))
			break;
		*whole = !fr;
	}
	if (in_predict)
		return TFH_PREDICT;
	if (in_eval)
		return in_fit ? TFH_VALIDATION : TFH_EVALUATE;
	return in_fit ? TFH_FIT : TFH_NONE;
}

/* Walked again until one walk is whole (WALK_TRIES at most; then the last walk's word). */
static int thread_hint(int pid, const struct stack_layout *l, uint64_t ts, bool *in_call)
{
	int h = TFH_NONE;

	for (int i = 0; i < WALK_TRIES; i++) {
		bool whole;

		h = walk_thread(pid, l, ts, &whole, in_call);
		if (whole)
			break;
	}
	return h;
}

int py_stack__keras(struct sym_cache *syms, struct target *t, bool *in_call)
{
	*in_call = false;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct mapped_file *f = &t->files[i];
		const struct stack_layout *l = NULL;
		uint64_t interp = 0, ts = 0;
		uint32_t hex;

		if (!strstr(f->path, "python") || cpython__version(syms, t->pid, f, &hex))
			continue;
		for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++)
			if (layouts[k].minor == (hex >> 16 & 0xff))
				l = &layouts[k];
		if (!l)
			return TFH_NONE;
		if (cpython__interp(syms, t->pid, f, hex, &interp) ||
		    !procfs__read_mem(t->pid, interp + l->threads_head, &ts, 8))
			continue;	/* not the file that holds the runtime (pyenv's executable) */
		for (int n = 0; ts && n < THREADS_MAX; n++) {
			int h = thread_hint(t->pid, l, ts, in_call);

			if (h != TFH_NONE)
				return h;
			if (!procfs__read_mem(t->pid, ts + l->ts_next, &ts, 8))
				break;
		}
		return TFH_NONE;
	}
	return TFH_NONE;
}
