// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// report's weight-norm chart from --snapshots records (report_snap.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_chart.h"
#include "report/report_snap.h"
#include "trace/snapshot_view.h"

#define LAYERS_MAX 10

struct snap {
	double *ep;			/* the epochs, in order */
	size_t n, cap;
	size_t exact, len, more;
	char epochs[512];
	const char *first_model;	/* owned copy */
	bool several, oom;
	char names[LAYERS_MAX][128];
	double *v[LAYERS_MAX];		/* per layer, per epoch: sum of squared norms */
	size_t nl;
};

static double rec_num(const cJSON *r, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The layer of a parameter: its name up to the last dot ("fc1" of "fc1.weight"). */
static void layer_of(const char *param, char *buf, size_t size)
{
	const char *dot = strrchr(param, '.');

	snprintf(buf, size, "%.*s", dot ? (int)(dot - param) : (int)strlen(param), param);
}

static size_t epoch_at(const struct snap *sn, double e)
{
	size_t x;

	for (x = sn->n; x-- > 0;)	/* records come by epoch: the newest is likely */
		if (sn->ep[x] == e)
			return x;
	return sn->n;
}

/* First reading: the epochs (one point each, however many models), which are exact. */
static void epochs_of(const cJSON *r, void *ctx)
{
	struct snap *sn = ctx;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "model");
	const cJSON *cons = cJSON_GetObjectItemCaseSensitive(r, "consistency");
	double e = rec_num(r, "epoch", -1);

	if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "params")))
		return;	/* an error record: no numbers */
	if (cJSON_IsString(m)) {
		if (!sn->first_model)
			sn->first_model = strdup(m->valuestring);
		else if (strcmp(m->valuestring, sn->first_model) != 0)
			sn->several = true;
	}
	if (epoch_at(sn, e) < sn->n)
		return;
	if (sn->n == sn->cap) {
		size_t cap = sn->cap ? sn->cap * 2 : 16;
		double *a = reallocarray(sn->ep, cap, sizeof(*a));

		if (!a) {
			sn->oom = true;
			return;
		}
		sn->ep = a;
		sn->cap = cap;
	}
	sn->ep[sn->n++] = e;
	sn->exact += cJSON_IsString(cons) && !strcmp(cons->valuestring, "exact") &&
		     rec_num(r, "after_step", -1) == rec_num(r, "epoch_last_step", -2);
	if (sn->len < sizeof(sn->epochs))
		sn->len += (size_t)snprintf(sn->epochs + sn->len, sizeof(sn->epochs) - sn->len,
					    "%s%.0f", sn->n > 1 ? ", " : "", e);
}

/* Second reading: each layer's norms. */
static void norms_of(const cJSON *r, void *ctx)
{
	struct snap *sn = ctx;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(r, "params");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "model"), *p;
	size_t x = epoch_at(sn, rec_num(r, "epoch", -1));
	char layer[128];

	if (x == sn->n || !cJSON_GetArraySize(params))
		return;
	cJSON_ArrayForEach(p, params) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
		double norm = snapshot_view__norm(p, "weights");
		char base[128];
		size_t k;

		if (!cJSON_IsString(name) || norm < 0)
			continue;
		layer_of(name->valuestring, base, sizeof(base));
		if (sn->several && cJSON_IsString(m))
			snprintf(layer, sizeof(layer), "%.60s/%.60s", m->valuestring, base);
		else
			snprintf(layer, sizeof(layer), "%s", base);
		for (k = 0; k < sn->nl && strcmp(sn->names[k], layer) != 0; k++)
			;
		if (k == sn->nl) {
			if (sn->nl == LAYERS_MAX) {
				sn->more += !x;
				continue;
			}
			sn->v[k] = calloc(sn->n, sizeof(double));
			if (!sn->v[k]) {
				sn->oom = true;
				return;
			}
			snprintf(sn->names[sn->nl++], sizeof(sn->names[0]), "%s", layer);
		}
		sn->v[k][x] += norm * norm;
	}
}

void report_snap__chart(FILE *f, struct spool_view *v, struct rsession *s,
			const struct pass_extras *ex, size_t idx)
{
	static const char *const colors[LAYERS_MAX] = {
		"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
		"#7f7f7f", "#bcbd22", "#17becf",
	};
	struct snap sn = {};
	struct downsample d[LAYERS_MAX] = {};
	struct chart_line lines[LAYERS_MAX];
	char id[64];
	size_t k;

	if (!ex->nsnap)
		return;
	view__snapshots(v, s, ex, epochs_of, &sn);
	if (sn.n && !sn.oom)
		view__snapshots(v, s, ex, norms_of, &sn);
	if (!sn.n || !sn.nl || sn.oom)
		goto out;
	for (k = 0; k < sn.nl; k++) {
		if (downsample__init(&d[k]))
			goto out;
		for (size_t i = 0; i < sn.n; i++)
			downsample__add(&d[k], sqrt(sn.v[k][i]));
		lines[k] = (struct chart_line){ sn.names[k], colors[k], &d[k] };
	}
	snprintf(id, sizeof(id), "s%zu-weight-norms", idx);
	report__chart(f, id, "Weight norm per layer at each epoch's end (--snapshots)", "", 1,
		      lines, sn.nl, "snapshot");
	fputs("<p class=\"note\">snapshots of epochs ", f);
	report__html(f, sn.epochs);
	if (sn.more)
		fprintf(f, "; %zu more parameters in later layers not drawn (`cirron-probe trace` "
			"lists them)", sn.more);
	fprintf(f, "; %zu of %zu exactly the state after the epoch's last optimizer step "
		"(the others: `cirron-probe trace`)</p>\n", sn.exact, sn.n);
out:
	for (k = 0; k < LAYERS_MAX; k++) {
		downsample__free(&d[k]);
		free(sn.v[k]);
	}
	free(sn.ep);
	free((char *)sn.first_model);
}
