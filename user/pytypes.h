/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PYTYPES_H
#define __CIRRON_PYTYPES_H

#include <stdbool.h>
#include <stdint.h>

/* What a called Python object is, from its class chain read in the target's memory. */
enum py_kind { PYK_OTHER, PYK_MODULE, PYK_LOSS };

#define PYTYPES_MAX 512

struct py_type {
	uint64_t type;		/* PyTypeObject * in the target */
	enum py_kind kind;
	char name[64];		/* tp_name */
};

/* Classes seen in one target, cached: a module's class is read once. */
struct py_types {
	struct py_type v[PYTYPES_MAX];
	int n;
};

/* Calls through CPython's slot_tp_call on the training thread, paired last-in first-out. */
struct py_calls {
	uint32_t tid;
	int depth;		/* all calls */
	int module_depth;	/* torch Module calls among them */
	bool is_module[256];	/* per depth */
};

/* The class of obj (a PyObject * in process pid): a torch nn.Module subclass, a loss (also
 * a Module, but not the model's forward), or something else. NULL if unreadable. */
const struct py_type *py_types__classify(struct py_types *c, int pid, uint64_t obj);

#endif
