// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots, a read on the worker's thread: each parameter's tensor and grad checked
// against the torch layout, their stats (and files), then the update count BPF keeps: the
// read is exact when it is still what the loader had seen before it began (nothing began to
// change the parameters meanwhile: snap_plan__read_exact).
//
// stats: per parameter mean, std, min, max, norm and a 16-bin histogram of weights and
// grads (sink/tensor_stats.c). Beyond --snapshot-max-mb of target memory, every tensor is
// read in blocks of STATS_BLOCK elements, one block in every K (the same K for all), and the
// record says so. sampled / full: also safetensors files (sampled: every K-th element,
// K = 1 / --sample-rate, as a 1-D tensor; full: every element, --snapshot-max-mb does not
// apply), under the request's directory (a directory per model when there are several).
#include <bpf/bpf.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "snap.h"
#include "cirron.h"
#include "common/bpf_maps.h"
#include "common/log.h"
#include "proc/procfs.h"
#include "sink/safetensors.h"
#include "sink/tensor_stats.h"
#include "snap/snap_layout.h"
#include "snap/snap_plan.h"
#include "snap/snap_tensors.h"
#include "snap/snap_req.h"

#define STATS_BLOCK 1024

struct snap_param {
	const char *name;
	struct tensor_desc w, g;
	bool has_grad;
	const uint8_t *cw, *cg;	/* a read of BPF's copy: the bytes of w and g there */
};

static cJSON *stats_json(const struct tensor_stats *s, double fraction)
{
	cJSON *j = cJSON_CreateObject(), *h = cJSON_CreateArray();

	cJSON_AddNumberToObject(j, "count", (double)s->count);
	cJSON_AddNumberToObject(j, "nonfinite", (double)s->nonfinite);
	cJSON_AddNumberToObject(j, "mean", s->mean);
	cJSON_AddNumberToObject(j, "std", s->std);
	cJSON_AddNumberToObject(j, "min", s->min);
	cJSON_AddNumberToObject(j, "max", s->max);
	cJSON_AddNumberToObject(j, "norm", s->norm);
	for (int i = 0; i < TENSOR_STATS_BINS; i++)
		cJSON_AddItemToArray(h, cJSON_CreateNumber((double)s->hist[i]));
	cJSON_AddItemToObject(j, "histogram", h);
	if (fraction < 1)
		cJSON_AddNumberToObject(j, "sampled_fraction", fraction);
	return j;
}

static uint64_t tensor_bytes(const struct tensor_desc *d)
{
	return (uint64_t)d->numel * (uint64_t)d->elem_size;
}

/* d's elements (sampled as asked) into buf: from BPF's copy where copied is set, else from
 * the target. */
static int gather(struct snap_worker *w, const struct tensor_desc *d, const uint8_t *copied,
		  uint64_t every, uint64_t block, void *buf, uint64_t *n)
{
	int err;

	if (!copied)
		return torch_tensor__gather(w->req.pid, d, every, block, buf, n, &w->res.bytes);
	err = torch_tensor__gather_local(d, copied, every, block, buf, n);
	w->res.bytes += *n * (uint64_t)d->elem_size;	/* BPF read them from the target */
	return err;
}

/* Reads d (sampled as asked), computes its stats. */
static int read_stats(struct snap_worker *w, const struct tensor_desc *d, const uint8_t *copied,
		      uint64_t every, uint64_t block, uint64_t *n, struct tensor_stats *s)
{
	uint64_t cap = torch_tensor__sampled_count((uint64_t)d->numel, every, block) *
		       (uint64_t)d->elem_size;
	void *buf = malloc(cap ? cap : 1);
	int err;

	if (!buf)
		return -ENOMEM;
	err = gather(w, d, copied, every, block, buf, n);
	if (!err && d->td != TD_OTHER)
		tensor_stats__compute(buf, *n, (enum stats_dtype)d->td, s);
	free(buf);
	return err;
}

static void device_name(const struct tensor_desc *d, char *buf, size_t size)
{
	if (d->device_type == 0)
		snprintf(buf, size, "cpu");
	else
		snprintf(buf, size, "cuda:%d", d->device_index);
}

