/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_TIER_H
#define __CIRRON_PY_TIER_H

/* A target's Python tier: what the loader knows of its interpreter and the Python calls it
 * sees (--python-frames), part of struct target. */
#include <stdbool.h>
#include <stdint.h>
#include "pyobj/grad_caller.h"
#include "pyobj/pytypes.h"

/* --python-frames sampled: where a target is in its cycle of sampled steps. */
struct py_sample {
	bool on;		/* the Python-tier probes are attached */
	uint64_t on_since_ns;	/* wall clock: when they were in */
	uint64_t accept_from_ns, accept_until_ns;	/* wall clock: the window of calls used */
	long steps;		/* the tree's step_index when the probes came / the window began */
	bool scheduled;		/* next_step is set */
	long next_step;		/* sample again once the tree's step_index reaches this */
	long samples;		/* windows so far */
	uint64_t ended_mono_ns;	/* when the last window ended */
	uint64_t attach_ns;	/* wall clock: when the window's attach began (a probe is live
				 * before its attach returns) */
	uint64_t on_ns;		/* how long the probes were attached, all windows, from the
				 * start of their attach to the end of their detach (the job pays
				 * their hits meanwhile: the loader's lag sets it) */
};

struct py_tier {
	struct py_types types;	/* --python-frames: classes of called objects */
	struct py_calls calls;
	struct py_sample sample;	/* --python-frames sampled (attach/py_sample.c) */
	struct grad_callers grad_callers;	/* who switches grad mode (grad_caller.h) */
	char why[160];		/* why the CPython tier could not attach, or "" */
	bool framework_found;	/* framework= names one from sys.modules */
	bool framework_unsupported;	/* a CPython whose sys.modules we cannot read */
	uint64_t modules_used;	/* sys.modules' size when no framework was in it */
	uint64_t model_obj;	/* the outermost forward's Module (--snapshots), 0: unknown */
};

#endif
