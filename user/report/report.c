// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `report`: one self-contained HTML page (inline SVG and style, a few lines of inline
// script, nothing fetched) per spool: on top the `trace --ranks` findings, then per session
// step time over the steps, the phases of each step, the data-load stall share, numeric
// marks, its epochs (each with its steps summed up: step_sum.h), hang records, the weight norm
// per layer at each epoch's end (--snapshots), kernels, attributes and health. Each session
// is read in one pass (report_data.c) that keeps no more than what is drawn: long runs are
// drawn as at most REPORT_MAX_POINTS points, each the mean of consecutive steps, and the page
// says so.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/outfile.h"
#include "report/report.h"
#include "report/report_chart.h"
#include "report/report_data.h"
#include "report/report_snap.h"
#include "trace/trace_ranks.h"
#include "read/view.h"

#define REPORT_KERNELS 20	/* rows of the kernels table */

static const char *const phase_colors[PH__COUNT] = {
	"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
};

static void table(FILE *f, const char *title, const cJSON *o)
{
	const cJSON *a;
	char val[1024];

	fprintf(f, "<h3>%s</h3>\n<table class=\"kv\">\n", title);
	cJSON_ArrayForEach(a, o) {
		if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && !strcmp(title, "Health"))
			continue;	/* per-probe hits: `cirron-probe health` */
		json__format_value(a, val, sizeof(val));
		fputs("<tr><th>", f);
		report__html(f, a->string ? a->string : "?");
		fputs("</th><td>", f);
		report__html(f, val);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The most launched kernels: name, launches, share of all launches. */
static void kernels_table(FILE *f, const struct rsession *s)
{
	struct kernel_list kl;
	double shown = 0;
	size_t i;

	if (!view__kernels(s, &kl))
		return;
	fprintf(f, "<h3>Kernels</h3>\n<p>%zu kernels, %.0f launches, %zu named</p>\n"
		"<table class=\"kernels\">\n<tr><th>kernel</th><th>launches</th><th>share</th></tr>\n",
		kl.n, kl.launches, kl.named);
	for (i = 0; i < kl.n && i < REPORT_KERNELS; i++) {
		fputs("<tr><td>", f);
		report__html(f, kl.k[i]->string);
		fprintf(f, "</td><td>%.0f</td><td>%.1f%%</td></tr>\n", kl.k[i]->valuedouble,
			kl.launches > 0 ? 100 * kl.k[i]->valuedouble / kl.launches : 0);
		shown += kl.k[i]->valuedouble;
	}
	if (i < kl.n)
		fprintf(f, "<tr><td>%zu more kernels</td><td>%.0f</td><td>%.1f%%</td></tr>\n",
			kl.n - i, kl.launches - shown,
			kl.launches > 0 ? 100 * (kl.launches - shown) / kl.launches : 0);
	fputs("</table>\n", f);
	free(kl.k);
}

static void epochs_table(FILE *f, const struct report_data *d)
{
	if (!d->nepochs)
		return;
	fprintf(f, "<h3>Epochs</h3>\n<p>%zu spans with steps under them, each with its steps' "
		"time (p50, p90, p99, max), the share of it spent in data_load, and the marks "
		"printed in them (first &rarr; last)</p>\n<table class=\"kv epochs\">\n<tr><th>span"
		"</th><th>time</th><th>steps</th><th>p50</th><th>p90</th><th>p99</th><th>max</th>"
		"<th>data_load</th><th>marks</th></tr>\n", d->nepochs);
	if (d->epochs.p)
		fputs(d->epochs.p, f);
	fputs("</table>\n", f);
}

static int session_section(FILE *f, struct spool_view *v, struct rsession *s, size_t idx)
{
	struct report_data d = {};
	char id[64], title[256];
	const cJSON *h;
	int err = report_data__read(&d, v, s);

	fprintf(f, "<section class=\"session\" data-rank=\"%ld\" data-steps=\"%zu\">\n"
		"<h2>rank %ld (", s->rank, d.steps, s->rank);
	report__html(f, s->host);
	fprintf(f, ", pid %ld)</h2>\n<p>session ", s->pid);
	report__html(f, s->id);
	fprintf(f, ", %s; %zu steps</p>\n", s->final ? "final" : "no final batch (still running, "
		"or the observer died)", d.steps);
	cJSON_ArrayForEach(h, d.ex.hangs) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "name");
		const cJSON *open = cJSON_GetObjectItemCaseSensitive(h, "open_ns");

		fputs("<p class=\"hang\">hang: no progress for ", f);
		fprintf(f, "%.2fs in ", cJSON_IsNumber(open) ? open->valuedouble / 1e9 : 0);
		report__html(f, cJSON_IsString(name) ? name->valuestring : "?");
		fputs("</p>\n", f);
	}
	if (d.steps) {
		struct chart_line l = { "step", "#333", &d.total }, ph[PH__COUNT];
		struct chart_line sl = { "data_load share", "#d62728", &d.stall };

		snprintf(id, sizeof(id), "s%zu-step-time", idx);
		report__chart(f, id, "Step time", "ms", 1e3, &l, 1, "step");
		for (int p = 0; p < PH__COUNT; p++)
			ph[p] = (struct chart_line){ phase_names[p], phase_colors[p], &d.phase[p] };
		snprintf(id, sizeof(id), "s%zu-phases", idx);
		report__chart(f, id, "Phases per step", "ms", 1e3, ph, PH__COUNT, "step");
		snprintf(id, sizeof(id), "s%zu-stall", idx);
		report__chart(f, id, "Data-load stall share (data_load / step)", "%", 100, &sl, 1,
			      "step");
	} else {
		fputs("<p>No closed step in this session.</p>\n", f);
	}
	for (size_t k = 0; k < d.nmarks; k++) {
		struct chart_line l = { d.marks[k].name, "#17becf", &d.marks[k].d };

		snprintf(id, sizeof(id), "s%zu-mark%zu", idx, k);
		snprintf(title, sizeof(title), "Mark %.120s", d.marks[k].name);
		report__chart(f, id, title, "", 1, &l, 1, "mark");
	}
	epochs_table(f, &d);
	report_snap__chart(f, v, s, &d.ex, idx);
	kernels_table(f, s);
	if (s->has_root)
		table(f, "Attributes", s->root.attrs);
	if (s->health)
		table(f, "Health", s->health);
	fputs("</section>\n", f);
	report_data__free(&d);
	return err;
}

