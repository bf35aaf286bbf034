/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_MODEL_H
#define __CIRRON_PY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pyobj/py_dict.h"
#include "pyobj/pytypes.h"

/* A torch Module's parameters, found in the target's memory: dotted names as
 * named_parameters() gives them (a parameter shared by two modules once, first name). */
struct py_param {
	char name[256];
	uint64_t obj;		/* the Parameter (PyObject *) */
	uint64_t type;		/* its class when found (a freed object's changes) */
};

struct py_params {
	struct py_param *v;
	size_t n, cap;
};

/* Walks module's _parameters and _modules (recursively, at most 64 deep) into out.
 * Returns 0 or -EINVAL (not a module: no _parameters in its __dict__). */
int py_model__params(int pid, const struct py_layout *l, uint64_t module, struct py_params *out);
void py_params__free(struct py_params *p);

/* Calls fn(value, name, outer, ctx) for every local (name: its variable name) and saved
 * value-stack entry (name "") of every thread's Python frames (pyobj/py_frames.c), outer:
 * its frame's place from the thread's oldest (0). CPython 3.11 to 3.13 (minor); interp: the
 * PyInterpreterState. A thread whose frames changed under every walk gives the longest
 * part seen. Returns how many threads did, -ENOTSUP (another version) or -EIO. */
int py_frames__each(int pid, const struct py_layout *l, uint32_t minor, uint64_t interp,
		    void (*fn)(uint64_t value, const char *name, int outer, void *ctx), void *ctx);

#endif
