// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `report`: one self-contained HTML page (inline SVG and style, a few lines of inline
// script, nothing fetched) per spool: per session, step time over the steps, the phases of
// each step, the data-load stall share, numeric marks, hang records, the weight norm per
// layer at each epoch's end (--snapshots), attributes and health;
// on top the `trace --ranks` findings. Long runs are drawn as at most REPORT_MAX_POINTS
// points, each the mean of consecutive steps, and the page says so.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/outfile.h"
#include "read/report.h"
#include "read/snapshot_view.h"
#include "read/trace_ranks.h"
#include "read/view.h"

#define REPORT_MAX_POINTS 600
#define MARK_SERIES_MAX 8
#define LAYERS_MAX 10
#define REPORT_KERNELS 20	/* rows of the kernels table */
#define CHART_W 900
#define CHART_H 200
#define PAD_L 70
#define PAD_B 24

enum { PH_DATA, PH_FORWARD, PH_BACKWARD, PH_OPTIMIZER, PH_COLLECTIVE, PH__COUNT };
static const char *const phase_names[PH__COUNT] = {
	"data_load", "forward", "backward", "optimizer_step", "collective_wait",
};
static const char *const phase_colors[PH__COUNT] = {
	"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
};

struct steps {
	double *total, *phase[PH__COUNT];	/* seconds, per step in start order */
	size_t n, cap;
};

struct mark_series {
	char name[128];
	double *v;
	size_t n, cap;
};

static void html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static double secs(const struct rspan *r)
{
	return r->sp.end_ns > r->sp.start_ns ? (double)(r->sp.end_ns - r->sp.start_ns) / 1e9 : 0;
}

static void add_phases(double ph[PH__COUNT], const struct rspan *r, int depth)
{
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++) {
		for (int p = 0; p < PH__COUNT; p++)
			if (!strcmp(r->kids[i]->sp.name, phase_names[p]))
				ph[p] += secs(r->kids[i]);
		add_phases(ph, r->kids[i], depth + 1);
	}
}

static int push(double **a, size_t n, size_t *cap, double v)
{
	if (n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		double *b = reallocarray(*a, c, sizeof(*b));

		if (!b)
			return -ENOMEM;
		*a = b;
		*cap = c;
	}
	(*a)[n] = v;
	return 0;
}

static void collect(struct steps *st, const struct rspan *r, int depth)
{
	if (!strcmp(r->sp.name, "step") && r->sp.status == SPAN_OK && r->sp.end_ns) {
		double ph[PH__COUNT] = {};
		size_t cap = st->cap;

		add_phases(ph, r, 0);
		if (push(&st->total, st->n, &cap, secs(r)))
			return;
		for (int p = 0; p < PH__COUNT; p++) {
			size_t c = st->cap;

			if (push(&st->phase[p], st->n, &c, ph[p]))
				return;
		}
		st->cap = cap;
		st->n++;
		return;
	}
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++)
		collect(st, r->kids[i], depth + 1);
}

static void collect_marks(struct mark_series *ms, size_t *nms, const struct rspan *r, int depth)
{
	const cJSON *m, *fld;

	cJSON_ArrayForEach(m, r->sp.marks) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");

		if (!cJSON_IsString(name))
			continue;
		cJSON_ArrayForEach(fld, m) {
			char key[128];
			size_t k;

			if (!cJSON_IsNumber(fld) || !strcmp(fld->string, "ts_ns") ||
			    !strcmp(fld->string, "tid"))
				continue;
			snprintf(key, sizeof(key), "%s%s%s", name->valuestring,
				 strcmp(fld->string, "value") ? "." : "",
				 strcmp(fld->string, "value") ? fld->string : "");
			for (k = 0; k < *nms && strcmp(ms[k].name, key) != 0; k++)
				;
			if (k == *nms) {
				if (*nms == MARK_SERIES_MAX)
					continue;
				snprintf(ms[k].name, sizeof(ms[k].name), "%s", key);
				(*nms)++;
			}
			if (!push(&ms[k].v, ms[k].n, &ms[k].cap, fld->valuedouble))
				ms[k].n++;
		}
	}
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++)
		collect_marks(ms, nms, r->kids[i], depth + 1);
}

/* Means of consecutive runs: n values as m <= REPORT_MAX_POINTS points. */
static size_t downsample(const double *v, size_t n, double *out)
{
	size_t m = n < REPORT_MAX_POINTS ? n : REPORT_MAX_POINTS;

	for (size_t b = 0; b < m; b++) {
		size_t from = b * n / m, to = (b + 1) * n / m;
		double sum = 0;

		for (size_t i = from; i < to; i++)
			sum += v[i];
		out[b] = to > from ? sum / (double)(to - from) : 0;
	}
	return m;
}

