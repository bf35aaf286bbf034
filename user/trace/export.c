// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A span as a CSV row and as JSON (export.h): the formats trace prints, byte for byte what
// cJSON prints of span__to_json's object, without copying the attributes.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "trace/export.h"

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

/* A string as cJSON prints it (print_string_ptr): quotes and backslashes escaped, the
 * control characters by name or as \u00XX, every other byte as it is. */
static void json_string(struct sbuf *b, const char *s)
{
	const char *run = s;

	sbuf__add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];

		if (c >= 32 && c != '"' && c != '\\')
			continue;
		sbuf__add(b, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': sbuf__add(b, "\\\"", 2); break;
		case '\\': sbuf__add(b, "\\\\", 2); break;
		case '\b': sbuf__add(b, "\\b", 2); break;
		case '\f': sbuf__add(b, "\\f", 2); break;
		case '\n': sbuf__add(b, "\\n", 2); break;
		case '\r': sbuf__add(b, "\\r", 2); break;
		case '\t': sbuf__add(b, "\\t", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			sbuf__add(b, esc, 6);
		}
	}
	sbuf__add(b, run, (size_t)(s - run));
	sbuf__add(b, "\"", 1);
}

/* A number as cJSON prints what cJSON_AddNumberToObject made of it. */
static void json_long(struct sbuf *b, long v)
{
	cJSON *n;
	char buf[64];

	if (v >= -2147483647L && v <= 2147483647L) {	/* cJSON's valueint: "%d" */
		sbuf__printf(b, "%ld", v);
		return;
	}
	n = cJSON_CreateNumber((double)v);
	if (n && cJSON_PrintPreallocated(n, buf, sizeof(buf), false))
		sbuf__puts(b, buf);
	else
		b->oom = true;
	cJSON_Delete(n);
}

/* A value as cJSON prints it, unformatted. */
static void json_value(struct sbuf *b, const cJSON *v, const char *none)
{
	char buf[8192], *text = NULL;

	if (!v) {
		sbuf__puts(b, none);
		return;
	}
	if (cJSON_PrintPreallocated((cJSON *)v, buf, sizeof(buf), false)) {
		sbuf__puts(b, buf);
		return;
	}
	text = cJSON_PrintUnformatted(v);
	if (text)
		sbuf__puts(b, text);
	else
		b->oom = true;
	cJSON_free(text);
}

/* The text cJSON prints of span__to_json's object (with session_id and rank after it for a
 * flat list's item), without building that object. */
void export__span_json_open(struct sbuf *b, const struct span *sp, const char *sid, long rank)
{
	sbuf__printf(b, "{\"span_id\":%" PRIu64 ",\"parent_id\":", sp->id);
	if (sp->parent_id)
		sbuf__printf(b, "%" PRIu64, sp->parent_id);
	else
		sbuf__puts(b, "null");
	sbuf__puts(b, ",\"name\":");
	json_string(b, sp->name);
	sbuf__puts(b, ",\"index\":");
	if (sp->index >= 0)
		json_long(b, sp->index);
	else
		sbuf__puts(b, "null");
	sbuf__printf(b, ",\"start_ns\":%" PRIu64, sp->start_ns);
	if (sp->end_ns)
		sbuf__printf(b, ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64, sp->end_ns,
			     sp->end_ns - sp->start_ns);
	else
		sbuf__puts(b, ",\"end_ns\":null");
	sbuf__printf(b, ",\"status\":\"%s\",\"attrs\":", span_status__name(sp->status));
	json_value(b, sp->attrs, "{}");
	sbuf__puts(b, ",\"marks\":");
	json_value(b, sp->marks, "[]");
	if (sid) {
		sbuf__puts(b, ",\"session_id\":");
		json_string(b, sid);
		sbuf__puts(b, ",\"rank\":");
		json_long(b, rank);
	}
}
