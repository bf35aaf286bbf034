// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `trace`: which view, then each wanted session streamed through it (trace.h). The text is
// trace_text.c's, --last trace_last.c's, --ranks trace_ranks.c's; JSON, CSV and --name are
// here, rendered by export_stream.c.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "trace/export.h"
#include "trace/export_stream.h"
#include "perfetto/perfetto.h"
#include "trace/trace.h"
#include "trace/trace_last.h"
#include "trace/trace_ranks.h"
#include "trace/trace_text.h"
#include "read/view.h"

/* JSON text of o without its closing brace. */
static void print_open(FILE *f, cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	size_t len = text ? strlen(text) : 0;

	if (len)
		fwrite(text, 1, len - 1, f);
	cJSON_free(text);
	cJSON_Delete(o);
}

static void print_snapshot(const cJSON *rec, void *ctx)
{
	FILE *f = ((void **)ctx)[0];
	size_t *n = ((void **)ctx)[1];
	char *text = cJSON_PrintUnformatted(rec);

	fprintf(f, "%s%s", (*n)++ ? "," : "", text ? text : "null");
	cJSON_free(text);
}

/* After the spans (they stream): hang records, --sys-interval's oldest and newest sample and
 * maxima, --snapshots records as the spool has them. */
static void print_json_tail(FILE *f, struct spool_view *v, struct rsession *s,
			    const struct pass_extras *ex)
{
	size_t n = 0;
	void *ctx[2] = { f, &n };

	if (ex->hangs) {
		char *text = cJSON_PrintUnformatted(ex->hangs);

		fprintf(f, ",\"hangs\":%s", text ? text : "[]");
		cJSON_free(text);
	}
	if (ex->sys_first && ex->sys_last) {
		cJSON *sys = cJSON_CreateObject();
		char *text;

		cJSON_AddNumberToObject(sys, "samples", (double)ex->nsys);
		cJSON_AddItemReferenceToObject(sys, "first", ex->sys_first);
		cJSON_AddItemReferenceToObject(sys, "last", ex->sys_last);
		cJSON_AddNumberToObject(sys, "rss_bytes_max", ex->sys_rss_max);
		cJSON_AddNumberToObject(sys, "threads_max", ex->sys_threads_max);
		text = cJSON_PrintUnformatted(sys);
		fprintf(f, ",\"sys\":%s", text ? text : "{}");
		cJSON_free(text);
		cJSON_Delete(sys);
	}
	if (ex->nsnap) {
		fputs(",\"snapshots\":[", f);
		view__snapshots(v, s, ex, print_snapshot, ctx);
		fputc(']', f);
	}
}

/* One session's spans through export_stream (JSON's session object around them). */
static int export_session(FILE *f, struct spool_view *v, struct rsession *s,
			  struct export_stream *x)
{
	struct pass_extras ex = { .want_hangs = x->mode == EXPORT_JSON };
	struct tstream *t = tstream__new(&export_stream__ops, x);
	int err;

	if (!t)
		return -ENOMEM;
	x->sid = s->id;
	x->rank = s->rank;
	x->spans_out = 0;
	if (x->mode == EXPORT_JSON) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "session_id", s->id);
		cJSON_AddStringToObject(o, "host", s->host);
		cJSON_AddNumberToObject(o, "pid", (double)s->pid);
		cJSON_AddNumberToObject(o, "rank", (double)s->rank);
		cJSON_AddNumberToObject(o, "local_rank", (double)s->local_rank);
		cJSON_AddNumberToObject(o, "world_size", (double)s->world_size);
		cJSON_AddBoolToObject(o, "final", s->final);
		print_open(f, o);
		fputs(",\"spans\":[", f);
	}
	err = s->has_root ? tstream__set_root(t, &s->root) : 0;
	if (!err)
		export_stream__begin_root(x, t);
	if (!err)
		err = view__pass(v, s, t, &ex);
	tstream__free(t);
	if (x->mode == EXPORT_JSON) {
		fputc(']', f);
		print_json_tail(f, v, s, &ex);
		fputc('}', f);
	}
	pass_extras__free(&ex);
	return err;
}

static int print_export(FILE *f, struct spool_view *v, const struct options *o)
{
	struct export_stream x = { .out = f, .name = o->name };
	bool flat_first = true, first = true;
	int err = 0;

	x.flat_first = &flat_first;
	if (o->name)
		x.mode = o->format == FORMAT_JSON ? EXPORT_FLAT_JSON :
			 o->format == FORMAT_CSV ? EXPORT_FLAT_CSV : EXPORT_FLAT_TEXT;
	else
		x.mode = o->format == FORMAT_JSON ? EXPORT_JSON : EXPORT_CSV;
	if (o->format == FORMAT_JSON)
		fputc('[', f);
	if (o->format == FORMAT_CSV)
		export__csv_header(f);
	for (size_t i = 0; i < v->nsessions && !err; i++) {
		if (!view__wanted(o, v->sessions[i]))
			continue;
		if (x.mode == EXPORT_JSON && !first)
			fputs(",\n", f);
		first = false;
		err = export_session(f, v, v->sessions[i], &x);
	}
	if (o->format == FORMAT_JSON)
		fputs("]\n", f);
	return err;
}

int trace__print(FILE *f, struct spool_view *v, const struct options *o)
{
	bool first = true;
	int err = 0;

	if (o->ranks)
		return trace_ranks__print(f, v, o);
	if (o->last)
		return trace_last__print(f, v, o);
	if (o->name || o->format != FORMAT_TEXT)
		return print_export(f, v, o);
	for (size_t i = 0; i < v->nsessions && !err; i++) {
		struct rsession *s = v->sessions[i];

		if (!view__wanted(o, s) || (!o->session && view__job_of(v, s)))
			continue;
		if (!first)
			fputc('\n', f);
		first = false;
		err = trace_text__session(f, v, s, o);
		view__print_helpers(f, v, s);
	}
	return err;
}

int trace__main(const struct options *o)
{
	struct spool_view v = {};
	int err;

	if (o->format == FORMAT_PERFETTO)
		return perfetto__main(o);	/* streams on its own */
	err = view__load(o, &v);
	if (!err) {
		if (trace__print(stdout, &v, o)) {
			elog("out of memory reading %s", o->path);
			err = EXIT_FAILURE_RUNTIME;
		} else if (v.src.skipped) {
			err = EXIT_CORRUPT_INPUT;
		}
	}
	spool_view__free(&v);
	return err;
}