static int by_rank(const void *a, const void *b)
{
	const struct rsession *x = *(struct rsession *const *)a, *y = *(struct rsession *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->start_ns > y->start_ns ? -1 : x->start_ns < y->start_ns;
}

/* A stream that escapes what is written to it into f's HTML (the ranks' table, written as
 * trace --ranks prints it, however long). */
static ssize_t html_write(void *cookie, const char *buf, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		switch (buf[i]) {
		case '<': fputs("&lt;", cookie); break;
		case '>': fputs("&gt;", cookie); break;
		case '&': fputs("&amp;", cookie); break;
		case '"': fputs("&quot;", cookie); break;
		default: fputc(buf[i], cookie);
		}
	}
	return (ssize_t)size;
}

static int ranks_section(FILE *f, struct spool_view *v, const struct options *o)
{
	bool any = false;
	FILE *h;
	int err;

	for (size_t i = 0; i < v->nsessions && !any; i++) {
		const cJSON *role = view__root_attr(v->sessions[i], "role");

		any = view__wanted(o, v->sessions[i]) && cJSON_IsString(role) &&
		      !strcmp(role->valuestring, "rank");
	}
	fputs("<h2>Ranks side by side (trace --ranks)</h2>\n<pre id=\"ranks\">", f);
	h = fopencookie(f, "w", (cookie_io_functions_t){ .write = html_write });
	if (!h)
		return -errno;
	err = any ? trace_ranks__print(h, v, o) : 0;
	if (!any)
		fprintf(h, "no ranks of a distributed job (sessions with role=rank) here\n");
	fclose(h);
	fputs("</pre>\n", f);
	return err;
}

