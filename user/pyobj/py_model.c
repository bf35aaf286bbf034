// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Finds a torch model's parameters in a running target (its dicts read with pyobj/py_dict.c):
// Module.__dict__ holds
// `_parameters` (name -> Parameter, or None) and `_modules` (name -> Module, or None), plain
// dicts in torch 2 and OrderedDicts (a dict subclass, same head) in torch 1. Offsets come
// from the build's object_layout (probes/cpython.json).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/py_model.h"

#define OB_TYPE		8
#define MAX_DEPTH	64

static uint64_t attr(int pid, const struct py_layout *l, uint64_t obj, const char *name)
{
	return py_dict__get(pid, l, py_dict__of_instance(pid, l, obj), name);
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
