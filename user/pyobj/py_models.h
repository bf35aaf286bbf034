/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_MODELS_H
#define __CIRRON_PY_MODELS_H

#include <stddef.h>
#include <stdint.h>
#include "pyobj/py_model.h"

/* A model the job trains, found in its memory. */
struct py_model {
	uint64_t module;	/* the Module whose parameters are read (wrappers taken off) */
	char name[128];		/* its namespace: the name it was found by (a global, a local,
				 * trainer.model), else its class */
	const char *found_by;	/* forward, main_globals, frame_locals, attribute */
	int rank;		/* how far in its name was found: 0 a global, larger for a local
				 * of a newer frame, INT_MAX its class (py_models.c) */
	size_t cand;		/* (while looking) the object it was found as */
	struct py_params params;
};

struct py_models {
	struct py_model *v;
	size_t n;
	size_t optimizers;	/* torch optimizers found: their parameters chose the models */
	size_t roots, candidates, locals;	/* objects looked at (for -vv) */
	int frames_err;		/* the frames' walk: threads seen in part, or -errno */
};

/* Where to look. */
struct py_roots {
	uint64_t forward;	/* the outermost forward's Module (Python frames), 0: none */
	uint64_t main_dict;	/* __main__'s globals, 0: not found */
	uint64_t interp;	/* the PyInterpreterState: frames' locals, 0: not read */
	uint32_t minor;		/* CPython 3.minor */
	bool whole_frames;	/* -EAGAIN when a thread's frames changed under every walk */
};

/* Finds the models (pyobj/py_models.c says how). Returns 0, -ENOENT when none, or
 * -EAGAIN (r->whole_frames: a thread's frames could not be walked whole). */
int py_models__find(int pid, const struct py_layout *l, struct py_types *types,
		    const struct py_roots *r, struct py_models *out);
void py_models__free(struct py_models *m);
/* A copy of m of its own into out. Returns 0 or -ENOMEM (out empty). */
int py_models__dup(const struct py_models *m, struct py_models *out);

#endif
