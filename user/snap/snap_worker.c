// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots, the worker thread of one target: finds its models ahead of time (FIND:
// pyobj/py_models.c, off the moments that matter) and reads them when asked (READ:
// snap_tensors.c).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "common/test_hooks.h"
#include "common/log.h"
#include "pyobj/torch_tensor.h"
#include "snap/snap_layout.h"
#include "snap/snap_tensors.h"
#include "snap/snap_worker.h"
#include "tree/clock.h"

/* A model found again keeps the name it had, unless this look found it by a better one
 * (farther out): its records carry one name through the run. */
static void keep_names(struct py_models *found, const struct py_models *had)
{
	for (size_t k = 0; k < found->n; k++)
		for (size_t j = 0; j < had->n; j++) {
			struct py_model *m = &found->v[k];
			const struct py_model *o = &had->v[j];

			if (o->module != m->module || o->rank > m->rank)
				continue;
			memcpy(m->name, o->name, sizeof(m->name));
			m->found_by = o->found_by;
			m->rank = o->rank;
		}
}

static void do_find(struct snap_worker *w)
{
	struct snap_result *r = &w->res;
	long delay = test_hooks__get()->find_delay_ms;
	struct py_models found;

	if (delay)	/* tests: epochs end while the look runs (this thread's, not the job's) */
		usleep((useconds_t)delay * 1000);
	r->err = py_models__find(w->req.pid, &w->req.pyl, &w->types, &w->req.roots, &found);
	snprintf(r->found_how, sizeof(r->found_how), "%zu roots, %zu locals (frames: %d), %zu "
		 "objects", found.roots, found.locals, found.frames_err, found.candidates);
	if (!r->err) {
		keep_names(&found, &w->models);
		py_models__free(&w->models);
		w->models = found;
	} else if (r->err == -EAGAIN) {
		py_models__free(&found);
		r->models = w->models.n;
		return;	/* looked for again at once */
	} else {
		py_models__free(&found);	/* the ones found before stay */
	}
	r->models = w->models.n;
	r->optimizers = w->models.optimizers;
	/* the layout, found now (off the epoch's end) where the table has none: a build whose
	 * layout is not found is said at once, for good (no read could be made), and so are
	 * the epochs that ended while this look ran; what a read will cost (bytes): the loop
	 * makes small ones itself, at once */
	if (w->models.n && snap_layout__ensure(w, false)) {
		r->refused = true;
		snprintf(r->why, sizeof(r->why), "%s", w->layout_why);
		elog("pid %d: snapshots off: %s", w->req.pid, w->layout_why);
		return;
	}
	/* and BPF's copy plan (snap_copy.c), so that BPF copies from the first loop's end on:
	 * each grad is found at the copy (there may be none yet) */
	r->plan_ok = w->models.n > 0;
	snap_copy__plan_begin(&r->plan, &w->layout);
	for (size_t k = 0; k < w->models.n; k++)
		for (size_t i = 0; i < w->models.v[k].params.n; i++) {
			struct tensor_desc d;
			char why[200];

			if (torch_tensor__read_object(w->req.pid, &w->layout, w->models.v[k].params.v[i].obj,
						      &d, why, sizeof(why))) {
				r->plan_ok = false;
				continue;
			}
			r->bytes += 2 * (uint64_t)d.numel * (uint64_t)d.elem_size;
			r->plan_ok = r->plan_ok && snap_copy__plan_add(&r->plan, &d, NULL);
		}
	if (r->err)
		snprintf(r->why, sizeof(r->why), "no torch Module with parameters found (the "
			 "outermost forward with --python-frames, __main__'s globals%s, the "
			 "frames' locals%s, the attributes of the objects there)",
			 !w->req.roots.main_dict ? ": __main__ not found" : "",
			 w->req.roots.minor >= 11 && w->req.roots.minor <= 13 ? ""
			 : ": CPython 3.11-3.13 only");
}

static void run(struct snap_worker *w)
{
	uint64_t t0 = clock__mono_ns();

	memset(&w->res, 0, sizeof(w->res));
	if (w->req.kind == SNAP_REQ_FIND)
		do_find(w);
	else
		snap_tensors__read(w);
	w->res.ms = (double)(clock__mono_ns() - t0) / 1e6;
	atomic_store(&w->done, true);
}

static void *worker_main(void *arg)
{
	struct snap_worker *w = arg;
	pid_t tid = gettid();

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->has_req && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		w->has_req = false;
		pthread_mutex_unlock(&w->mu);
		/* looking for the models is short and comes as training begins, with the first
		 * epoch's end close: at the loop's priority; a large read at the process's */
		setpriority(PRIO_PROCESS, (id_t)tid, w->req.kind == SNAP_REQ_FIND ? w->find_nice
									    : w->nice);
		run(w);
	}
	py_models__free(&w->models);
	return NULL;
}

int snap_worker__start(struct snap_worker *w)
{
	int err;

	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	err = pthread_create(&w->thread, NULL, worker_main, w);
	if (err) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		return err;
	}
	w->started = true;
	return 0;
}

void snap_worker__submit(struct snap_worker *w)
{
	atomic_store(&w->done, false);
	atomic_store(&w->cancel, false);
	pthread_mutex_lock(&w->mu);
	w->has_req = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void snap_worker__run_here(struct snap_worker *w)
{
	atomic_store(&w->cancel, false);
	run(w);
}

int snap_worker__mirror(struct snap_worker *dst, const struct snap_worker *src)
{
	struct py_models m;

	if (py_models__dup(&src->models, &m))
		return -ENOMEM;
	py_models__free(&dst->models);
	dst->models = m;
	dst->layout = src->layout;
	dst->layout_source = src->layout_source;
	dst->layout_grad_checked = src->layout_grad_checked;
	dst->layout_search_ms = src->layout_search_ms;
	dst->req.pid = src->req.pid;
	dst->req.states_fd = src->req.states_fd;
	dst->req.stats_fd = src->req.stats_fd;
	return 0;
}

void snap_worker__stop(struct snap_worker *w)
{
	if (!w->started)
		return;
	atomic_store(&w->cancel, true);
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	w->started = false;
}