struct line {
	const char *name, *color;
	const double *v;	/* n values, before downsampling */
};

/* An SVG line chart of up to PH__COUNT series over the same n steps. */
static void chart(FILE *f, const char *id, const char *title, const char *unit, double scale,
		  const struct line *lines, size_t nlines, size_t n, const char *x_what)
{
	double pts[REPORT_MAX_POINTS], max = 0;
	size_t m = 0;

	for (size_t l = 0; l < nlines; l++)
		for (size_t i = 0; i < n; i++)
			if (lines[l].v[i] * scale > max)
				max = lines[l].v[i] * scale;
	if (max <= 0)
		max = 1;
	fprintf(f, "<h3>");
	html(f, title);
	fprintf(f, "</h3>\n<svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" "
		"height=\"%d\" role=\"img\">\n", id, CHART_W, CHART_H, CHART_W, CHART_H);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>"
		"<line x1=\"%d\" y1=\"4\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", PAD_L,
		CHART_H - PAD_B, CHART_W - 4, CHART_H - PAD_B, PAD_L, PAD_L, CHART_H - PAD_B);
	fprintf(f, "<text x=\"%d\" y=\"14\" class=\"lbl\" text-anchor=\"end\">%.4g %s</text>"
		"<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">0</text>\n", PAD_L - 4,
		max, unit, PAD_L - 4, CHART_H - PAD_B);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\">%s 0</text><text x=\"%d\" y=\"%d\" "
		"class=\"lbl\" text-anchor=\"end\">%s %zu</text>\n", PAD_L, CHART_H - 6, x_what,
		CHART_W - 4, CHART_H - 6, x_what, n ? n - 1 : 0);
	for (size_t l = 0; l < nlines; l++) {
		m = downsample(lines[l].v, n, pts);
		fprintf(f, "<polyline class=\"series\" data-name=\"%s\" data-points=\"%zu\" "
			"stroke=\"%s\" points=\"", lines[l].name, m, lines[l].color);
		for (size_t i = 0; i < m; i++) {
			double x = PAD_L + (m > 1 ? (double)i * (CHART_W - 4 - PAD_L) / (double)(m - 1)
					    : 0);
			double y = (CHART_H - PAD_B) - pts[i] * scale / max * (CHART_H - PAD_B - 8);

			fprintf(f, "%s%.1f,%.1f", i ? " " : "", x, y);
		}
		fputs("\"/>\n", f);
	}
	fputs("</svg>\n<p class=\"legend\">", f);
	for (size_t l = 0; l < nlines; l++) {
		fprintf(f, "<span style=\"color:%s\">&#9632; ", lines[l].color);
		html(f, lines[l].name);
		fputs("</span> ", f);
	}
	if (n > REPORT_MAX_POINTS)
		fprintf(f, "<span class=\"note\">%zu %ss drawn as %zu points, each the mean of "
			"%.1f consecutive ones</span>", n, x_what, m, (double)n / (double)m);
	else
		fprintf(f, "<span class=\"note\">%zu %ss, each drawn</span>", n, x_what);
	fputs("</p>\n", f);
}

/* The layer of a parameter: its name up to the last dot ("fc1" of "fc1.weight"). */
static void layer_of(const char *param, char *buf, size_t size)
{
	const char *dot = strrchr(param, '.');

	snprintf(buf, size, "%.*s", dot ? (int)(dot - param) : (int)strlen(param), param);
}

