// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: weights and gradients at each epoch's end, read from the target's memory
// while it runs (consistency=live: a step that runs during the read changes what is read).
// The epoch's end is where the tree learns that the training iterator ran out (a no_grad
// region after the loop, such as validation, or the next epoch's first __next__). The model
// is the Module of the outermost forward when Python frames are on, else the Module with
// the most parameters among __main__'s globals, else among the locals of the running Python
// frames (CPython 3.11-3.13: `def main(): model = Net(); train(model)`).
//
// stats: per parameter mean, std, min, max, norm and a 16-bin histogram of weights and
// grads (sink/tensor_stats.c), into the spool. Beyond --snapshot-max-mb of target memory,
// every tensor is read in blocks of STATS_BLOCK elements, one block in every K (the same K
// for all), and the record says so. sampled / full: also safetensors files under
// <path>/snapshots/<epoch span id>/ (sampled: every K-th element, K = 1 / --sample-rate, as
// a 1-D tensor; full: every element, --snapshot-max-mb does not apply).
//
// The reads, stats and files run on a worker thread (a snapshot takes ~1 s at the default
// cap for 100M parameters, several in full mode, and the event thread must keep draining the
// ring buffer meanwhile). One per target at a time: an epoch that ends while one runs is
// skipped and counted (snapshots_skipped_busy). The job owns copies of all it reads (pid,
// layouts, a copy of the class cache) and builds its record; the event thread collects it
// (snapshots__poll) into t->snapshots, the session's attrs and health, so the spool, the
// session and the symbol cache stay on one thread. A session's end cancels the job between
// tensors and waits for it.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "observe/observe.h"
#include "sink/safetensors.h"
#include "sink/tensor_stats.h"
#include "target/cpython.h"
#include "target/py_model.h"
#include "target/torch_tensor.h"
#include "tree/clock.h"

#define STATS_BLOCK 1024

/* One snapshot in flight: what the worker needs (copied at the epoch's end) and what it
 * hands back. */
struct snap_job {
	pthread_t thread;
	int pid;
	enum snapshots mode;
	double sample_rate;
	uint64_t max_bytes;
	struct torch_layout l;
	struct py_layout pyl;
	bool have_pyl;
	struct py_types types;	/* a copy of the target's class cache */
	uint64_t model, main_dict, interp;
	uint32_t py_minor;
	char dir[4096];
	/* the worker's results */
	cJSON *rec, *model_attr;
	uint64_t bytes;
	double ms;
	bool refused;
	atomic_bool cancel, done;
};

struct snap_param {
	const char *name;
	struct tensor_desc w, g;
	bool has_grad;
};

static const struct py_layout *py_layout_for(const struct observer *o, uint32_t hex)
{
	for (size_t i = 0; i < o->probes.n; i++)
		for (size_t k = 0; k < o->probes.groups[i].n; k++) {
			const struct probe_def *d = &o->probes.groups[i].probes[k];

			if (d->meaning == MEAN_PY_CALL && d->py_layout.known &&
			    d->py_version == (hex & 0xffff0000u))
				return &d->py_layout;
		}
	return NULL;
}

/* The CPython the target runs: the file that defines _PyRuntime (the executable, or
 * libpython where it is shared, as in pyenv's builds), its version, and __main__'s dict. */
static const struct mapped_file *python_of(struct observer *o, struct target *t, uint32_t *hex,
					   uint64_t *main_dict)
{
	const struct mapped_file *any = NULL;

	for (size_t i = 0; i < t->nfiles; i++) {
		if (!strstr(t->files[i].path, "python") ||
		    cpython__version(o->syms, t->pid, &t->files[i], hex))
			continue;
		any = &t->files[i];
		if (!cpython__module_dict(o->syms, t->pid, any, *hex, "__main__", main_dict))
			return any;
	}
	*main_dict = 0;
	return any;
}

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

