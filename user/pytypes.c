// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Reads PyObject / PyTypeObject fields of a running target (procfs__read_mem). The
// offsets used here have been stable on x86-64 from CPython 3.8 to 3.13: ob_type +8,
// tp_name +24, tp_base +256.
#include <stdio.h>
#include <string.h>
#include "procfs.h"
#include "pytypes.h"

#define OB_TYPE		8
#define TP_NAME		24
#define TP_BASE		256
#define MAX_BASES	16

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

const struct py_type *py_types__classify(struct py_types *c, int pid, uint64_t obj)
{
	struct py_type *t;
	uint64_t type, base;
	char name[64];

	if (!procfs__read_mem(pid, obj + OB_TYPE, &type, sizeof(type)))
		return NULL;
	for (int i = 0; i < c->n; i++)
		if (c->v[i].type == type)
			return &c->v[i];
	if (c->n == PYTYPES_MAX || !read_name(pid, type, name, sizeof(name)))
		return NULL;
	t = &c->v[c->n++];
	t->type = type;
	t->kind = PYK_OTHER;
	snprintf(t->name, sizeof(t->name), "%s", name);
	/* Walk the base classes: Module makes it a model part, _Loss a loss function. */
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