static double rec_num(const cJSON *r, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* --snapshots: the L2 norm of each layer's weights (its parameters' norms combined) at
 * each epoch's end; the first LAYERS_MAX layers in the models' order, each named with its
 * model where an epoch has several (a GAN's generator and discriminator). */
static void snapshot_chart(FILE *f, const struct rsession *s, size_t idx)
{
	static const char *const colors[LAYERS_MAX] = {
		"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
		"#7f7f7f", "#bcbd22", "#17becf",
	};
	char names[LAYERS_MAX][128], layer[128], id[64], epochs[512];
	double *v[LAYERS_MAX] = {}, *ep = NULL;
	struct line lines[LAYERS_MAX];
	size_t nl = 0, n = 0, more = 0, len = 0, exact = 0, cap;
	const cJSON *r, *p, *first_model = NULL;
	bool several = false;

	cap = (size_t)cJSON_GetArraySize(s->snapshots);
	ep = calloc(cap + 1, sizeof(double));
	if (!ep)
		return;
	epochs[0] = 0;
	cJSON_ArrayForEach(r, s->snapshots) {	/* one point per epoch, however many models */
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "model");
		double e = rec_num(r, "epoch", -1);
		size_t x;

		if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "params")))
			continue;	/* an error record: no numbers */
		if (cJSON_IsString(m)) {
			if (!first_model)
				first_model = m;
			else if (strcmp(m->valuestring, first_model->valuestring) != 0)
				several = true;
		}
		for (x = 0; x < n && ep[x] != e; x++)
			;
		if (x < n)
			continue;
		ep[n++] = e;
		exact += cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "consistency")) &&
			 !strcmp(cJSON_GetObjectItemCaseSensitive(r, "consistency")->valuestring,
				 "exact") &&
			 rec_num(r, "after_step", -1) == rec_num(r, "epoch_last_step", -2);
		if (len < sizeof(epochs))
			len += (size_t)snprintf(epochs + len, sizeof(epochs) - len, "%s%.0f",
						n > 1 ? ", " : "", e);
	}
	cJSON_ArrayForEach(r, s->snapshots) {
		const cJSON *params = cJSON_GetObjectItemCaseSensitive(r, "params");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "model");
		size_t x;

		for (x = 0; x < n && ep[x] != rec_num(r, "epoch", -1); x++)
			;
		if (x == n || !cJSON_GetArraySize(params))
			continue;
		cJSON_ArrayForEach(p, params) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
			double norm = snapshot_view__norm(p, "weights");
			char base[128];
			size_t k;

			if (!cJSON_IsString(name) || norm < 0)
				continue;
			layer_of(name->valuestring, base, sizeof(base));
			if (several && cJSON_IsString(m))
				snprintf(layer, sizeof(layer), "%.60s/%.60s", m->valuestring, base);
			else
				snprintf(layer, sizeof(layer), "%s", base);
			for (k = 0; k < nl && strcmp(names[k], layer) != 0; k++)
				;
			if (k == nl) {
				if (nl == LAYERS_MAX) {
					more += !x;
					continue;
				}
				v[k] = calloc(n, sizeof(double));
				if (!v[k])
					goto out;
				snprintf(names[nl++], sizeof(names[0]), "%s", layer);
			}
			v[k][x] += norm * norm;
		}
	}
	if (!n || !nl)
		goto out;
	for (size_t k = 0; k < nl; k++) {
		for (size_t i = 0; i < n; i++)
			v[k][i] = sqrt(v[k][i]);
		lines[k] = (struct line){ names[k], colors[k], v[k] };
	}
	snprintf(id, sizeof(id), "s%zu-weight-norms", idx);
	chart(f, id, "Weight norm per layer at each epoch's end (--snapshots)", "", 1, lines, nl,
	      n, "snapshot");
	fputs("<p class=\"note\">snapshots of epochs ", f);
	html(f, epochs);
	if (more)
		fprintf(f, "; %zu more parameters in later layers not drawn (`cirron-probe trace` "
			"lists them)", more);
	fprintf(f, "; %zu of %zu exactly the state after the epoch's last optimizer step "
		"(the others: `cirron-probe trace`)</p>\n", exact, n);
out:
	free(ep);
	for (size_t k = 0; k < nl; k++)
		free(v[k]);
}

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
		html(f, a->string ? a->string : "?");
		fputs("</th><td>", f);
		html(f, val);
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
		html(f, kl.k[i]->string);
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