/* Reads d (sampled as asked), computes its stats; keep: the elements stay in *buf. */
static int read_stats(struct snap_job *j, const struct tensor_desc *d, uint64_t every,
		      uint64_t block, void **buf, uint64_t *n, struct tensor_stats *s)
{
	uint64_t cap = torch_tensor__sampled_count((uint64_t)d->numel, every, block) *
		       (uint64_t)d->elem_size;
	int err;

	*buf = malloc(cap ? cap : 1);
	if (!*buf)
		return -ENOMEM;
	err = torch_tensor__gather(j->pid, d, every, block, *buf, n, &j->bytes);
	if (!err && d->td != TD_OTHER)
		tensor_stats__compute(*buf, *n, (enum stats_dtype)d->td, s);
	return err;
}

static void device_name(const struct tensor_desc *d, char *buf, size_t size)
{
	if (d->device_type == 0)
		snprintf(buf, size, "cpu");
	else
		snprintf(buf, size, "cuda:%d", d->device_index);
}

/* The model inventory for the session: parameter count by dtype and device. */
static cJSON *inventory(const struct snap_param *p, size_t n, const char *source)
{
	cJSON *m = cJSON_CreateObject(), *by = cJSON_CreateObject();
	double total = 0;

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
		total += (double)p[i].w.numel;
	}
	cJSON_AddNumberToObject(m, "parameters", total);
	cJSON_AddNumberToObject(m, "tensors", (double)n);
	cJSON_AddStringToObject(m, "found_by", source);
	cJSON_AddItemToObject(m, "by_dtype_device", by);
	return m;
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

/* Writes weights.safetensors or gradients.safetensors; sets "files" in rec. */
static int write_file(struct snap_job *j, struct snap_param *p, size_t n, bool grads,
		      uint64_t every, cJSON *files)
{
	struct st_entry *e = calloc(n ? n : 1, sizeof(*e));
	int64_t *shapes = calloc(n ? n : 1, TENSOR_MAX_DIM * sizeof(int64_t));
	char everys[32];
	const char *meta[] = { "format", "pt", "consistency", "live", "sample", everys, NULL };
	const char *name = grads ? "gradients.safetensors" : "weights.safetensors";
	struct st_writer w;
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
	err = safetensors__begin(&w, j->dir, name, e, k, meta);
	if (err)
		goto out;
	for (size_t i = 0; i < n && !err; i++) {
		if (atomic_load(&j->cancel)) {
			err = -ECANCELED;
			break;
		}
		const struct tensor_desc *d = grads ? &p[i].g : &p[i].w;
		uint64_t got = 0, cap;
		void *buf;

		if ((grads && !p[i].has_grad) || d->device_type != 0 ||
		    !safetensors__dtype(d->dtype))
			continue;
		cap = (every > 1 ? torch_tensor__sampled_count((uint64_t)d->numel, every, 1)
				 : (uint64_t)d->numel) * (uint64_t)d->elem_size;
		buf = malloc(cap ? cap : 1);
		err = buf ? torch_tensor__gather(j->pid, d, every, 1, buf, &got, &j->bytes)
			  : -ENOMEM;
		if (!err)
			err = safetensors__append(&w, buf, got * (uint64_t)d->elem_size);
		free(buf);
	}
	if (err)
		safetensors__abort(&w);
	else
		err = safetensors__finish(&w);
	if (!err)
		cJSON_AddStringToObject(files, grads ? "gradients" : "weights", w.path);
out:
	if (err && err != -ECANCELED)
		elog("pid %d: cannot write %s under %s: %s", j->pid, name, j->dir, strerror(-err));
	free(e);
	free(shapes);
	return err;
}

/* The model's parameters, read and checked. Returns the count, or -1 with rec's "error"
 * set (and the layout refused when a check failed). */
