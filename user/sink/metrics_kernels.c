// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --metrics: the most launched kernels of a session as labelled counters (metrics_kernels.h).
#include <string.h>
#include "sink/metrics_kernels.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int find(const struct kernel_top *t, uint64_t hash)
{
	for (int i = 0; i < t->n; i++)
		if (t->k[i].hash == hash)
			return i;
	return -1;
}

/* The name as a label value: \, " and line feeds escaped; cut at KERNEL_LABEL_MAX bytes on a
 * UTF-8 boundary (demangled names are ASCII, a foreign one may not be). */
static void label_value(char *out, size_t size, const char *name, uint64_t hash)
{
	size_t at = 0;

	for (; *name && at + 2 < KERNEL_LABEL_MAX; name++) {
		if (*name == '\\' || *name == '"' || *name == '\n') {
			out[at++] = '\\';
			out[at++] = *name == '\n' ? 'n' : *name;
		} else {
			out[at++] = *name;
		}
	}
	if (*name)	/* cut: step back out of a multi-byte character */
		while (at && ((unsigned char)out[at - 1] & 0xc0) == 0x80)
			at--;
	if (*name && at && ((unsigned char)out[at - 1] & 0xc0) == 0xc0)
		at--;
	if (*name)
		snprintf(out + at, size - at, "~%08x", (unsigned)(hash & 0xffffffff));
	else
		out[at] = 0;
}

void kernel_top__update(struct kernel_top *t, const cJSON *kernels)
{
	const cJSON *it;

	if (!cJSON_IsObject(kernels))
		return;
	t->seen = true;
	t->total = 0;
	cJSON_ArrayForEach(it, kernels) {
		int i;

		if (!cJSON_IsNumber(it))
			continue;
		t->total += it->valuedouble;
		if ((i = find(t, fnv1a(it->string))) >= 0)
			t->k[i].launches = it->valuedouble;
	}
	/* Free places go to the most launched kernels outside the set, one at a time. */
	while (t->n < KERNEL_TOP_N) {
		const cJSON *best = NULL;

		cJSON_ArrayForEach(it, kernels)
			if (cJSON_IsNumber(it) && find(t, fnv1a(it->string)) < 0 &&
			    (!best || it->valuedouble > best->valuedouble))
				best = it;
		if (!best)
			break;
		t->k[t->n].hash = fnv1a(best->string);
		label_value(t->k[t->n].name, sizeof(t->k[t->n].name), best->string,
			    t->k[t->n].hash);
		t->k[t->n].launches = best->valuedouble;
		t->n++;
	}
}

void kernel_top__render(FILE *f, const char *metric, const char *labels,
			const struct kernel_top *t)
{
	double in_set = 0;

	if (!t->seen)
		return;
	for (int i = 0; i < t->n; i++) {
		fprintf(f, "%s{%s,kernel=\"%s\"} %.17g\n", metric, labels, t->k[i].name,
			t->k[i].launches);
		in_set += t->k[i].launches;
	}
	fprintf(f, "%s{%s,kernel=\"other\"} %.17g\n", metric, labels,
		t->total > in_set ? t->total - in_set : 0);
}
