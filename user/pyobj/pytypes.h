/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PYTYPES_H
#define __CIRRON_PYTYPES_H

#include <stdbool.h>
#include <stdint.h>
#include "pyobj/py_layout.h"

/* What a called Python object is, from its class chain read in the target's memory:
 * PYK_COMPILER is dynamo's frame callback (torch.compile compiling a frame). */
enum py_kind { PYK_OTHER, PYK_MODULE, PYK_LOSS, PYK_COMPILER, PYK_OPTIMIZER };

#define PYTYPES_MAX 512

struct py_type {
	uint64_t type;		/* PyTypeObject * in the target */
	enum py_kind kind;
	char name[64];		/* tp_name */
	bool managed_dict;	/* Py_TPFLAGS_MANAGED_DICT (3.11+): instances keep a __dict__
				 * before the object (py_layout.managed_dict) */
	int nderef;		/* modules: the pointer chain to `training`, 0 if not found */
	int32_t chain[3];
	int refinds;		/* times the chain was looked for again (capped) */
	bool verdict_set;	/* written to BPF's verdict map */
	bool wrapper;		/* torch.compile's OptimizedModule: names the module it wraps */
};

/* OptimizedModule instances seen, and the class of the module each wraps (_orig_mod) */
#define PY_WRAPPED_MAX 16
struct py_wrapped {
	uint64_t obj;
	struct py_type *orig;	/* NULL: not found */
};

/* Classes seen in one target, cached: a module's class is read once. */
struct py_types {
	struct py_type v[PYTYPES_MAX];
	int n;
	uint64_t bools[2];	/* Py_False, Py_True in the target (symbols, else once seen) */
	bool bools_looked_up;
	struct py_wrapped wrapped[PY_WRAPPED_MAX];
	int nwrapped;
};

/* What a reported call counted as in the tree (struct py_calls.role, per depth). */
enum py_role { PYR_NONE, PYR_FORWARD, PYR_COMPILE };

/* Calls through CPython's slot_tp_call on the training thread, paired last-in first-out. */
struct py_calls {
	uint32_t tid;
	int depth;		/* all calls */
	int module_depth;	/* torch Module calls among them */
	int compile_depth;	/* dynamo callback calls among them: module calls inside are
				 * the compiler's (traced graphs), not forwards */
	uint8_t role[256];	/* per depth, enum py_role */
	uint64_t forwards;	/* outermost module calls seen (CIRRON_TEST_VERDICT_AFTER) */
};

/* The class of obj (a PyObject * in process pid): a torch nn.Module subclass, a loss (also
 * a Module, but not the model's forward), an optimizer (a class named Optimizer in its MRO:
 * torch's, or another framework's), or something else. NULL if unreadable. */
struct py_type *py_types__classify(struct py_types *c, int pid, uint64_t obj);
/* The same for a class (a PyTypeObject *): known classes need no read of the target. */
struct py_type *py_types__classify_type(struct py_types *c, int pid, uint64_t type);
/* For a module's class: finds where obj keeps `training` in its __dict__ (split: the chain
 * managed_dict -> ma_values -> values[i]; combined: managed_dict -> ma_keys -> entry i's
 * value) and stores the chain in t (nderef 0: not found). */
void py_types__find_training(struct py_type *t, int pid, uint64_t obj, const struct py_layout *l);
/* 1 or 0 for Py_True / Py_False at addr, -1 if it is not a bool. */
int py_types__read_bool(int pid, uint64_t addr);
/* The class of the module an OptimizedModule (torch.compile(module)) wraps: its
 * _modules["_orig_mod"], cached per instance. NULL if unreadable. */
struct py_type *py_types__wrapped(struct py_types *c, int pid, uint64_t obj,
				  const struct py_layout *l);

#endif