static ssize_t find_params(struct snap_job *j, struct py_params *names, struct snap_param **out,
			   cJSON *rec)
{
	const struct torch_layout *l = &j->l;
	const struct py_layout *pyl = &j->pyl;
	const char *source = "forward";
	uint64_t model = j->model, dict = j->main_dict;
	struct snap_param *p;
	char why[200];

	if (!j->have_pyl) {
		cJSON_AddStringToObject(rec, "error", "no object layout for this CPython in "
					"probes/cpython.json (3.11 to 3.13)");
		return -1;
	}
	if (!model) {
		source = "main_globals";
		if (dict)
			model = py_model__find_in_dict(j->pid, pyl, &j->types, dict);
	}
	if (!model && j->interp) {	/* def main(): model = ...: a local of a running frame */
		source = "frame_locals";
		model = py_model__find_in_frames(j->pid, pyl, &j->types, j->py_minor, j->interp);
	}
	if (!model || py_model__params(j->pid, pyl, model, names) || !names->n) {
		snprintf(why, sizeof(why), "no torch Module with parameters found (the outermost "
			 "forward with --python-frames, else __main__'s globals%s, else the "
			 "frames' locals%s)", !model && !dict ? ": __main__ not found" : "",
			 j->py_minor >= 11 && j->py_minor <= 13 ? "" : ": CPython 3.11-3.13 only");
		cJSON_AddStringToObject(rec, "error", why);
		return -1;
	}
	p = calloc(names->n, sizeof(*p));
	if (!p)
		return -1;
	for (size_t i = 0; i < names->n; i++) {
		int err;

		p[i].name = names->v[i].name;
		err = torch_tensor__read_object(j->pid, l, names->v[i].obj, &p[i].w, why,
						 sizeof(why));
		if (!err && p[i].w.grad_impl) {
			err = torch_tensor__read_impl(j->pid, l, p[i].w.grad_impl, &p[i].g, why,
						      sizeof(why));
			p[i].has_grad = !err;
			if (err == -ENODATA)
				err = 0;
		}
		if (err) {
			char msg[320];

			snprintf(msg, sizeof(msg), "parameter %s: %s", p[i].name, why);
			cJSON_AddStringToObject(rec, "error", msg);
			if (err == -EINVAL) {
				j->refused = true;
				elog("pid %d: snapshots off: %s", j->pid, msg);
			}
			free(p);
			return -1;
		}
	}
	*out = p;
	j->model_attr = inventory(p, names->n, source);
	cJSON_AddStringToObject(rec, "model_found_by", source);
	return (ssize_t)names->n;
}

static cJSON *param_json(struct snap_job *job, struct snap_param *p, uint64_t every, bool full)
{
	cJSON *j = cJSON_CreateObject(), *shape = cJSON_CreateArray();
	const struct tensor_desc *w = &p->w;
	double fraction = 1.0 / (double)every;
	char dev[16];

	cJSON_AddStringToObject(j, "name", p->name);
	cJSON_AddStringToObject(j, "dtype", w->dtype);
	for (int i = 0; i < w->dim; i++)
		cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)w->sizes[i]));
	cJSON_AddItemToObject(j, "shape", shape);
	device_name(w, dev, sizeof(dev));
	cJSON_AddStringToObject(j, "device", dev);
	cJSON_AddNumberToObject(j, "bytes", (double)tensor_bytes(w));
	cJSON_AddBoolToObject(j, "has_grad", p->has_grad);
	if (w->device_type != 0) {
		cJSON_AddStringToObject(j, "stats_unavailable", "device_memory");
		return j;
	}
	if (w->td == TD_OTHER) {
		cJSON_AddStringToObject(j, "stats_unavailable", "not_floating_point");
		return j;
	}
	for (int k = 0; k < (p->has_grad ? 2 : 1); k++) {
		const struct tensor_desc *d = k ? &p->g : w;
		struct tensor_stats s;
		uint64_t n = 0;
		void *buf = NULL;

		if (read_stats(job, d, full ? 1 : every, STATS_BLOCK, &buf, &n, &s))
			cJSON_AddStringToObject(j, k ? "grad_error" : "weights_error",
						"target memory not readable");
		else
			cJSON_AddItemToObject(j, k ? "grad" : "weights",
					      stats_json(&s, full || n == (uint64_t)d->numel
							     ? 1 : fraction));
		free(buf);
	}
	return j;
}

