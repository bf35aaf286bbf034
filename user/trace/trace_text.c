// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's text of a session (trace_text.h). What comes before the tree is the session's
// newest state (spool_view.h); the tree streams; what comes after is gathered on the way.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trace/requests_view.h"
#include "trace/snapshot_view.h"
#include "trace/text_tree.h"
#include "trace/trace_text.h"
#include "read/view.h"
#include "tree/clock.h"

static const struct span *state_of(const struct rsession *s, uint64_t id)
{
	for (size_t i = 0; i < s->nstate; i++)
		if (s->state[i].id == id)
			return &s->state[i];
	return NULL;
}

static int depth_of(const struct rsession *s, const struct span *sp)
{
	int d = 0;

	for (; sp && sp->parent_id && d < VIEW_MAX_DEPTH; d++)
		sp = state_of(s, sp->parent_id);
	return d;
}

/* Postmortem: root -> the innermost span open or incomplete at the newest batch, each with
 * its start and how long it had run (to its end, or to that batch while still open). */
static void print_open_path(FILE *f, const struct rsession *s)
{
	const struct span *inner = NULL, *chain[VIEW_MAX_DEPTH + 1];
	int best = -1, n = 0;
	char name[192], dur[32], when[64];

	for (size_t i = 0; i < s->nstate; i++) {
		const struct span *sp = &s->state[i];
		int d;

		if (sp->status == SPAN_OK)
			continue;
		d = depth_of(s, sp);
		if (!inner || d > best || (d == best && sp->start_ns > inner->start_ns)) {
			best = d;
			inner = sp;
		}
	}
	if (!inner)
		return;
	for (; inner && n <= VIEW_MAX_DEPTH; inner = inner->parent_id ?
	     state_of(s, inner->parent_id) : NULL)
		chain[n++] = inner;
	fputs("open path:\n", f);
	for (int i = n - 1, depth = 1; i >= 0; i--, depth++) {
		const struct span *sp = chain[i];
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
static void print_hangs(FILE *f, const cJSON *hangs)
{
	const cJSON *h, *p;
	char when[64], open[32], usual[32];

	cJSON_ArrayForEach(h, hangs) {
		time_t sec = (time_t)(num(h, "detected_ns") / 1e9);
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(h, "open_path");
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&sec, &tm));
		fprintf(f, "hang: %s, no progress for %s in ", when,
			clock__fmt_duration((uint64_t)num(h, "open_ns"), open, sizeof(open)));
		cJSON_ArrayForEach(p, path) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
			const cJSON *idx = cJSON_GetObjectItemCaseSensitive(p, "index");

			fprintf(f, "%s%s", p == path->child ? "" : " > ",
				cJSON_IsString(name) ? name->valuestring : "?");
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
static void print_sys(FILE *f, const struct rsession *s, const struct pass_extras *ex)
{
	const cJSON *a = ex->sys_first, *b = ex->sys_last;
	char t[32], m1[32], m2[32], m3[32], m4[32], m5[32], m6[32], m7[32], m8[32];
	double span_s;

	if (!a || !b)
		return;
	if (ex->nsys == 1 || num(b, "ts_ns") <= num(a, "ts_ns")) {
		print_sys_one(f, s, b);
		return;
	}
	span_s = (num(b, "ts_ns") - num(a, "ts_ns")) / 1e9;
	fprintf(f, "sys: %zu samples over %s: cpu %.2fs user, %.2fs system; rss %s (max %s); "
		"threads %.0f (max %.0f); read %s, written %s; context switches %.0f voluntary, "
		"%.0f involuntary; node: net %s in, %s out, disk %s read, %s written\n",
		ex->nsys, clock__fmt_duration((uint64_t)(span_s * 1e9), t, sizeof(t)),
		(num(b, "cpu_user_ns") - num(a, "cpu_user_ns")) / 1e9,
		(num(b, "cpu_system_ns") - num(a, "cpu_system_ns")) / 1e9,
		mib(num(b, "rss_bytes"), m1, sizeof(m1)), mib(ex->sys_rss_max, m2, sizeof(m2)),
		num(b, "threads"), ex->sys_threads_max,
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

int trace_text__session(FILE *f, struct spool_view *v, struct rsession *s,
			const struct options *o)
{
	struct text_tree tt = { .out = f, .all = o->all };
	struct pass_extras ex = {};
	struct tstream *t = tstream__new(&text_tree__ops, &tt);
	int err = 0;

	if (!t)
		return -ENOMEM;
	view__print_header(f, s);
	print_hangs(f, spool_view__hangs(v, s));
	if (spool_view__state(v, s))
		err = -ENOMEM;
	print_open_path(f, s);
	if (!err && s->has_root)
		err = tstream__set_root(t, &s->root);
	if (!err && s->has_root)
		text_tree__root_line(f, &s->root);
	if (!err)
		err = view__pass(v, s, t, &ex);
	tstream__free(t);
	print_kernels(f, s);
	requests_view__print(f, &tt.req);
	view__snapshots(v, s, &ex, snapshot_view__print, f);
	print_sys(f, s, &ex);	/* last: the lines above keep their places */
	pass_extras__free(&ex);
	text_tree__free(&tt);
	return err;
}