/* Parameter count by dtype and device, into by. */
static void inventory_add(cJSON *by, const struct snap_param *p, size_t n, double *total)
{
	for (size_t i = 0; i < n; i++) {
		char key[48], dev[16];
		cJSON *c;

		device_name(&p[i].w, dev, sizeof(dev));
		snprintf(key, sizeof(key), "%s/%s", p[i].w.dtype, dev);
		c = cJSON_GetObjectItemCaseSensitive(by, key);
		if (c)
			cJSON_SetNumberValue(c, c->valuedouble + (double)p[i].w.numel);
		else
			cJSON_AddNumberToObject(by, key, (double)p[i].w.numel);
		*total += (double)p[i].w.numel;
	}
}

/* Entries of a safetensors file: the CPU tensors (weights, or grads), full or sampled. */
static size_t file_entries(struct snap_param *p, size_t n, bool grads, uint64_t every,
			   struct st_entry *e, int64_t *shapes)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tensor_desc *d = grads ? &p[i].g : &p[i].w;

		if ((grads && !p[i].has_grad) || d->device_type != 0 ||
		    !safetensors__dtype(d->dtype))
			continue;
		e[k].name = p[i].name;
		e[k].dtype = safetensors__dtype(d->dtype);
		if (every > 1) {
			shapes[k * TENSOR_MAX_DIM] =
				(int64_t)torch_tensor__sampled_count((uint64_t)d->numel, every, 1);
			e[k].dim = 1;
		} else {
			memcpy(&shapes[k * TENSOR_MAX_DIM], d->sizes, sizeof(d->sizes));
			e[k].dim = d->dim;
		}
		e[k].shape = &shapes[k * TENSOR_MAX_DIM];
		e[k].nbytes = (every > 1 ? (uint64_t)shapes[k * TENSOR_MAX_DIM]
					 : (uint64_t)d->numel) * (uint64_t)d->elem_size;
		k++;
	}
	return k;
}

/* Writes weights.safetensors or gradients.safetensors under dir; sets "files" in rec. */
static int write_file(struct snap_worker *w, const char *dir, struct snap_param *p, size_t n,
		      bool grads, uint64_t every, cJSON *files)
{
	struct st_entry *e = calloc(n ? n : 1, sizeof(*e));
	int64_t *shapes = calloc(n ? n : 1, TENSOR_MAX_DIM * sizeof(int64_t));
	char everys[48];
	const char *meta[] = { "format", "pt", "sample", everys, NULL };
	const char *name = grads ? "gradients.safetensors" : "weights.safetensors";
	struct st_writer st;
	size_t k;
	int err = -ENOMEM;

	if (!e || !shapes)
		goto out;
	snprintf(everys, sizeof(everys), every > 1 ? "row-major elements i*%llu, flattened"
		 : "none", (unsigned long long)every);
	k = file_entries(p, n, grads, every, e, shapes);
	if (!k) {
		err = 0;
		goto out;
	}
	err = safetensors__begin(&st, dir, name, e, k, meta);
	if (err)
		goto out;
	for (size_t i = 0; i < n && !err; i++) {
		const struct tensor_desc *d = grads ? &p[i].g : &p[i].w;
		uint64_t got = 0, cap;
		void *buf;

		if (atomic_load(&w->cancel)) {
			err = -ECANCELED;
			break;
		}
		if ((grads && !p[i].has_grad) || d->device_type != 0 ||
		    !safetensors__dtype(d->dtype))
			continue;
		cap = (every > 1 ? torch_tensor__sampled_count((uint64_t)d->numel, every, 1)
				 : (uint64_t)d->numel) * (uint64_t)d->elem_size;
		buf = malloc(cap ? cap : 1);
		err = buf ? gather(w, d, grads ? p[i].cg : p[i].cw, every, 1, buf, &got) : -ENOMEM;
		if (!err)
			err = safetensors__append(&st, buf, got * (uint64_t)d->elem_size);
		free(buf);
	}
	if (err)
		safetensors__abort(&st);
	else
		err = safetensors__finish(&st);
	if (!err)
		cJSON_AddStringToObject(files, grads ? "gradients" : "weights", st.path);
out:
	if (err && err != -ECANCELED)
		elog("pid %d: cannot write %s under %s: %s", w->req.pid, name, dir, strerror(-err));
	free(e);
	free(shapes);
	return err;
}

