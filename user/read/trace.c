// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/export.h"
#include "read/perfetto.h"
#include "read/requests_view.h"
#include "read/snapshot_view.h"
#include "read/trace.h"
#include "read/trace_ranks.h"
#include "read/view.h"
#include "tree/clock.h"

/* A span as the stdout sink prints it; in the tree without the prefix, indented. */
static void print_line(FILE *f, const struct rspan *r, int depth)
{
	char line[4096];
	int marks = cJSON_GetArraySize(r->sp.marks);

	span__format_line(&r->sp, line, sizeof(line));
	if (depth < 0) {
		fputs(line, f);
	} else {
		fprintf(f, "%*s%s", depth * 2, "", line + strlen(SPAN_LINE_PREFIX));
		if (marks)
			fprintf(f, " (%d marks)", marks);
	}
	fputc('\n', f);
}

static void print_tree(FILE *f, const struct rspan *r, int depth, bool all)
{
	size_t i, j, k;

	print_line(f, r, depth);
	if (depth >= VIEW_MAX_DEPTH) {
		if (r->nkids)
			fprintf(f, "%*s... deeper spans not shown ...\n", depth * 2 + 2, "");
		return;
	}
	for (i = 0; i < r->nkids; i = j) {
		const char *name = r->kids[i]->sp.name;

		for (j = i + 1; j < r->nkids && !strcmp(r->kids[j]->sp.name, name); j++)
			;
		/* 100k steps stay readable: the first 3 and the last 2 of a long run */
		for (k = i; k < j; k++) {
			if (!all && j - i > TRACE_ELIDE_RUN && k == i + 3) {
				fprintf(f, "%*s... %zu more %s spans ...\n", depth * 2 + 2, "",
					j - i - 5, name);
				k = j - 3;
				continue;
			}
			print_tree(f, r->kids[k], depth + 1, all);
		}
	}
}

static int depth_of(const struct rspan *r)
{
	int d = 0;

	for (; r->parent && d < VIEW_MAX_DEPTH; r = r->parent)
		d++;
	return d;
}

/* Postmortem: root -> the innermost open or incomplete span, each with its start and how
 * long it had run (to its end, or to the session's last batch while still open). */
static void print_open_path(FILE *f, const struct rsession *s)
{
	const struct rspan *inner = NULL, *chain[VIEW_MAX_DEPTH + 1];
	int best = -1, n = 0;
	char name[192], dur[32], when[64];

	for (size_t i = 0; i < s->nspans; i++) {
		const struct rspan *r = s->spans[i];
		int d;

		if (r->sp.status == SPAN_OK)
			continue;
		d = depth_of(r);
		if (!inner || d > best || (d == best && r->sp.start_ns > inner->sp.start_ns)) {
			best = d;
			inner = r;
		}
	}
	if (!inner)
		return;
	for (; inner && n <= VIEW_MAX_DEPTH; inner = inner->parent)
		chain[n++] = inner;
	fputs("open path:\n", f);
	for (int i = n - 1, depth = 1; i >= 0; i--, depth++) {
		const struct span *sp = &chain[i]->sp;
		uint64_t until = sp->end_ns ? sp->end_ns : s->written_ns;
		time_t t = (time_t)(sp->start_ns / 1000000000u);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		clock__fmt_duration(until > sp->start_ns ? until - sp->start_ns : 0, dur,
				    sizeof(dur));
		fprintf(f, "%*s%s (%s) since %s.%03u UTC (%s)\n", depth * 2, "",
			span__format_name(sp, name, sizeof(name)), span_status__name(sp->status),
			when, (unsigned int)(sp->start_ns / 1000000u % 1000u), dur);
	}
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

/* "hang: 2026-11-23 11:28:03.919 UTC, no progress for 1.00s in cirron.session > epoch[0] >
 * data_load (usually 105us)" per record the observer wrote while attached */
static void print_hangs(FILE *f, const struct rsession *s)
{
	const cJSON *h, *p;
	char when[64], open[32], usual[32];

	cJSON_ArrayForEach(h, s->hangs) {
		time_t sec = (time_t)(num(h, "detected_ns") / 1e9);
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&sec, &tm));
		fprintf(f, "hang: %s, no progress for %s in ", when,
			clock__fmt_duration((uint64_t)num(h, "open_ns"), open, sizeof(open)));
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(h, "open_path")) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
			const cJSON *idx = cJSON_GetObjectItemCaseSensitive(p, "index");

			fprintf(f, "%s%s", p == cJSON_GetObjectItemCaseSensitive(h, "open_path")->child ?
				"" : " > ", cJSON_IsString(name) ? name->valuestring : "?");
			if (cJSON_IsNumber(idx))
				fprintf(f, "[%.0f]", idx->valuedouble);
		}
		fprintf(f, " (usually %s)\n",
			clock__fmt_duration((uint64_t)num(h, "median_ns"), usual, sizeof(usual)));
	}
}

