// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// An epoch's steps summed up in one line (step_sum.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/step_sum.h"
#include "tree/clock.h"

/* A mark's value: a number, or the exact digits json__add_double wrote. */
static bool mark_value(const cJSON *m, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "value");

	if (cJSON_IsNumber(v))
		*out = v->valuedouble;
	else if (cJSON_IsRaw(v) && v->valuestring)
		*out = strtod(v->valuestring, NULL);
	else
		return false;
	return isfinite(*out);
}

void step_sum__add(struct step_sum *s, uint64_t dur_ns, uint64_t data_ns, const cJSON *marks)
{
	const cJSON *m;

	pctl__add(&s->time, dur_ns);	/* out of memory: a step less in the percentiles */
	s->steps++;
	s->step_ns += dur_ns;
	s->data_ns += data_ns;
	cJSON_ArrayForEach(m, marks) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
		double v;
		size_t k;

		if (!cJSON_IsString(name) || !mark_value(m, &v))
			continue;
		for (k = 0; k < s->nmarks && strcmp(s->marks[k].name, name->valuestring) != 0; k++)
			;
		if (k == s->nmarks) {
			if (k == STEP_SUM_MARKS)
				continue;
			snprintf(s->marks[k].name, sizeof(s->marks[k].name), "%s", name->valuestring);
			s->marks[k].first = v;
			s->nmarks++;
		}
		s->marks[k].last = v;
		s->marks[k].count++;
	}
}

static const char *dur(struct step_sum *s, uint64_t v, char *buf, size_t size)
{
	char d[32];

	clock__fmt_duration(v, d, sizeof(d));
	snprintf(buf, size, "%s%s", pctl__approx(&s->time) ? "~" : "", d);
	return buf;
}

static const char *value(double v, char *buf, size_t size)
{
	if (v == (double)(long long)v && fabs(v) < 1e15)
		snprintf(buf, size, "%lld", (long long)v);
	else
		snprintf(buf, size, "%.4g", v);
	return buf;
}

const char *step_sum__format(struct step_sum *s, char *buf, size_t size)
{
	char a[40], b[40], c[40], d[40], e[40], f[40];
	size_t off;

	if (!s->steps) {
		snprintf(buf, size, "steps: 0");
		return buf;
	}
	off = (size_t)snprintf(buf, size, "steps: %llu, time p50 %s p90 %s p99 %s max %s",
			       (unsigned long long)s->steps,
			       dur(s, pctl__pct(&s->time, 50), a, sizeof(a)),
			       dur(s, pctl__pct(&s->time, 90), b, sizeof(b)),
			       dur(s, pctl__pct(&s->time, 99), c, sizeof(c)),
			       clock__fmt_duration(s->time.max, d, sizeof(d)));
	if (off < size)
		off += (size_t)snprintf(buf + off, size - off, "; data_load %.1f%% of step time",
					s->step_ns > 0 ? (double)(100 * s->data_ns / s->step_ns) : 0.0);
	for (size_t k = 0; k < s->nmarks && off < size; k++)
		off += (size_t)snprintf(buf + off, size - off, "; %s %s -> %s (%llu)",
					s->marks[k].name, value(s->marks[k].first, e, sizeof(e)),
					value(s->marks[k].last, f, sizeof(f)),
					(unsigned long long)s->marks[k].count);
	return buf;
}

void step_sum__free(struct step_sum *s)
{
	pctl__free(&s->time);
	*s = (struct step_sum){};
}
