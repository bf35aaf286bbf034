// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What every read-back view shares (view.h): loading the spool's index, which sessions are
// wanted, a session's header and helpers, and a pass over its batches.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/view.h"
#include "tree/clock.h"

static int loaded(struct spool_view *v, int err, const char *dir)
{
	if (err == -ENOMEM) {
		elog("out of memory reading %s", dir ? dir : "the spool");
		return EXIT_FAILURE_RUNTIME;
	}
	if (!v->nsessions && dir)
		elog("no sessions in %s", dir);
	return 0;
}

int view__load(const struct options *o, struct spool_view *v)
{
	struct spool_src src;
	char *dir;
	int err;

	*v = (struct spool_view){};
	if (asprintf(&dir, "%s/spool", o->path) < 0)
		return EXIT_FAILURE_RUNTIME;
	err = spool_src__open_dir(&src, dir);
	if (err && err != -ENOMEM) {
		elog("no spool to read at %s: %s", dir, strerror(-err));
		spool_src__free(&src);
		free(dir);
		return EXIT_NO_SPOOL;
	}
	if (!err)
		err = spool_view__index(v, &src);
	spool_src__free(&src);
	err = loaded(v, err, dir);
	free(dir);
	return err;
}

int view__load_src(struct spool_view *v, struct spool_src *src)
{
	int err = spool_view__index(v, src);

	spool_src__free(src);
	return loaded(v, err, NULL);
}

bool view__wanted(const struct options *o, const struct rsession *s)
{
	return (!o->session || !strcmp(o->session, s->id)) && (o->rank < 0 || o->rank == s->rank);
}

void view__print_header(FILE *f, const struct rsession *s)
{
	fprintf(f, "session %s: host %s, pid %ld, rank %ld (local %ld, world %ld), %s\n", s->id,
		s->host, s->pid, s->rank, s->local_rank, s->world_size,
		s->final ? "final" : "no final batch (still running, or the observer died)");
}