int report__write(FILE *f, struct spool_view *v, const struct options *o)
{
	struct rsession **order = calloc(v->nsessions + 1, sizeof(void *));
	char when[64];
	size_t n = 0;
	time_t now = time(NULL);
	struct tm tm;
	int err = order ? 0 : -ENOMEM;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>cirron-probe report</title>\n<style>\n"
	      "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}\n"
	      "h2{border-top:2px solid #ccc;padding-top:.6em}\n"
	      "svg.chart{background:#fafafa;border:1px solid #ddd;display:block}\n"
	      ".series{fill:none;stroke-width:1.3}.axis{stroke:#888}\n"
	      ".lbl{font-size:11px;fill:#555}.note{color:#777}.hang{color:#b00;font-weight:bold}\n"
	      "table.kv{border-collapse:collapse;font-size:12px}\n"
	      "table.kv th,table.kv td{border:1px solid #ddd;padding:2px 6px;text-align:left}\n"
	      "table.kv td{max-width:60em;overflow-wrap:anywhere}\n"
	      "pre{background:#f4f4f4;padding:.6em;overflow-x:auto}\n"
	      "</style></head><body>\n<h1>cirron-probe report</h1>\n<p>Spool ", f);
	report__html(f, o->source ? o->source : o->path);
	fprintf(f, ", written %s by cirron-probe " CIRRON_VERSION ".</p>\n", when);
	if (!err)
		err = ranks_section(f, v, o);
	/* a job's helpers are listed in its section, not as sessions */
	for (size_t i = 0; order && i < v->nsessions; i++)
		if (view__wanted(o, v->sessions[i]) && !view__job_of(v, v->sessions[i]))
			order[n++] = v->sessions[i];
	if (n > 1)
		qsort(order, n, sizeof(void *), by_rank);
	for (size_t i = 0; i < n && !err; i++) {
		char *helpers = NULL;
		size_t hlen = 0;
		FILE *m;

		err = session_section(f, v, order[i], i);
		m = open_memstream(&helpers, &hlen);
		if (m) {
			view__print_helpers(m, v, order[i]);
			fclose(m);
		}
		if (helpers && *helpers) {
			fputs("<pre class=\"helpers\">", f);
			report__html(f, helpers);
			fputs("</pre>\n", f);
		}
		free(helpers);
	}
	if (!n)
		fputs("<p>No sessions in this spool.</p>\n", f);
	free(order);
	/* The only script: it marks the page as drawn (the tests read it back). */
	fputs("<script>\n\"use strict\";\n"
	      "document.documentElement.dataset.charts = "
	      "document.querySelectorAll(\"svg.chart\").length;\n"
	      "document.documentElement.dataset.sessions = "
	      "document.querySelectorAll(\"section.session\").length;\n"
	      "</script>\n</body></html>\n", f);
	return err;
}

int report__main(const struct options *o)
{
	struct spool_view v = {};
	struct outfile out;
	int err = view__load(o, &v), werr;

	if (err) {
		spool_view__free(&v);
		return err;
	}
	err = outfile__open(&out, o->out_file ? o->out_file : "report.html");
	if (!err) {
		werr = report__write(out.f, &v, o);
		if (werr) {
			outfile__abort(&out);
			elog("out of memory reading %s", o->path);
			spool_view__free(&v);
			return EXIT_FAILURE_RUNTIME;
		}
		err = outfile__commit(&out);
	}
	if (err) {
		elog("cannot write %s: %s", o->out_file ? o->out_file : "report.html",
		     outfile__strerror(&out, err));
		err = EXIT_OUTPUT_UNWRITABLE;
	} else if (v.src.skipped) {
		err = EXIT_CORRUPT_INPUT;
	}
	spool_view__free(&v);
	return err;
}