/* A model's tensors, read and checked. Returns 0, or -1 with rec's "error" set (and the
 * result refused when a check failed). */
static int read_descs(struct snap_worker *w, const struct py_model *m, struct snap_param *p,
		      cJSON *rec)
{
	char why[200], msg[320];

	for (size_t i = 0; i < m->params.n; i++) {
		int err;

		p[i].name = m->params.v[i].name;
		err = torch_tensor__read_object(w->req.pid, &w->layout, m->params.v[i].obj, &p[i].w,
						 why, sizeof(why));
		if (!err && w->req.copy) {	/* the bytes, and the grad, as BPF copied them */
			p[i].cw = snap_copy__bytes(w->req.copy, &p[i].w, &p[i].g, &p[i].has_grad,
						   &p[i].cg);
			if (p[i].cw || p[i].w.device_type != 0 || p[i].w.td == TD_OTHER)
				continue;
			snprintf(msg, sizeof(msg), "parameter %s: not in BPF's copy (the model "
				 "changed since its plan)", p[i].name);
			cJSON_AddStringToObject(rec, "error", msg);
			return -1;
		}
		if (!err && p[i].w.grad_impl) {
			err = torch_tensor__read_impl(w->req.pid, &w->layout, p[i].w.grad_impl,
						      &p[i].g, why, sizeof(why));
			p[i].has_grad = !err;
			if (err == -ENODATA)
				err = 0;
		}
		if (err) {
			snprintf(msg, sizeof(msg), "parameter %s: %s", p[i].name, why);
			cJSON_AddStringToObject(rec, "error", msg);
			if (err == -EINVAL) {
				w->res.refused = true;
				snprintf(w->res.why, sizeof(w->res.why), "%s", msg);
				elog("pid %d: snapshots off: %s", w->req.pid, msg);
			}
			return -1;
		}
	}
	return 0;
}

static cJSON *param_json(struct snap_worker *w, struct snap_param *p, uint64_t every, bool full)
{
	cJSON *j = cJSON_CreateObject(), *shape = cJSON_CreateArray();
	const struct tensor_desc *wd = &p->w;
	double fraction = 1.0 / (double)every;
	char dev[16];

	cJSON_AddStringToObject(j, "name", p->name);
	cJSON_AddStringToObject(j, "dtype", wd->dtype);
	for (int i = 0; i < wd->dim; i++)
		cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)wd->sizes[i]));
	cJSON_AddItemToObject(j, "shape", shape);
	device_name(wd, dev, sizeof(dev));
	cJSON_AddStringToObject(j, "device", dev);
	cJSON_AddNumberToObject(j, "bytes", (double)tensor_bytes(wd));
	cJSON_AddBoolToObject(j, "has_grad", p->has_grad);
	if (torch_tensor__not_read(wd)) {	/* listed, not read: GPU memory */
		cJSON_AddStringToObject(j, "not_read", torch_tensor__not_read(wd));
		cJSON_AddStringToObject(j, "stats_unavailable", "device_memory");
		return j;
	}
	if (wd->td == TD_OTHER) {
		cJSON_AddStringToObject(j, "stats_unavailable", "not_floating_point");
		return j;
	}
	for (int k = 0; k < (p->has_grad ? 2 : 1); k++) {
		const struct tensor_desc *d = k ? &p->g : wd;
		struct tensor_stats s = {};
		uint64_t n = 0;

		if (read_stats(w, d, k ? p->cg : p->cw, full ? 1 : every, STATS_BLOCK, &n, &s))
			cJSON_AddStringToObject(j, k ? "grad_error" : "weights_error",
						"target memory not readable");
		else
			cJSON_AddItemToObject(j, k ? "grad" : "weights",
					      stats_json(&s, full || n == (uint64_t)d->numel
							     ? 1 : fraction));
	}
	return j;
}