const cJSON *view__root_attr(const struct rsession *s, const char *key)
{
	return s->has_root ? cJSON_GetObjectItemCaseSensitive(s->root.attrs, key) : NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

struct rsession *view__job_of(const struct spool_view *v, const struct rsession *s)
{
	const cJSON *role = view__root_attr(s, "role"), *of = view__root_attr(s, "helper_of");

	if (!cJSON_IsString(role) || strcmp(role->valuestring, "helper") != 0 || !cJSON_IsNumber(of))
		return NULL;
	for (size_t i = 0; i < v->nsessions; i++)
		if (v->sessions[i] != s && v->sessions[i]->pid == (long)of->valuedouble &&
		    !strcmp(v->sessions[i]->host, s->host))
			return v->sessions[i];
	return NULL;
}

static const char *helper_kind_of(const struct rsession *s)
{
	const cJSON *k = view__root_attr(s, "helper");

	return cJSON_IsString(k) ? k->valuestring : "?";
}

/* "helpers: 5 (multiprocessing 4, tool 1), pids 664 663 632 631 624", then a line per helper:
 * what it was, how long it lived, the CPU it had used at its last sample (--sys-interval). */
void view__print_helpers(FILE *f, struct spool_view *v, const struct rsession *job)
{
	const char *kinds[16];
	size_t n = 0, nkinds = 0, per[16] = { 0 };

	for (size_t i = 0; i < v->nsessions; i++) {
		const char *k;
		size_t j;

		if (view__job_of(v, v->sessions[i]) != job)
			continue;
		n++;
		k = helper_kind_of(v->sessions[i]);
		for (j = 0; j < nkinds && strcmp(kinds[j], k) != 0; j++)
			;
		if (j == nkinds && nkinds < 16)
			kinds[nkinds++] = k;
		if (j < 16)
			per[j]++;
	}
	if (!n)
		return;
	fprintf(f, "helpers: %zu (", n);
	for (size_t j = 0; j < nkinds; j++) {
		if (nkinds == 1)
			fputs(kinds[j], f);
		else
			fprintf(f, "%s%s %zu", j ? ", " : "", kinds[j], per[j]);
	}
	fprintf(f, "), pids");
	for (size_t i = 0; i < v->nsessions; i++)
		if (view__job_of(v, v->sessions[i]) == job)
			fprintf(f, " %ld", v->sessions[i]->pid);
	fputc('\n', f);
	for (size_t i = 0; i < v->nsessions; i++) {
		struct rsession *s = v->sessions[i];
		const cJSON *comm = view__root_attr(s, "comm"), *sys;
		char d[32];

		if (view__job_of(v, s) != job || !s->has_root)
			continue;
		fprintf(f, "  helper pid %ld %s (%s): ", s->pid, helper_kind_of(s),
			cJSON_IsString(comm) ? comm->valuestring : "?");
		if (s->root.end_ns)
			fprintf(f, "lived %s", clock__fmt_duration(s->root.end_ns - s->root.start_ns,
								  d, sizeof(d)));
		else
			fprintf(f, "open");
		sys = spool_view__sys_last(v, s);
		if (sys)
			fprintf(f, ", cpu %.2fs by its last sample", (num(sys, "cpu_user_ns") +
						 num(sys, "cpu_system_ns")) / 1e9);
		fputc('\n', f);
	}
}

static int by_launches(const void *a, const void *b)
{
	double x = (*(const cJSON *const *)a)->valuedouble, y = (*(const cJSON *const *)b)->valuedouble;

	return x < y ? 1 : x > y ? -1 : 0;
}

bool view__kernels(const struct rsession *s, struct kernel_list *out)
{
	const cJSON *k = view__root_attr(s, "cuda.kernels"), *it;
	size_t n = 0;

	*out = (struct kernel_list){ 0 };
	if (!k || !cJSON_IsObject(k) || !k->child)
		return false;
	cJSON_ArrayForEach(it, k)
		n++;
	out->k = calloc(n, sizeof(const cJSON *));
	if (!out->k)
		return false;
	cJSON_ArrayForEach(it, k) {
		if (!cJSON_IsNumber(it))
			continue;
		out->k[out->n++] = it;
		out->launches += it->valuedouble;
		out->named += strstr(it->string, " (unnamed: ") == NULL;
	}
	if (!out->n) {
		free(out->k);
		out->k = NULL;
		return false;
	}
	qsort(out->k, out->n, sizeof(const cJSON *), by_launches);
	return true;
}

/* A --sys-interval sample: kept if it is the oldest or newest so far; maxima. */
static int merge_sys(struct pass_extras *ex, const cJSON *js)
{
	uint64_t ts, first = 0, last = 0, v;

	if (!cJSON_IsObject(js) || !batch__u64(js, "ts_ns", &ts))
		return 0;
	ex->nsys++;
	if (batch__u64(js, "rss_bytes", &v) && (double)v > ex->sys_rss_max)
		ex->sys_rss_max = (double)v;
	if (batch__u64(js, "threads", &v) && (double)v > ex->sys_threads_max)
		ex->sys_threads_max = (double)v;
	if (!ex->sys_first || (batch__u64(ex->sys_first, "ts_ns", &first) && ts < first)) {
		cJSON_Delete(ex->sys_first);
		if (!(ex->sys_first = cJSON_Duplicate(js, true)))
			return -ENOMEM;
	}
	if (!ex->sys_last || (batch__u64(ex->sys_last, "ts_ns", &last) && ts > last)) {
		cJSON_Delete(ex->sys_last);
		if (!(ex->sys_last = cJSON_Duplicate(js, true)))
			return -ENOMEM;
	}
	return 0;
}

static int extras(struct pass_extras *ex, const struct batch *b)
{
	const cJSON *js;

	cJSON_ArrayForEach(js, b->sys) {
		if (merge_sys(ex, js))
			return -ENOMEM;
	}
	if (cJSON_GetArraySize(b->snapshots)) {
		uint64_t *a = reallocarray(ex->snap_seqs, ex->nsnap + 1, sizeof(*a));

		if (!a)
			return -ENOMEM;
		ex->snap_seqs = a;
		a[ex->nsnap++] = b->seq;
	}
	if (!ex->want_hangs)
		return 0;
	cJSON_ArrayForEach(js, b->hangs) {
		if (!cJSON_IsObject(js))
			continue;
		if (!ex->hangs && !(ex->hangs = cJSON_CreateArray()))
			return -ENOMEM;
		cJSON_AddItemToArray(ex->hangs, cJSON_Duplicate(js, true));
	}
	return 0;
}

int view__pass(struct spool_view *v, struct rsession *s, struct tstream *t,
	       struct pass_extras *ex)
{
	int err = 0;

	for (size_t k = 0; k < s->files->nfiles && !err; k++) {
		struct batch b;

		if (spool_src__read(&v->src, s->files, k, &b))
			continue;
		err = tstream__batch(t, &b);
		if (!err && ex)
			err = extras(ex, &b);
		batch__free(&b);
	}
	return err ?: tstream__finish(t);
}

void view__snapshots(struct spool_view *v, struct rsession *s, const struct pass_extras *ex,
		     void (*fn)(const cJSON *rec, void *ctx), void *ctx)
{
	const cJSON *js;
	size_t k = 0;

	for (size_t i = 0; i < ex->nsnap; i++) {
		struct batch b;

		while (k < s->files->nfiles && s->files->files[k].seq < ex->snap_seqs[i])
			k++;
		if (k == s->files->nfiles || spool_src__read(&v->src, s->files, k, &b))
			continue;
		cJSON_ArrayForEach(js, b.snapshots) {
			if (cJSON_IsObject(js))
				fn(js, ctx);
		}
		batch__free(&b);
	}
}

void pass_extras__free(struct pass_extras *ex)
{
	cJSON_Delete(ex->sys_first);
	cJSON_Delete(ex->sys_last);
	cJSON_Delete(ex->hangs);
	free(ex->snap_seqs);
	*ex = (struct pass_extras){ .want_hangs = ex->want_hangs };
}
