// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A span as a CSV row and as JSON (export.h): the formats trace prints, byte for byte what
// cJSON prints of span__to_json's object, without copying the attributes.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "read/export.h"

void export__csv_field(struct sbuf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		sbuf__puts(b, s);
		return;
	}
	sbuf__add(b, "\"", 1);
	for (const char *q; (q = strchr(s, '"')); s = q + 1) {
		sbuf__add(b, s, (size_t)(q - s) + 1);
		sbuf__add(b, "\"", 1);
	}
	sbuf__puts(b, s);
	sbuf__add(b, "\"", 1);
}

void export__csv_header(FILE *f)
{
	fputs("session_id,span_id,parent_id,name,index,rank,start_ns,end_ns,duration_ns,status,"
	      "attrs\n", f);
}

/* key=value;key=value, values as the stdout line shows them. */
static void flat_attrs(struct sbuf *b, const cJSON *attrs)
{
	char val[4096];
	const cJSON *a;

	cJSON_ArrayForEach(a, attrs) {
		json__format_value(a, val, sizeof(val));
		sbuf__printf(b, "%s%s=%s", a == attrs->child ? "" : ";", a->string, val);
	}
}

void export__csv_row(struct sbuf *b, const char *sid, long rank, const struct span *sp)
{
	struct sbuf attrs = {};

	export__csv_field(b, sid);
	sbuf__printf(b, ",%" PRIu64 ",", sp->id);
	if (sp->parent_id)
		sbuf__printf(b, "%" PRIu64, sp->parent_id);
	sbuf__add(b, ",", 1);
	export__csv_field(b, sp->name);
	sbuf__add(b, ",", 1);
	if (sp->index >= 0)
		sbuf__printf(b, "%ld", sp->index);
	sbuf__printf(b, ",%ld,%" PRIu64 ",", rank, sp->start_ns);
	if (sp->end_ns)
		sbuf__printf(b, "%" PRIu64 ",%" PRIu64, sp->end_ns, sp->end_ns - sp->start_ns);
	else
		sbuf__add(b, ",", 1);
	sbuf__printf(b, ",%s,", span_status__name(sp->status));
	flat_attrs(&attrs, sp->attrs);
	export__csv_field(b, attrs.p ? attrs.p : "");
	sbuf__free(&attrs);
	sbuf__add(b, "\n", 1);
}

void export__span_json_open(struct sbuf *b, const struct span *sp, const char *sid, long rank)
{
	cJSON *o = cJSON_CreateObject();
	char buf[8192], *text = NULL;
	const char *p = NULL;
	size_t len;

	if (!o) {
		b->oom = true;
		return;
	}
	json__add_u64(o, "span_id", sp->id);
	if (sp->parent_id)
		json__add_u64(o, "parent_id", sp->parent_id);
	else
		cJSON_AddNullToObject(o, "parent_id");
	cJSON_AddStringToObject(o, "name", sp->name);
	if (sp->index >= 0)
		cJSON_AddNumberToObject(o, "index", (double)sp->index);
	else
		cJSON_AddNullToObject(o, "index");
	json__add_u64(o, "start_ns", sp->start_ns);
	if (sp->end_ns) {
		json__add_u64(o, "end_ns", sp->end_ns);
		json__add_u64(o, "duration_ns", sp->end_ns - sp->start_ns);
	} else {
		cJSON_AddNullToObject(o, "end_ns");
	}
	cJSON_AddStringToObject(o, "status", span_status__name(sp->status));
	/* by reference: printed as they are, not copied */
	if (sp->attrs)
		cJSON_AddItemReferenceToObject(o, "attrs", (cJSON *)sp->attrs);
	else
		cJSON_AddObjectToObject(o, "attrs");
	if (sp->marks)
		cJSON_AddItemReferenceToObject(o, "marks", (cJSON *)sp->marks);
	else
		cJSON_AddArrayToObject(o, "marks");
	if (sid) {
		cJSON_AddStringToObject(o, "session_id", sid);
		cJSON_AddNumberToObject(o, "rank", (double)rank);
	}
	if (cJSON_PrintPreallocated(o, buf, sizeof(buf), false))
		p = buf;
	else
		p = text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!p) {
		b->oom = true;
		return;
	}
	len = strlen(p);
	sbuf__add(b, p, len ? len - 1 : 0);	/* without the closing brace */
	cJSON_free(text);
}
