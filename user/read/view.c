// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/view.h"
#include "tree/clock.h"

int view__load(const struct options *o, struct spool_view *v)
{
	char *dir;
	int err;

	if (asprintf(&dir, "%s/spool", o->path) < 0)
		return EXIT_FAILURE_RUNTIME;
	err = spool_view__load_dir(v, dir);
	if (err == -ENOMEM || (!err && spool_view__build(v))) {
		elog("out of memory reading %s", dir);
		free(dir);
		return EXIT_FAILURE_RUNTIME;
	}
	if (err)
		elog("no spool to read at %s: %s", dir, strerror(-err));
	else if (!v->nsessions)
		elog("no sessions in %s", dir);
	free(dir);
	return err ? EXIT_NO_SPOOL : 0;
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

static const cJSON *root_attr(const struct rsession *s, const char *key)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;

	return root ? cJSON_GetObjectItemCaseSensitive(root->sp.attrs, key) : NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A helper process of a job in the view (role=helper, helper_of its pid on its host: inductor's
 * compile helpers): listed under that job, not as a session of its own. */
const struct rsession *view__job_of(const struct spool_view *v, const struct rsession *s)
{
	const cJSON *role = root_attr(s, "role"), *of = root_attr(s, "helper_of");

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
	const cJSON *k = root_attr(s, "helper");

	return cJSON_IsString(k) ? k->valuestring : "?";
}

/* "helpers: 5 (multiprocessing 4, tool 1), pids 664 663 632 631 624", then a line per helper:
 * what it was, how long it lived, the CPU it had used at its last sample (--sys-interval). */
void view__print_helpers(FILE *f, const struct spool_view *v, const struct rsession *job)
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
		const struct rsession *s = v->sessions[i];
		const struct rspan *root = s->ntops ? s->tops[0] : NULL;
		const cJSON *comm = root_attr(s, "comm");
		char d[32];

		if (view__job_of(v, s) != job || !root)
			continue;
		fprintf(f, "  helper pid %ld %s (%s): ", s->pid, helper_kind_of(s),
			cJSON_IsString(comm) ? comm->valuestring : "?");
		if (root->sp.end_ns)
			fprintf(f, "lived %s", clock__fmt_duration(root->sp.end_ns - root->sp.start_ns,
								  d, sizeof(d)));
		else
			fprintf(f, "open");
		if (s->sys_last)
			fprintf(f, ", cpu %.2fs by its last sample", (num(s->sys_last, "cpu_user_ns") +
						 num(s->sys_last, "cpu_system_ns")) / 1e9);
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
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	const cJSON *k = root ? cJSON_GetObjectItemCaseSensitive(root->sp.attrs, "cuda.kernels")
			      : NULL, *it;
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