static const char *mib(double bytes, char *buf, size_t size)
{
	snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
	return buf;
}

/* --sys-interval, one sample: what the process had used when it was read (totals since it
 * started), when that was; no interval, so no rates and no node deltas. */
static void print_sys_one(FILE *f, const struct rsession *s, const cJSON *a)
{
	double at = num(a, "ts_ns"), start = (double)s->start_ns;
	char t[32], m1[32], m2[32], m3[32];

	fprintf(f, "sys: 1 sample, read %s%s after the session began: the process had used cpu "
		"%.2fs user, %.2fs system; rss %s; threads %.0f; read %s, written %s; context "
		"switches %.0f voluntary, %.0f involuntary (totals since it started; a second "
		"sample comes after --sys-interval)\n",
		at >= start ? "" : "-", clock__fmt_duration((uint64_t)fabs(at - start), t, sizeof(t)),
		num(a, "cpu_user_ns") / 1e9, num(a, "cpu_system_ns") / 1e9,
		mib(num(a, "rss_bytes"), m1, sizeof(m1)), num(a, "threads"),
		mib(num(a, "read_bytes"), m2, sizeof(m2)), mib(num(a, "write_bytes"), m3, sizeof(m3)),
		num(a, "ctx_voluntary"), num(a, "ctx_involuntary"));
}

/* --sys-interval: "sys: N samples over T: cpu ..." from the oldest and newest samples. */
static void print_sys(FILE *f, const struct rsession *s)
{
	const cJSON *a = s->sys_first, *b = s->sys_last;
	char t[32], m1[32], m2[32], m3[32], m4[32], m5[32], m6[32], m7[32], m8[32];
	double span_s;

	if (!a || !b)
		return;
	if (s->nsys == 1 || num(b, "ts_ns") <= num(a, "ts_ns")) {
		print_sys_one(f, s, b);
		return;
	}
	span_s = (num(b, "ts_ns") - num(a, "ts_ns")) / 1e9;
	fprintf(f, "sys: %zu samples over %s: cpu %.2fs user, %.2fs system; rss %s (max %s); "
		"threads %.0f (max %.0f); read %s, written %s; context switches %.0f voluntary, "
		"%.0f involuntary; node: net %s in, %s out, disk %s read, %s written\n",
		s->nsys, clock__fmt_duration((uint64_t)(span_s * 1e9), t, sizeof(t)),
		(num(b, "cpu_user_ns") - num(a, "cpu_user_ns")) / 1e9,
		(num(b, "cpu_system_ns") - num(a, "cpu_system_ns")) / 1e9,
		mib(num(b, "rss_bytes"), m1, sizeof(m1)), mib(s->sys_rss_max, m2, sizeof(m2)),
		num(b, "threads"), s->sys_threads_max,
		mib(num(b, "read_bytes") - num(a, "read_bytes"), m3, sizeof(m3)),
		mib(num(b, "write_bytes") - num(a, "write_bytes"), m4, sizeof(m4)),
		num(b, "ctx_voluntary") - num(a, "ctx_voluntary"),
		num(b, "ctx_involuntary") - num(a, "ctx_involuntary"),
		mib(num(b, "net_rx_bytes") - num(a, "net_rx_bytes"), m5, sizeof(m5)),
		mib(num(b, "net_tx_bytes") - num(a, "net_tx_bytes"), m6, sizeof(m6)),
		mib(num(b, "disk_read_bytes") - num(a, "disk_read_bytes"), m7, sizeof(m7)),
		mib(num(b, "disk_write_bytes") - num(a, "disk_write_bytes"), m8, sizeof(m8)));
}

/* "kernels: 40 kernels, 9120 launches, 38 named; top: gemm... 2400, ..." (the 5 most
 * launched) */
static void print_kernels(FILE *f, const struct rsession *s)
{
	struct kernel_list kl;

	if (!view__kernels(s, &kl))
		return;
	fprintf(f, "kernels: %zu kernels, %.0f launches, ", kl.n, kl.launches);
	if (kl.named == kl.n)
		fprintf(f, "all named");
	else
		fprintf(f, "%zu named", kl.named);
	fprintf(f, "; top:");
	for (size_t i = 0; i < kl.n && i < 5; i++)
		fprintf(f, "%s %s %.0f", i ? "," : "", kl.k[i]->string, kl.k[i]->valuedouble);
	fputc('\n', f);
	free(kl.k);
}

