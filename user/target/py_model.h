/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_MODEL_H
#define __CIRRON_PY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/pytypes.h"

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

/* Calls fn(key, value, ctx) for each entry of a dict with str keys (combined or split)
 * until it returns true; l gives the build's dict layout. Returns true if one did. */
bool py_dict__each(int pid, const struct py_layout *l, uint64_t dict,
		   bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx);
/* The same for an instance's attributes, whether its __dict__ exists or it keeps values only
 * (CPython 3.11 to 3.13, minor). */
bool py_obj__attrs_each(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
			bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx);
/* The instance __dict__ of obj (a managed dict, as torch Modules have after their first
 * __setattr__), or 0. */
/* The value of key in a str-keyed dict, or 0. */
uint64_t py_dict__get(int pid, const struct py_layout *l, uint64_t dict, const char *key);
/* An instance's attribute, from its __dict__ or its values only (as py_obj__attrs_each), or 0. */
uint64_t py_obj__attr(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
		      const char *key);
/* A str object's text (ASCII, compact) into buf; false if unreadable or too long. */
bool py_str__read(int pid, const struct py_layout *l, uint64_t obj, char *buf, size_t size);
uint64_t py_dict__of_instance(int pid, const struct py_layout *l, uint64_t obj);

/* Walks module's _parameters and _modules (recursively, at most 64 deep) into out.
 * Returns 0 or -EINVAL (not a module: no _parameters in its __dict__). */
int py_model__params(int pid, const struct py_layout *l, uint64_t module, struct py_params *out);
void py_params__free(struct py_params *p);

/* Calls fn(value, name, ctx) for every local (name: its variable name) and saved value-stack
 * entry (name "") of every thread's Python frames (target/py_frames.c). CPython 3.11 to 3.13 (minor); interp: the
 * PyInterpreterState. A thread whose frames changed under every walk gives the longest
 * part seen. Returns how many threads did, -ENOTSUP (another version) or -EIO. */
int py_frames__each(int pid, const struct py_layout *l, uint32_t minor, uint64_t interp,
		    void (*fn)(uint64_t value, const char *name, void *ctx), void *ctx);

#endif
