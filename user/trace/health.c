// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/demangle.h"
#include "common/exit_codes.h"
#include "trace/health.h"
#include "read/view.h"

/* A health value as text: integers whole, other numbers to one decimal, "?" where absent (an
 * older or foreign writer). */
static const char *value(const cJSON *o, const char *key, char *buf, int size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return "?";
	/* whole only within the range where a double is whole exactly: casting a larger double is undefined */
	if (cJSON_IsNumber(v) && (!(fabs(v->valuedouble) < 9e15) ||
				  v->valuedouble != (double)(long long)v->valuedouble))
		snprintf(buf, size, "%.1f", v->valuedouble);
	else
		json__format_value(v, buf, size);
	return buf;
}

/* The probe table's columns: a name as wide as PROBE_NAME_WIDTH at most (demangled, without
 * its parameters; `health --format json` has the whole name). */
#define PROBE_NAME_WIDTH 40
enum { COL_PROBE, COL_GROUP, COL_ACTION, COL_HITS, COL_RETURNS, COL_STATE, NCOLS };
struct probe_row {
	char col[NCOLS][256];
};

static void probe_row(const cJSON *p, struct probe_row *r)
{
	const cJSON *sym = cJSON_GetObjectItemCaseSensitive(p, "symbol");
	bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "attached"));
	char err[200];

	demangle__short(cJSON_IsString(sym) ? sym->valuestring : "?", PROBE_NAME_WIDTH,
			r->col[COL_PROBE], sizeof(r->col[COL_PROBE]));
	value(p, "group", r->col[COL_GROUP], sizeof(r->col[COL_GROUP]));
	value(p, "action", r->col[COL_ACTION], sizeof(r->col[COL_ACTION]));
	value(p, "hits", r->col[COL_HITS], sizeof(r->col[COL_HITS]));
	value(p, "return_hits", r->col[COL_RETURNS], sizeof(r->col[COL_RETURNS]));
	snprintf(r->col[COL_STATE], sizeof(r->col[COL_STATE]), "%s%s", ok ? "attached" : "failed: ",
		 ok ? "" : value(p, "error", err, sizeof(err)));
}

static void print_row(FILE *f, const struct probe_row *r, const int *w)
{
	fprintf(f, "  %-*s  %-*s  %-*s  %*s  %*s  %s\n", w[COL_PROBE], r->col[COL_PROBE],
		w[COL_GROUP], r->col[COL_GROUP], w[COL_ACTION], r->col[COL_ACTION], w[COL_HITS],
		r->col[COL_HITS], w[COL_RETURNS], r->col[COL_RETURNS], r->col[COL_STATE]);
}

static void print_probes(FILE *f, const cJSON *probes)
{
	static const char *const head[NCOLS] = { "probe", "group", "action", "hits", "return_hits",
						 "state" };
	int n = cJSON_GetArraySize(probes), i = 0, w[NCOLS];
	struct probe_row *rows = n > 0 ? calloc((size_t)n + 1, sizeof(*rows)) : NULL;
	const cJSON *p;

	if (!rows)
		return;
	for (int c = 0; c < NCOLS; c++) {
		snprintf(rows[n].col[c], sizeof(rows[n].col[c]), "%s", head[c]);
		w[c] = (int)strlen(head[c]);
	}
	cJSON_ArrayForEach(p, probes) {
		if (i == n)
			break;
		probe_row(p, &rows[i]);
		for (int c = 0; c < NCOLS; c++)
			if ((int)strlen(rows[i].col[c]) > w[c])
				w[c] = (int)strlen(rows[i].col[c]);
		i++;
	}
	print_row(f, &rows[n], w);
	for (int k = 0; k < i; k++)
		print_row(f, &rows[k], w);
	free(rows);
}

static void print_kernel(FILE *f, const cJSON *k)
{
	char a[80], b[64], c[64], d[128];

	fprintf(f, "  kernel %s: probe ids by %s, ld.so discovery by %s (%s)\n",
		value(k, "release", a, sizeof(a)), value(k, "probe_ids", b, sizeof(b)),
		value(k, "ldso_discovery", c, sizeof(c)), value(k, "reason", d, sizeof(d)));
}

/* --output s3://, otlp (the observer's counters when this batch was made): a destination's */
static void print_upload(FILE *f, const char *label, const cJSON *u)
{
	char a[64], b[64], c[64], d[64], e[64], g[64], x[64];
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(u, "error");

	fprintf(f, "  %s: %s sent (%s bytes), %s failed, %s retries; backlog %s objects "
		"(%s bytes); %s removed by the spool cap before sent\n", label,
		value(u, "sent", a, sizeof(a)), value(u, "sent_bytes", b, sizeof(b)),
		value(u, "failed", c, sizeof(c)), value(u, "retries", d, sizeof(d)),
		value(u, "backlog_objects", e, sizeof(e)), value(u, "backlog_bytes", g, sizeof(g)),
		value(u, "expired", x, sizeof(x)));
	if (cJSON_GetObjectItemCaseSensitive(u, "rejected") &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "rejected")) > 0)
		fprintf(f, "  %s: %s batches refused for good (dropped)\n", label,
			value(u, "rejected", a, sizeof(a)));
	fprintf(f, "  %s delay %s ms last, %s ms max", label, value(u, "delay_ms_last", a, sizeof(a)),
		value(u, "delay_ms_max", b, sizeof(b)));
	if (cJSON_IsString(err))
		fprintf(f, "; failing: %s", err->valuestring);
	fputc('\n', f);
}

