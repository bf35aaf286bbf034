// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "read/export.h"
#include "read/view.h"

void export__csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void export__csv_header(FILE *f)
{
	fputs("session_id,span_id,parent_id,name,index,rank,start_ns,end_ns,duration_ns,status,"
	      "attrs\n", f);
}

/* key=value;key=value, values as the stdout line shows them. */
static char *flat_attrs(const cJSON *attrs)
{
	char val[4096], *buf = NULL;
	const cJSON *a;
	size_t len;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	cJSON_ArrayForEach(a, attrs) {
		json__format_value(a, val, sizeof(val));
		fprintf(m, "%s%s=%s", a == attrs->child ? "" : ";", a->string, val);
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void export__csv_row(FILE *f, const struct rsession *s, const struct rspan *r)
{
	const struct span *sp = &r->sp;
	char *attrs = flat_attrs(sp->attrs);

	export__csv_field(f, s->id);
	fprintf(f, ",%" PRIu64 ",", sp->id);
	if (sp->parent_id)
		fprintf(f, "%" PRIu64, sp->parent_id);
	fputc(',', f);
	export__csv_field(f, sp->name);
	fputc(',', f);
	if (sp->index >= 0)
		fprintf(f, "%ld", sp->index);
	fprintf(f, ",%ld,%" PRIu64 ",", s->rank, sp->start_ns);
	if (sp->end_ns)
		fprintf(f, "%" PRIu64 ",%" PRIu64, sp->end_ns, sp->end_ns - sp->start_ns);
	else
		fputc(',', f);
	fprintf(f, ",%s,", span_status__name(sp->status));
	export__csv_field(f, attrs ? attrs : "");
	fputc('\n', f);
	free(attrs);
}

cJSON *export__span_json(const struct rsession *s, const struct rspan *r, int depth_left)
{
	cJSON *o = span__to_json(&r->sp), *kids;

	if (!depth_left) {
		cJSON_AddStringToObject(o, "session_id", s->id);
		cJSON_AddNumberToObject(o, "rank", (double)s->rank);
		return o;
	}
	kids = cJSON_AddArrayToObject(o, "children");
	for (size_t i = 0; i < r->nkids && depth_left > 1; i++)
		cJSON_AddItemToArray(kids, export__span_json(s, r->kids[i], depth_left - 1));
	return o;
}

cJSON *export__session_json(const struct rsession *s)
{
	cJSON *o = cJSON_CreateObject(), *spans;

	cJSON_AddStringToObject(o, "session_id", s->id);
	cJSON_AddStringToObject(o, "host", s->host);
	cJSON_AddNumberToObject(o, "pid", (double)s->pid);
	cJSON_AddNumberToObject(o, "rank", (double)s->rank);
	cJSON_AddNumberToObject(o, "local_rank", (double)s->local_rank);
	cJSON_AddNumberToObject(o, "world_size", (double)s->world_size);
	cJSON_AddBoolToObject(o, "final", s->final);
	if (s->hangs)
		cJSON_AddItemToObject(o, "hangs", cJSON_Duplicate(s->hangs, true));
	if (s->sys_first && s->sys_last) {	/* --sys-interval */
		cJSON *sys = cJSON_AddObjectToObject(o, "sys");

		cJSON_AddNumberToObject(sys, "samples", (double)s->nsys);
		cJSON_AddItemToObject(sys, "first", cJSON_Duplicate(s->sys_first, true));
		cJSON_AddItemToObject(sys, "last", cJSON_Duplicate(s->sys_last, true));
		cJSON_AddNumberToObject(sys, "rss_bytes_max", s->sys_rss_max);
		cJSON_AddNumberToObject(sys, "threads_max", s->sys_threads_max);
	}
	if (s->snapshots)	/* --snapshots: the records as the spool has them */
		cJSON_AddItemToObject(o, "snapshots", cJSON_Duplicate(s->snapshots, true));
	spans = cJSON_AddArrayToObject(o, "spans");
	for (size_t i = 0; i < s->ntops; i++)
		cJSON_AddItemToArray(spans, export__span_json(s, s->tops[i], VIEW_MAX_DEPTH));
	return o;
}