/* Whether every parameter is still a live object of its class: refcount sane, class the
 * same (a freed object's first word becomes the allocator's free-list link). Read after the
 * tensors, so a read that raced with the interpreter's exit is not called exact. */
static bool models_alive(struct snap_worker *w)
{
	for (size_t k = 0; k < w->models.n; k++) {
		const struct py_params *p = &w->models.v[k].params;

		for (size_t i = 0; i < p->n; i++) {
			uint64_t head[2];

			if (!procfs__read_mem(w->req.pid, p->v[i].obj, head, sizeof(head)) ||
			    !head[0] || head[0] > (1ull << 40) || head[1] != p->v[i].type)
				return false;
		}
	}
	return true;
}

/* The models' parameters, their stats and files, into res.records. */
void snap_tensors__read(struct snap_worker *w)
{
	const struct snap_req *q = &w->req;
	struct snap_result *r = &w->res;
	struct snap_param **ps = calloc(w->models.n + 1, sizeof(struct snap_param *));
	cJSON *recs = cJSON_CreateArray(), *by = cJSON_CreateObject();
	uint64_t total = 0, every = 1;
	double nparams = 0;
	size_t ntensors = 0;
	struct snap_state st = {};
	bool ok = true;

	r->records = recs;
	r->plan_ok = false;
	if (!w->models.n || !ps) {
		r->err = w->models.n ? -ENOMEM : -ENOENT;
		cJSON_Delete(by);
		free(ps);
		return;
	}
	if (q->copy && !w->layout_source) {	/* the copy's reader: the worker's layout */
		r->err = -ENOENT;
		cJSON_Delete(by);
		free(ps);
		return;
	}
	if (!q->copy && snap_layout__ensure(w, true)) {	/* no layout fits: say why, for good */
		for (size_t k = 0; k < w->models.n; k++) {
			cJSON *rec = cJSON_CreateObject();

			cJSON_AddItemToArray(recs, rec);
			cJSON_AddStringToObject(rec, "model", w->models.v[k].name);
			cJSON_AddStringToObject(rec, "error", w->layout_why);
		}
		elog("pid %d: snapshots off: %s", q->pid, w->layout_why);
		snprintf(r->why, sizeof(r->why), "%s", w->layout_why);
		r->refused = true;
		cJSON_Delete(by);
		free(ps);
		return;
	}
	for (size_t k = 0; k < w->models.n && !atomic_load(&w->cancel); k++) {
		const struct py_model *m = &w->models.v[k];
		cJSON *rec = cJSON_CreateObject();

		cJSON_AddItemToArray(recs, rec);
		cJSON_AddStringToObject(rec, "model", m->name);
		cJSON_AddStringToObject(rec, "model_found_by", m->found_by);
		cJSON_AddStringToObject(rec, "torch_layout", w->layout.version);
		cJSON_AddStringToObject(rec, "layout_source", w->layout_source);
		if (q->copy) {
			cJSON_AddStringToObject(rec, "read_from", "bpf_copy");
			cJSON_AddNumberToObject(rec, "bpf_copy_us", (double)q->copy->copy->ns / 1e3);
		}
		if (!strcmp(w->layout_source, "found"))
			cJSON_AddNumberToObject(rec, "layout_search_ms", w->layout_search_ms);
		ps[k] = calloc(m->params.n + 1, sizeof(**ps));
		if (!ps[k] || read_descs(w, m, ps[k], rec)) {
			ok = false;
			continue;
		}
		for (size_t i = 0; i < m->params.n; i++)
			if (ps[k][i].w.device_type == 0 && ps[k][i].w.td != TD_OTHER)
				total += tensor_bytes(&ps[k][i].w) +
					 (ps[k][i].has_grad ? tensor_bytes(&ps[k][i].g) : 0);
		inventory_add(by, ps[k], m->params.n, &nparams);
		ntensors += m->params.n;
	}
	if (q->mode != SNAP_FULL && total > q->max_bytes)
		every = (total + q->max_bytes - 1) / q->max_bytes;
	for (size_t k = 0; k < w->models.n && ok && !atomic_load(&w->cancel); k++) {
		const struct py_model *m = &w->models.v[k];
		cJSON *rec = cJSON_GetArrayItem(recs, (int)k), *params;

		if (!ps[k])
			continue;
		if (every > 1) {
			cJSON_AddNumberToObject(rec, "sampled_fraction", 1.0 / (double)every);
			cJSON_AddStringToObject(rec, "sample", "over --snapshot-max-mb: each tensor "
						"read in blocks of 1024 elements (row-major), one "
						"block in every K");
			cJSON_AddNumberToObject(rec, "sample_every_blocks", (double)every);
		}
		params = cJSON_AddArrayToObject(rec, "params");
		for (size_t i = 0; i < m->params.n && !atomic_load(&w->cancel); i++)
			cJSON_AddItemToArray(params, param_json(w, &ps[k][i], every,
								q->mode == SNAP_FULL));
		if (q->dir[0] && !atomic_load(&w->cancel)) {
			uint64_t fevery = q->mode == SNAP_FULL ? 1
					  : (uint64_t)llround(1.0 / q->sample_rate);
			cJSON *files = cJSON_AddObjectToObject(rec, "files");
			char dir[4096 + 160];

			if (w->models.n > 1)
				snprintf(dir, sizeof(dir), "%s/%s", q->dir, m->name);
			else
				snprintf(dir, sizeof(dir), "%s", q->dir);
			write_file(w, dir, ps[k], m->params.n, false, fevery ? fevery : 1, files);
			write_file(w, dir, ps[k], m->params.n, true, fevery ? fevery : 1, files);
		}
	}
	if (atomic_load(&w->cancel)) {
		cJSON *rec;

		cJSON_ArrayForEach(rec, recs) {
			cJSON_AddStringToObject(rec, "cancelled", "the session ended while the "
						"snapshot was read (exit, exec or detach)");
		}
	}
	if (q->copy) {	/* BPF copied a whole state: exact while the parameters live */
		r->exact = r->weights_exact = models_alive(w);
	} else if (ok && !atomic_load(&w->cancel)) {
		r->plan_ok = true;
		snap_copy__plan_begin(&r->plan, &w->layout);
		for (size_t k = 0; k < w->models.n && r->plan_ok; k++)
			for (size_t i = 0; ps[k] && i < w->models.v[k].params.n && r->plan_ok; i++)
				r->plan_ok = snap_copy__plan_add(&r->plan, &ps[k][i].w,
								 ps[k][i].has_grad ? &ps[k][i].g
										   : NULL);
	}
	/* nothing began to change the parameters since the loader looked, and they are still
	 * there (a process that ends frees them without an update): an exact read */
	if (!q->copy && !bpf_map_lookup_elem(q->states_fd, &q->pid, &st)) {
		uint64_t drops = bpf_maps__percpu_sum(q->stats_fd, STAT_RB_DROPS);
		bool alive = models_alive(w);

		r->exact = snap_plan__read_exact(q->s0, (uint32_t)st.updates, q->drops0, drops,
						 alive);
		r->weights_exact = snap_plan__weights_exact(q->steps0, st.steps, q->drops0, drops,
							    alive);
	}
	if (ok) {
		r->model_attr = cJSON_CreateObject();
		cJSON_AddNumberToObject(r->model_attr, "parameters", nparams);
		cJSON_AddNumberToObject(r->model_attr, "tensors", (double)ntensors);
		cJSON_AddStringToObject(r->model_attr, "found_by", w->models.v[0].found_by);
		if (w->models.n > 1) {
			cJSON *names = cJSON_AddArrayToObject(r->model_attr, "models");

			for (size_t k = 0; k < w->models.n; k++)
				cJSON_AddItemToArray(names,
						     cJSON_CreateString(w->models.v[k].name));
		}
		cJSON_AddItemToObject(r->model_attr, "by_dtype_device", by);
		by = NULL;
	}
	cJSON_Delete(by);
	for (size_t k = 0; k < w->models.n; k++)
		free(ps[k]);
	free(ps);
}
