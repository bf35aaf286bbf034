// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tree/clock.h"
#include "tree/span.h"

const char *span_status__name(enum span_status s)
{
	switch (s) {
	case SPAN_OK: return "ok";
	case SPAN_OPEN: return "open";
	case SPAN_INCOMPLETE: return "incomplete";
	}
	return "?";
}

/* A mark's value: a number, or the exact digits json__add_double wrote. */
static bool mark_value(const cJSON *mark, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(mark, "value");

	if (cJSON_IsNumber(v))
		*out = v->valuedouble;
	else if (cJSON_IsRaw(v) && v->valuestring)
		*out = strtod(v->valuestring, NULL);
	else
		return false;
	return true;
}

cJSON *span__to_json(const struct span *s)
{
	cJSON *o = cJSON_CreateObject();

	json__add_u64(o, "span_id", s->id);
	if (s->parent_id)
		json__add_u64(o, "parent_id", s->parent_id);
	else
		cJSON_AddNullToObject(o, "parent_id");
	cJSON_AddStringToObject(o, "name", s->name);
	if (s->index >= 0)
		cJSON_AddNumberToObject(o, "index", (double)s->index);
	else
		cJSON_AddNullToObject(o, "index");
	json__add_u64(o, "start_ns", s->start_ns);
	if (s->end_ns) {
		json__add_u64(o, "end_ns", s->end_ns);
		json__add_u64(o, "duration_ns", s->end_ns - s->start_ns);
	} else {
		cJSON_AddNullToObject(o, "end_ns");
	}
	cJSON_AddStringToObject(o, "status", span_status__name(s->status));
	cJSON_AddItemToObject(o, "attrs", cJSON_Duplicate(s->attrs, 1));
	cJSON_AddItemToObject(o, "marks", cJSON_Duplicate(s->marks, 1));
	return o;
}

static int append(char *buf, int size, int off, const char *fmt, const char *a, const char *b)
{
	int n;

	if (off >= size)
		return off;
	n = snprintf(buf + off, (size_t)(size - off), fmt, a, b);
	return n < 0 ? off : off + n;
}

const char *span__format_name(const struct span *s, char *buf, int size)
{
	if (s->index >= 0)
		snprintf(buf, size, "%s[%ld]", s->name, s->index);
	else
		snprintf(buf, size, "%s", s->name);
	return buf;
}

const char *span__format_line(const struct span *s, char *buf, int size)
{
	char name[192], dur[32], val[256];
	const cJSON *a;
	int off = 0, first = 1;

	span__format_name(s, name, sizeof(name));
	if (s->end_ns >= s->start_ns && s->end_ns)
		clock__fmt_duration(s->end_ns - s->start_ns, dur, sizeof(dur));
	else
		snprintf(dur, sizeof(dur), "?");
	off = append(buf, size, off, SPAN_LINE_PREFIX "%s - %s", name, dur);
	if (s->status != SPAN_OK)
		off = append(buf, size, off, " (%s%s)", span_status__name(s->status), "");
	cJSON_ArrayForEach(a, s->attrs) {
		json__format_value(a, val, sizeof(val));
		off = append(buf, size, off, first ? " {%s=%s" : ", %s=%s", a->string, val);
		first = 0;
	}
	/* value marks (from what the job printed), as the SDK shows them: each name once, with
	 * its last value */
	cJSON_ArrayForEach(a, s->marks) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name"), *b;
		cJSON v = { .type = cJSON_Number };
		bool later = false;

		if (!mark_value(a, &v.valuedouble) || !cJSON_IsString(n))
			continue;
		for (b = a->next; b && !later; b = b->next) {
			const cJSON *bn = cJSON_GetObjectItemCaseSensitive(b, "name");
			double bv;

			later = cJSON_IsString(bn) && mark_value(b, &bv) &&
				!strcmp(bn->valuestring, n->valuestring);
		}
		if (later)
			continue;
		if (v.valuedouble != 0 && fabs(v.valuedouble) < 0.001)
			snprintf(val, sizeof(val), "%.4g", v.valuedouble);	/* 5e-05 */
		else
			json__format_value(&v, val, sizeof(val));
		off = append(buf, size, off, first ? " {%s=%s" : ", %s=%s", n->valuestring, val);
		first = 0;
	}
	if (!first)
		append(buf, size, off, "}%s%s", "", "");
	return buf;
}

void span__add_mark(struct span *s, cJSON *mark)
{
	if (cJSON_GetArraySize(s->marks) < SPAN_MAX_MARKS) {
		cJSON_AddItemToArray(s->marks, mark);
	} else {
		cJSON *d = cJSON_GetObjectItemCaseSensitive(s->attrs, "marks_dropped");

		if (d)
			cJSON_SetNumberValue(d, d->valuedouble + 1);
		else
			cJSON_AddNumberToObject(s->attrs, "marks_dropped", 1);
		cJSON_Delete(mark);
	}
	s->dirty = true;
}