/* The worker: the model's parameters, their stats and files, into j->rec. */
static void *snap_worker(void *arg)
{
	struct snap_job *j = arg;
	const enum snapshots mode = j->mode;
	uint64_t t0 = clock__mono_ns(), total = 0, every = 1;
	struct snap_param *p = NULL;
	struct py_params names = {};
	cJSON *params;
	ssize_t n;

	n = find_params(j, &names, &p, j->rec);
	if (n < 0)
		goto out;
	for (ssize_t i = 0; i < n; i++)
		if (p[i].w.device_type == 0 && p[i].w.td != TD_OTHER)
			total += tensor_bytes(&p[i].w) + (p[i].has_grad ? tensor_bytes(&p[i].g) : 0);
	if (mode != SNAP_FULL && total > j->max_bytes) {
		every = (total + j->max_bytes - 1) / j->max_bytes;
		cJSON_AddNumberToObject(j->rec, "sampled_fraction", 1.0 / (double)every);
		cJSON_AddStringToObject(j->rec, "sample", "over --snapshot-max-mb: each tensor "
					"read in blocks of 1024 elements (row-major), one block "
					"in every K");
		cJSON_AddNumberToObject(j->rec, "sample_every_blocks", (double)every);
	}
	params = cJSON_AddArrayToObject(j->rec, "params");
	for (ssize_t i = 0; i < n && !atomic_load(&j->cancel); i++)
		cJSON_AddItemToArray(params, param_json(j, &p[i], every, mode == SNAP_FULL));
	if ((mode == SNAP_SAMPLED || mode == SNAP_FULL) && !atomic_load(&j->cancel)) {
		uint64_t fevery = mode == SNAP_FULL ? 1 : (uint64_t)llround(1.0 / j->sample_rate);
		cJSON *files = cJSON_AddObjectToObject(j->rec, "files");

		write_file(j, p, (size_t)n, false, fevery ? fevery : 1, files);
		write_file(j, p, (size_t)n, true, fevery ? fevery : 1, files);
	}
	if (atomic_load(&j->cancel))
		cJSON_AddStringToObject(j->rec, "cancelled", "the session ended while the "
					"snapshot was read (exit, exec or detach)");
out:
	j->ms = (double)(clock__mono_ns() - t0) / 1e6;
	free(p);
	py_params__free(&names);
	atomic_store(&j->done, true);
	return NULL;
}

/* Hands a finished job's record to the target (event thread). */
static void collect(struct target *t)
{
	struct snap_job *j = t->snap_job;

	pthread_join(j->thread, NULL);
	t->snap_job = NULL;
	t->snap_bytes_last = j->bytes;
	t->snap_ms_last = j->ms;
	cJSON_AddNumberToObject(j->rec, "bytes_read", (double)j->bytes);
	cJSON_AddNumberToObject(j->rec, "duration_ms", j->ms);
	t->snapshots_taken++;
	t->snap_bytes_total += j->bytes;
	t->snap_ms_total += j->ms;
	if (j->refused)
		t->snap_refused = true;
	if (j->model_attr && t->session) {
		cJSON *a = t->session->root->attrs;
		cJSON *was = cJSON_GetObjectItemCaseSensitive(a, "model");

		/* the root is written again only when the inventory changed: an epoch of a few
		 * ms would otherwise put it in every batch */
		if (!was) {
			cJSON_AddItemToObject(a, "model", j->model_attr);
			session__touch_root(t->session);
		} else if (!cJSON_Compare(was, j->model_attr, true)) {
			cJSON_ReplaceItemInObjectCaseSensitive(a, "model", j->model_attr);
			session__touch_root(t->session);
		} else {
			cJSON_Delete(j->model_attr);
		}
		j->model_attr = NULL;
	}
	if (!t->snapshots)
		t->snapshots = cJSON_CreateArray();
	cJSON_AddItemToArray(t->snapshots, j->rec);
	cJSON_Delete(j->model_attr);
	free(j);
}

void snapshots__poll(struct observer *o)
{
	for (struct target *t = o->targets; t; t = t->next)
		if (t->snap_job && atomic_load(&t->snap_job->done))
			collect(t);
}