static void print_text_session(FILE *f, const struct rsession *s, bool all)
{
	view__print_header(f, s);
	print_hangs(f, s);
	print_open_path(f, s);
	for (size_t i = 0; i < s->ntops; i++)
		print_tree(f, s->tops[i], 0, all);
	print_kernels(f, s);
	requests_view__print(f, s);
	snapshot_view__print(f, s);
	print_sys(f, s);	/* last: the lines above keep their places */
}

struct pick {
	const struct rsession *s;
	const struct rspan *r;
};

struct picks {
	struct pick *a;
	size_t n, cap;
	const char *name;
	bool ended;	/* --last: only spans with an end */
};

static void pick_walk(struct picks *p, const struct rsession *s, const struct rspan *r,
		      int depth)
{
	if ((!p->name || !strcmp(p->name, r->sp.name)) && (!p->ended || r->sp.end_ns)) {
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 256;
			struct pick *a = realloc(p->a, cap * sizeof(*a));

			if (!a)
				return;	/* shows less rather than nothing */
			p->a = a;
			p->cap = cap;
		}
		p->a[p->n++] = (struct pick){ s, r };
	}
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++)
		pick_walk(p, s, r->kids[i], depth + 1);
}

static int by_end(const void *a, const void *b)
{
	const struct span *x = &((const struct pick *)a)->r->sp;
	const struct span *y = &((const struct pick *)b)->r->sp;

	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void print_json_array_item(FILE *f, cJSON *o, bool *first)
{
	char *text = cJSON_PrintUnformatted(o);

	fprintf(f, "%s%s", *first ? "" : ",\n", text ? text : "null");
	*first = false;
	cJSON_free(text);
	cJSON_Delete(o);
}

/* --name / --last: the chosen spans, flat, in the stdout sink's line format. */
static void print_flat(FILE *f, const struct spool_view *v, const struct options *o)
{
	struct picks p = { .name = o->name, .ended = o->last > 0 };
	size_t from = 0;
	bool first = true;

	for (size_t i = 0; i < v->nsessions; i++)
		if (view__wanted(o, v->sessions[i]))
			for (size_t j = 0; j < v->sessions[i]->ntops; j++)
				pick_walk(&p, v->sessions[i], v->sessions[i]->tops[j], 0);
	if (o->last && p.n) {
		qsort(p.a, p.n, sizeof(*p.a), by_end);
		if (p.n > (size_t)o->last)
			from = p.n - (size_t)o->last;
	}
	if (o->format == FORMAT_JSON)
		fputc('[', f);
	if (o->format == FORMAT_CSV)
		export__csv_header(f);
	for (size_t i = from; i < p.n; i++) {
		if (o->format == FORMAT_TEXT)
			print_line(f, p.a[i].r, -1);
		else if (o->format == FORMAT_CSV)
			export__csv_row(f, p.a[i].s, p.a[i].r);
		else
			print_json_array_item(f, export__span_json(p.a[i].s, p.a[i].r, 0), &first);
	}
	if (o->format == FORMAT_JSON)
		fputs("]\n", f);
	free(p.a);
}

static void csv_walk(FILE *f, const struct rsession *s, const struct rspan *r, int depth)
{
	export__csv_row(f, s, r);
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++)
		csv_walk(f, s, r->kids[i], depth + 1);
}

void trace__print(FILE *f, const struct spool_view *v, const struct options *o)
{
	bool first = true;

	if (o->name || o->last) {
		print_flat(f, v, o);
		return;
	}
	if (o->format == FORMAT_JSON)
		fputc('[', f);
	if (o->format == FORMAT_CSV)
		export__csv_header(f);
	for (size_t i = 0; i < v->nsessions; i++) {
		const struct rsession *s = v->sessions[i];

		if (!view__wanted(o, s))
			continue;
		if (o->format == FORMAT_JSON) {
			/* one session in memory at a time, however long the run */
			print_json_array_item(f, export__session_json(s), &first);
		} else if (o->format == FORMAT_CSV) {
			for (size_t j = 0; j < s->ntops; j++)
				csv_walk(f, s, s->tops[j], 0);
		} else if (o->session || !view__job_of(v, s)) {
			if (!first)
				fputc('\n', f);
			first = false;
			print_text_session(f, s, o->all);
			view__print_helpers(f, v, s);
		}
	}
	if (o->format == FORMAT_JSON)
		fputs("]\n", f);
}

int trace__main(const struct options *o)
{
	struct spool_view v = {};
	int err;

	if (o->format == FORMAT_PERFETTO)
		return perfetto__main(o);	/* streams: no view in memory */
	err = view__load(o, &v);

	if (!err) {
		if (o->ranks)
			trace_ranks__print(stdout, &v, o);
		else
			trace__print(stdout, &v, o);
		if (v.skipped)
			err = EXIT_CORRUPT_INPUT;
	}
	spool_view__free(&v);
	return err;
}