static void session_section(FILE *f, const struct rsession *s, size_t idx)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	struct mark_series ms[MARK_SERIES_MAX] = {};
	struct steps st = {};
	size_t nms = 0;
	char id[64], title[256];
	double *stall = NULL;
	const cJSON *h;

	for (size_t j = 0; j < s->ntops; j++) {
		collect(&st, s->tops[j], 0);
		collect_marks(ms, &nms, s->tops[j], 0);
	}
	fprintf(f, "<section class=\"session\" data-rank=\"%ld\" data-steps=\"%zu\">\n"
		"<h2>rank %ld (", s->rank, st.n, s->rank);
	html(f, s->host);
	fprintf(f, ", pid %ld)</h2>\n<p>session ", s->pid);
	html(f, s->id);
	fprintf(f, ", %s; %zu steps</p>\n", s->final ? "final" : "no final batch (still running, "
		"or the observer died)", st.n);
	cJSON_ArrayForEach(h, s->hangs) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "name");
		const cJSON *open = cJSON_GetObjectItemCaseSensitive(h, "open_ns");

		fputs("<p class=\"hang\">hang: no progress for ", f);
		fprintf(f, "%.2fs in ", cJSON_IsNumber(open) ? open->valuedouble / 1e9 : 0);
		html(f, cJSON_IsString(name) ? name->valuestring : "?");
		fputs("</p>\n", f);
	}
	if (st.n) {
		struct line l = { "step", "#333", st.total };
		struct line ph[PH__COUNT];

		snprintf(id, sizeof(id), "s%zu-step-time", idx);
		chart(f, id, "Step time", "ms", 1e3, &l, 1, st.n, "step");
		for (int p = 0; p < PH__COUNT; p++)
			ph[p] = (struct line){ phase_names[p], phase_colors[p], st.phase[p] };
		snprintf(id, sizeof(id), "s%zu-phases", idx);
		chart(f, id, "Phases per step", "ms", 1e3, ph, PH__COUNT, st.n, "step");
		stall = calloc(st.n, sizeof(*stall));
		if (stall) {
			struct line sl = { "data_load share", "#d62728", stall };

			for (size_t i = 0; i < st.n; i++)
				stall[i] = st.total[i] > 0 ? st.phase[PH_DATA][i] / st.total[i] : 0;
			snprintf(id, sizeof(id), "s%zu-stall", idx);
			chart(f, id, "Data-load stall share (data_load / step)", "%", 100, &sl, 1,
			      st.n, "step");
		}
	} else {
		fputs("<p>No closed step in this session.</p>\n", f);
	}
	for (size_t k = 0; k < nms; k++) {
		struct line l = { ms[k].name, "#17becf", ms[k].v };

		snprintf(id, sizeof(id), "s%zu-mark%zu", idx, k);
		snprintf(title, sizeof(title), "Mark %.120s", ms[k].name);
		chart(f, id, title, "", 1, &l, 1, ms[k].n, "mark");
	}
	snapshot_chart(f, s, idx);
	kernels_table(f, s);
	if (root)
		table(f, "Attributes", root->sp.attrs);
	if (s->health)
		table(f, "Health", s->health);
	fputs("</section>\n", f);
	free(stall);
	free(st.total);
	for (int p = 0; p < PH__COUNT; p++)
		free(st.phase[p]);
	for (size_t k = 0; k < nms; k++)
		free(ms[k].v);
}

static int by_rank(const void *a, const void *b)
{
	const struct rsession *x = *(struct rsession *const *)a, *y = *(struct rsession *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->start_ns > y->start_ns ? -1 : x->start_ns < y->start_ns;
}

void report__write(FILE *f, const struct spool_view *v, const struct options *o)
{
	struct rsession **order = calloc(v->nsessions + 1, sizeof(void *));
	char *ranks = NULL, when[64];
	size_t len = 0, n = 0;
	time_t now = time(NULL);
	struct tm tm;
	FILE *m;

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
	html(f, o->source ? o->source : o->path);
	fprintf(f, ", written %s by cirron-probe " CIRRON_VERSION ".</p>\n", when);
	m = open_memstream(&ranks, &len);
	if (m) {
		trace_ranks__print(m, v, o);
		fclose(m);
	}
	if (ranks && *ranks) {
		fputs("<h2>Ranks side by side (trace --ranks)</h2>\n<pre id=\"ranks\">", f);
		html(f, ranks);
		fputs("</pre>\n", f);
	}
	free(ranks);
	/* a job's helpers are listed in its section, not as sessions */
	for (size_t i = 0; order && i < v->nsessions; i++)
		if (view__wanted(o, v->sessions[i]) && !view__job_of(v, v->sessions[i]))
			order[n++] = v->sessions[i];
	if (n > 1)
		qsort(order, n, sizeof(void *), by_rank);
	for (size_t i = 0; i < n; i++) {
		char *helpers = NULL;
		size_t hlen = 0;

		session_section(f, order[i], i);
		m = open_memstream(&helpers, &hlen);
		if (m) {
			view__print_helpers(m, v, order[i]);
			fclose(m);
		}
		if (helpers && *helpers) {
			fputs("<pre class=\"helpers\">", f);
			html(f, helpers);
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
}

int report__main(const struct options *o)
{
	struct spool_view v = {};
	struct outfile out;
	int err = view__load(o, &v);

	if (err) {
		spool_view__free(&v);
		return err;
	}
	err = outfile__open(&out, o->out_file ? o->out_file : "report.html");
	if (!err) {
		report__write(out.f, &v, o);
		err = outfile__commit(&out);
	}
	if (err) {
		elog("cannot write %s: %s", o->out_file ? o->out_file : "report.html",
		     outfile__strerror(&out, err));
		err = EXIT_OUTPUT_UNWRITABLE;
	} else if (v.skipped) {
		err = EXIT_CORRUPT_INPUT;
	}
	spool_view__free(&v);
	return err;
}