void snapshots__end(struct observer *o, struct target *t)
{
	(void)o;
	if (!t->snap_job)
		return;
	atomic_store(&t->snap_job->cancel, true);
	collect(t);	/* joins: the worker stops at its next tensor */
}

/* A record that never reached the worker (no layout for this torch). */
static void refuse(struct target *t, cJSON *rec, const char *why)
{
	cJSON_AddStringToObject(rec, "error", why);
	cJSON_AddNumberToObject(rec, "bytes_read", 0);
	cJSON_AddNumberToObject(rec, "duration_ms", 0);
	t->snap_refused = true;
	elog("pid %d: snapshots off: %s", t->pid, why);
	t->snapshots_taken++;
	if (!t->snapshots)
		t->snapshots = cJSON_CreateArray();
	cJSON_AddItemToArray(t->snapshots, rec);
}

void snapshots__take(struct observer *o, struct target *t)
{
	const struct options *op = o->opts;
	const struct mapped_file *f;
	const struct py_layout *pyl;
	const char *mode[] = { "stats", "sampled", "full" };
	struct snap_job *j;
	uint32_t hex = 0;
	char why[200];
	cJSON *rec, *v;
	int err;

	if (op->snapshots == SNAP_OFF || t->snap_refused || !t->session || !t->tree.epoch)
		return;
	if (t->snap_job && atomic_load(&t->snap_job->done))
		collect(t);
	if (t->snap_job) {	/* the last epoch's is still being read */
		t->snapshots_skipped_busy++;
		return;
	}
	rec = cJSON_CreateObject();
	json__add_u64(rec, "span_id", t->tree.epoch->id);
	cJSON_AddNumberToObject(rec, "epoch", (double)t->tree.epoch->index);
	json__add_u64(rec, "ts_ns", clock__wall_ns());
	cJSON_AddStringToObject(rec, "mode", mode[op->snapshots]);
	cJSON_AddStringToObject(rec, "consistency", "live");
	j = calloc(1, sizeof(*j));
	if (!j) {
		cJSON_Delete(rec);
		return;
	}
	v = cJSON_GetObjectItemCaseSensitive(t->session->root->attrs, "torch_version");
	if (!cJSON_IsString(v) || torch_layout__find(v->valuestring, &j->l, why, sizeof(why))) {
		if (!cJSON_IsString(v))
			snprintf(why, sizeof(why), "torch version unknown");
		free(j);
		refuse(t, rec, why);
		return;
	}
	cJSON_AddStringToObject(rec, "torch_layout", j->l.version);
	/* The symbol cache and probe set are the event thread's: looked up here. */
	f = python_of(o, t, &hex, &j->main_dict);
	/* __main__'s dict stays where it is: kept, not looked up in sys.modules again (nor
	 * missed when the event comes late, while the interpreter's exit clears sys.modules) */
	if (j->main_dict)
		t->snap_main_dict = j->main_dict;
	else
		j->main_dict = t->snap_main_dict;
	pyl = f ? py_layout_for(o, hex) : NULL;
	if (pyl) {
		j->pyl = *pyl;
		j->have_pyl = true;
		j->py_minor = hex >> 16 & 0xff;
		if (cpython__interp(o->syms, t->pid, f, hex, &j->interp))
			j->interp = 0;
	}
	j->types = t->py_types;
	j->pid = t->pid;
	j->mode = op->snapshots;
	j->sample_rate = op->sample_rate;
	j->max_bytes = op->snapshot_max_bytes;
	j->model = t->model_obj;
	j->rec = rec;
	snprintf(j->dir, sizeof(j->dir), "%s/snapshots/%llu", op->path,
		 (unsigned long long)t->tree.epoch->id);
	err = pthread_create(&j->thread, NULL, snap_worker, j);
	if (err) {
		elog("pid %d: cannot start the snapshot thread: %s", t->pid, strerror(err));
		cJSON_Delete(rec);
		free(j);
		return;
	}
	t->snap_job = j;
}
