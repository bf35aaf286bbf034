/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_DICT_H
#define __CIRRON_PY_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pyobj/py_layout.h"

/* Calls fn(key, value, ctx) for each entry of a dict with str keys (combined or split)
 * until it returns true; l gives the build's dict layout. Returns true if one did. */
bool py_dict__each(int pid, const struct py_layout *l, uint64_t dict,
		   bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx);
/* The same for an instance's attributes, whether its __dict__ exists or it keeps values only
 * (CPython 3.11 to 3.13, minor). */
bool py_obj__attrs_each(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
			bool (*fn)(const char *key, uint64_t value, void *ctx), void *ctx);
/* The value of key in a str-keyed dict, or 0. */
uint64_t py_dict__get(int pid, const struct py_layout *l, uint64_t dict, const char *key);
/* An instance's attribute, from its __dict__ or its values only (as py_obj__attrs_each), or 0. */
uint64_t py_obj__attr(int pid, const struct py_layout *l, uint32_t minor, uint64_t obj,
		      const char *key);
/* A str object's text (ASCII, compact) into buf; false if unreadable or too long. */
bool py_str__read(int pid, const struct py_layout *l, uint64_t obj, char *buf, size_t size);
/* The instance __dict__ of obj (a managed dict, as torch Modules have after their first
 * __setattr__), or 0. */
uint64_t py_dict__of_instance(int pid, const struct py_layout *l, uint64_t obj);

#endif
