// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's requests line: latency percentiles of an inference process (requests_view.h).
#include <stdlib.h>
#include <string.h>
#include "read/requests_view.h"

struct values {
	double *v;
	size_t n;
};

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p% of the values at or below it. */
static double percentile(const struct values *x, double p)
{
	size_t k = (size_t)((p / 100.0) * (double)x->n + 0.999999);

	return x->v[k ? k - 1 : 0];
}

static double attr(const cJSON *a, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsRaw(v) && v->valuestring)	/* json__add_u64's exact digits */
		return strtod(v->valuestring, NULL);
	return -1;
}

static void add(struct values *x, double v)
{
	if (v >= 0)
		x->v[x->n++] = v;
}

static void print_ms(FILE *f, const char *what, struct values *x)
{
	if (!x->n)
		return;
	qsort(x->v, x->n, sizeof(double), by_value);
	fprintf(f, "; %s p50 %.1fms p90 %.1fms p99 %.1fms", what, percentile(x, 50) / 1e6,
		percentile(x, 90) / 1e6, percentile(x, 99) / 1e6);
}

void requests_view__print(FILE *f, const struct rsession *s)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	struct values lat = { 0 }, ttft = { 0 }, rate = { 0 };
	size_t n = 0;

	if (!root)
		return;
	for (size_t i = 0; i < root->nkids; i++)
		n += !strcmp(root->kids[i]->sp.name, "request");
	if (!n)
		return;
	lat.v = calloc(n, sizeof(double));
	ttft.v = calloc(n, sizeof(double));
	rate.v = calloc(n, sizeof(double));
	if (!lat.v || !ttft.v || !rate.v)
		goto out;
	for (size_t i = 0; i < root->nkids; i++) {
		const struct span *sp = &root->kids[i]->sp;

		if (strcmp(sp->name, "request") != 0 || sp->status != SPAN_OK || !sp->end_ns)
			continue;	/* open at a detach: no latency */
		add(&lat, (double)(sp->end_ns - sp->start_ns));
		add(&ttft, attr(sp->attrs, "ttft_ns"));
		add(&rate, attr(sp->attrs, "decode_tokens_per_s"));
	}
	fprintf(f, "requests: %zu ended (%zu in all)", lat.n, n);
	print_ms(f, "latency", &lat);
	print_ms(f, "ttft", &ttft);
	if (rate.n) {
		qsort(rate.v, rate.n, sizeof(double), by_value);
		fprintf(f, "; decode p50 %.0f tokens/s per sequence", percentile(&rate, 50));
	}
	fputc('\n', f);
out:
	free(lat.v);
	free(ttft.v);
	free(rate.v);
}