static void print_health(FILE *f, const struct rsession *s)
{
	const cJSON *h = s->health;
	char a[64], b[64], c[64];

	view__print_header(f, s);
	fprintf(f, "  from batch %llu (the newest of %zu batch files)\n",
		(unsigned long long)s->last_seq, s->files->nfiles);
	fprintf(f, "  ringbuf_drops %s, kernel_map_full %s, events %s\n",
		value(h, "ringbuf_drops", a, sizeof(a)), value(h, "kernel_map_full", b, sizeof(b)),
		value(h, "events", c, sizeof(c)));
	fprintf(f, "  probes %s attached, %s failed\n", value(h, "probes_attached", a, sizeof(a)),
		value(h, "probes_failed", b, sizeof(b)));
	fprintf(f, "  uprobe_hits %s", value(h, "uprobe_hits", a, sizeof(a)));
	if (cJSON_GetObjectItemCaseSensitive(h, "steps"))
		fprintf(f, " (%s steps, %s per step)", value(h, "steps", b, sizeof(b)),
			value(h, "uprobe_hits_per_step", c, sizeof(c)));
	if (cJSON_GetObjectItemCaseSensitive(h, "python_sampled_steps"))
		fprintf(f, "; Python frames sampled in %s windows",
			value(h, "python_sampled_steps", a, sizeof(a)));
	if (cJSON_GetObjectItemCaseSensitive(h, "signals_sent"))
		fprintf(f, "\n  signals_sent %s (SIGSTOP holds and SIGCONTs: run only)",
			value(h, "signals_sent", b, sizeof(b)));
	fprintf(f, "\n  spool %s bytes in %s files before this batch\n",
		value(h, "spool_bytes", a, sizeof(a)), value(h, "spool_files", b, sizeof(b)));
	if (cJSON_GetObjectItemCaseSensitive(h, "spool_max_bytes"))
		fprintf(f, "  spool cap %s bytes (--max-spool-mb): %s files, %s bytes removed, "
			"oldest first\n", value(h, "spool_max_bytes", a, sizeof(a)),
			value(h, "spool_removed_files", b, sizeof(b)),
			value(h, "spool_removed_bytes", c, sizeof(c)));
	if (cJSON_GetObjectItemCaseSensitive(h, "spool_lost_files"))
		fprintf(f, "  spool: %s batches (%s spans) could not be written (disk full?): lost\n",
			value(h, "spool_lost_files", a, sizeof(a)),
			value(h, "spool_lost_spans", b, sizeof(b)));
	if (cJSON_GetObjectItemCaseSensitive(h, "upload"))
		print_upload(f, "upload", cJSON_GetObjectItemCaseSensitive(h, "upload"));
	if (cJSON_GetObjectItemCaseSensitive(h, "upload_rows"))
		print_upload(f, "upload_rows", cJSON_GetObjectItemCaseSensitive(h, "upload_rows"));
	if (cJSON_GetObjectItemCaseSensitive(h, "otlp"))
		print_upload(f, "otlp", cJSON_GetObjectItemCaseSensitive(h, "otlp"));
	if (cJSON_GetObjectItemCaseSensitive(h, "kernel"))
		print_kernel(f, cJSON_GetObjectItemCaseSensitive(h, "kernel"));
	print_probes(f, cJSON_GetObjectItemCaseSensitive(h, "probes"));
}

void health__print(FILE *f, const struct spool_view *v, const struct options *o)
{
	bool first = true;

	for (size_t i = 0; i < v->nsessions; i++) {
		if (!view__wanted(o, v->sessions[i]))
			continue;
		if (!first)
			fputc('\n', f);
		first = false;
		print_health(f, v->sessions[i]);
	}
}

/* `health --format json`: per session its identity and newest health block, each probe with
 * its whole demangled name beside the symbol. */
static void print_json(FILE *f, const struct spool_view *v, const struct options *o)
{
	cJSON *all = cJSON_CreateArray();
	char *text;

	for (size_t i = 0; all && i < v->nsessions; i++) {
		const struct rsession *s = v->sessions[i];
		cJSON *js, *h, *p;
		char name[1024];

		if (!view__wanted(o, s) || !(js = cJSON_CreateObject()))
			continue;
		cJSON_AddStringToObject(js, "session_id", s->id);
		cJSON_AddStringToObject(js, "host", s->host);
		cJSON_AddNumberToObject(js, "pid", (double)s->pid);
		cJSON_AddNumberToObject(js, "rank", (double)s->rank);
		cJSON_AddBoolToObject(js, "final", s->final);
		cJSON_AddNumberToObject(js, "batch", (double)s->last_seq);
		h = s->health ? cJSON_Duplicate(s->health, true) : cJSON_CreateNull();
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(h, "probes")) {
			const cJSON *sym = cJSON_GetObjectItemCaseSensitive(p, "symbol");

			if (cJSON_IsString(sym))
				cJSON_AddStringToObject(p, "name", demangle__full(sym->valuestring, name,
										  sizeof(name)));
		}
		cJSON_AddItemToObject(js, "health", h);
		cJSON_AddItemToArray(all, js);
	}
	text = all ? cJSON_Print(all) : NULL;
	if (text)
		fprintf(f, "%s\n", text);
	cJSON_free(text);
	cJSON_Delete(all);
}

int health__main(const struct options *o)
{
	struct spool_view v = {};
	int err = view__load(o, &v);

	if (!err && o->format == FORMAT_JSON)
		print_json(stdout, &v, o);
	else if (!err)
		health__print(stdout, &v, o);
	if (!err && v.src.skipped)
		err = EXIT_CORRUPT_INPUT;
	spool_view__free(&v);
	return err;
}
