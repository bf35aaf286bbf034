// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: which tensor layout the worker reads with. The probes/ table is the fast
// path, but each torch release moves TensorImpl's fields and a table entry may not fit a
// build that reports the same version: every source is checked against the target's own
// parameters before it is used (pyobj/tensor_layout_find.c), and a build the table does
// not know has its layout found in the target, once per build (pyobj/tensor_layout_cache.c).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/log.h"
#include "snap/snap_layout.h"
#include "snap/snap_req.h"
#include "pyobj/tensor_layout_cache.h"
#include "pyobj/tensor_layout_find.h"
#include "tree/clock.h"

/* A layout found before any .grad is searched for again at up to this many reads, until
 * one sees grads and confirms it: the first epoch's reads (every step) race the job's next
 * zero_grad(set_to_none=True), which leaves no .grad to confirm by; an epoch's end, before
 * the next epoch's first zero_grad, has them. A search costs 0.2-2.2 ms. */
#define MAX_SEARCHES 64

/* The first parameters of the models, at most LAYOUT_FIND_MAX_PARAMS. */
static size_t param_objs(const struct py_models *m, uint64_t *objs)
{
	size_t n = 0;

	for (size_t k = 0; k < m->n; k++)
		for (size_t i = 0; i < m->v[k].params.n && n < LAYOUT_FIND_MAX_PARAMS; i++)
			objs[n++] = m->v[k].params.v[i].obj;
	return n;
}

static int search(struct snap_worker *w, const uint64_t *objs, size_t n)
{
	const struct snap_req *q = &w->req;
	struct torch_layout l = q->l;	/* its dtypes and version */
	char why[240];
	bool grads = false;
	uint64_t t0 = clock__mono_ns();
	int err;

	w->layout_searches++;
	err = tensor_layout__search(q->pid, objs, n, &l, &grads, why, sizeof(why));
	if (err) {
		snprintf(w->layout_why, sizeof(w->layout_why), "%s (torch %s)", why, q->l.version);
		return -ENOENT;
	}
	snprintf(l.version, sizeof(l.version), "%s", q->l.version);
	w->layout = l;
	w->layout_source = "found";
	w->layout_grad_checked = grads;
	w->layout_search_ms = (double)(clock__mono_ns() - t0) / 1e6;
	ilog("pid %d: torch %s: tensor layout found in the target in %.1f ms from %zu parameters"
	     "%s", q->pid, l.version, w->layout_search_ms, n,
	     grads ? "" : " (no .grad yet: AutogradMeta's grad offset assumed, 40)");
	if (grads && q->build_id[0]) {
		err = tensor_layout_cache__store(q->cache_dir, q->build_id, &l);
		if (err)
			elog("pid %d: cannot keep the tensor layout under %s: %s", q->pid,
			     q->cache_dir, strerror(-err));
	}
	return 0;
}

int snap_layout__ensure(struct snap_worker *w, bool reading)
{
	const struct snap_req *q = &w->req;
	uint64_t objs[LAYOUT_FIND_MAX_PARAMS];
	size_t n = param_objs(&w->models, objs);
	struct torch_layout l;
	char why[320];

	/* a layout found before any .grad is confirmed at reads (made after optimizer steps,
	 * when grads exist), not at the looks for the models as training begins */
	if (w->layout_source && (strcmp(w->layout_source, "found") != 0 || w->layout_grad_checked ||
				 !reading || w->layout_searches >= MAX_SEARCHES))
		return 0;
	if (!n) {
		snprintf(w->layout_why, sizeof(w->layout_why), "layout not found: no parameters");
		return -ENOENT;
	}
	if (w->layout_source) {	/* found before any .grad: confirm it now (else keep it) */
		search(w, objs, n);
		return 0;
	}
	if (q->table_ok) {
		if (!tensor_layout__verify(q->pid, objs, n, &q->l, why, sizeof(why))) {
			w->layout = q->l;
			w->layout_source = "table";
			return 0;
		}
		elog("pid %d: probes/torch_layouts.json's entry for torch %s does not fit this "
		     "build (%s): looking for the layout in the target", q->pid, q->l.version, why);
	}
	if (q->build_id[0]) {
		int err = tensor_layout_cache__load(q->cache_dir, q->build_id, q->l.version, &l, why,
						    sizeof(why));

		if (!err && !tensor_layout__verify(q->pid, objs, n, &l, why, sizeof(why))) {
			w->layout = l;
			w->layout_source = "cache";
			w->layout_grad_checked = true;
			return 0;
		}
		if (err != -ENOENT)
			elog("pid %d: the tensor layout kept for libtorch %s does not serve: %s",
			     q->pid, q->build_id, why);
	}
	return search(w, objs, n);
}
