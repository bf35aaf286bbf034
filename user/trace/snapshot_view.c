// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's view of --snapshots records: what the weights looked like at each epoch's end.
#include <cjson/cJSON.h>
#include <string.h>
#include "trace/snapshot_view.h"

#define NAME_MAX_W 48

static const char *str(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

static double num(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

double snapshot_view__norm(const cJSON *param, const char *which)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(param, which);

	return cJSON_IsObject(st) ? num(st, "norm", -1) : -1;
}

static void shape_text(const cJSON *p, char *buf, size_t size)
{
	const cJSON *d;
	size_t n = 0;

	buf[0] = 0;
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(p, "shape"))
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%.0f", n ? "x" : "",
					      d->valuedouble);
	if (!buf[0])
		snprintf(buf, size, "scalar");
}

/* A stat's cell: %.4g, or "-" when there is none. */
static const char *cell(const cJSON *stats, const char *key, char *buf, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(stats, key);

	if (cJSON_IsNumber(v))
		snprintf(buf, size, "%.4g", v->valuedouble);
	else
		snprintf(buf, size, "-");
	return buf;
}

static void print_one(FILE *f, const cJSON *r)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(r, "params"), *p;
	int w = (int)strlen("parameter");
	char shape[64], a[32], b[32], c[32], d[32];

	fprintf(f, "snapshot: epoch %.0f", num(r, "epoch", -1));
	if (str(r, "model", NULL))
		fprintf(f, ", %s", str(r, "model", ""));
	fprintf(f, " (%s", str(r, "mode", "?"));
	if (str(r, "consistency", NULL)) {
		fprintf(f, ", %s after step %.0f", str(r, "consistency", ""), num(r, "after_step", -1));
		if (num(r, "after_step", -1) != num(r, "epoch_last_step", -1))
			fprintf(f, " (its last: %.0f)", num(r, "epoch_last_step", -1));
	}
	if (cJSON_IsArray(params))
		fprintf(f, ", %d parameters", cJSON_GetArraySize(params));
	fprintf(f, ", %.1f KiB read in %.1f ms", num(r, "bytes_read", 0) / 1024,
		num(r, "duration_ms", 0));
	if (num(r, "sampled_fraction", 1) < 1)
		fprintf(f, ", stats from 1/%.0f of each tensor", num(r, "sample_every_blocks", 0));
	fprintf(f, ")%s\n", cJSON_GetArraySize(params) ? ":" : "");
	if (str(r, "error", NULL))
		fprintf(f, "  error: %s\n", str(r, "error", ""));
	if (str(r, "cancelled", NULL))
		fprintf(f, "  cut short: %s\n", str(r, "cancelled", ""));
	if (str(r, "note", NULL))
		fprintf(f, "  note: %s\n", str(r, "note", ""));
	if (!cJSON_GetArraySize(params))
		return;
	cJSON_ArrayForEach(p, params) {
		int n = (int)strlen(str(p, "name", "?"));

		w = n > w ? (n < NAME_MAX_W ? n : NAME_MAX_W) : w;
	}
	fprintf(f, "  %-*s %-12s %-9s %11s %11s %11s %11s\n", w, "parameter", "shape", "dtype",
		"mean", "std", "norm", "grad norm");
	cJSON_ArrayForEach(p, params) {
		const cJSON *wt = cJSON_GetObjectItemCaseSensitive(p, "weights");
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(p, "grad");

		shape_text(p, shape, sizeof(shape));
		fprintf(f, "  %-*.*s %-12s %-9s %11s %11s %11s %11s", w, NAME_MAX_W,
			str(p, "name", "?"), shape, str(p, "dtype", "?"),
			cell(wt, "mean", a, sizeof(a)), cell(wt, "std", b, sizeof(b)),
			cell(wt, "norm", c, sizeof(c)), cell(g, "norm", d, sizeof(d)));
		if (str(p, "stats_unavailable", NULL))
			fprintf(f, "  (%s, %s)", str(p, "device", "?"), str(p, "stats_unavailable", ""));
		fputc('\n', f);
	}
}

void snapshot_view__print(const cJSON *rec, void *f)
{
	print_one(f, rec);
}
