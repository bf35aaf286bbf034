// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <string.h>
#include "common/exit_codes.h"
#include "read/health.h"
#include "read/view.h"

/* A health value as the stdout line shows numbers, or "?" (an older or foreign writer). */
static const char *value(const cJSON *o, const char *key, char *buf, int size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return "?";
	json__format_value(v, buf, size);
	return buf;
}

static void print_probes(FILE *f, const cJSON *probes)
{
	char a[64], b[64], c[64], d[64], e[256];
	const cJSON *p;

	if (!cJSON_GetArraySize(probes))
		return;
	fprintf(f, "  %-32s %-10s %-18s %10s %12s  %s\n", "probe", "group", "action", "hits",
		"return_hits", "state");
	cJSON_ArrayForEach(p, probes) {
		bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "attached"));

		fprintf(f, "  %-32s %-10s %-18s %10s %12s  %s%s\n", value(p, "symbol", a, sizeof(a)),
			value(p, "group", b, sizeof(b)), value(p, "action", c, sizeof(c)),
			value(p, "hits", d, sizeof(d)), value(p, "return_hits", e, sizeof(e)),
			ok ? "attached" : "failed: ",
			ok ? "" : value(p, "error", e, sizeof(e)));
	}
}

static void print_kernel(FILE *f, const cJSON *k)
{
	char a[80], b[64], c[64], d[128];

	fprintf(f, "  kernel %s: probe ids by %s, ld.so discovery by %s (%s)\n",
		value(k, "release", a, sizeof(a)), value(k, "probe_ids", b, sizeof(b)),
		value(k, "ldso_discovery", c, sizeof(c)), value(k, "reason", d, sizeof(d)));
}

static void print_health(FILE *f, const struct rsession *s)
{
	const cJSON *h = s->health;
	char a[64], b[64], c[64];

	view__print_header(f, s);
	fprintf(f, "  from batch %llu (%zu batch files read)\n", (unsigned long long)s->last_seq,
		s->nfiles);
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
	fprintf(f, "\n  spool %s bytes in %s files before this batch\n",
		value(h, "spool_bytes", a, sizeof(a)), value(h, "spool_files", b, sizeof(b)));
	if (cJSON_GetObjectItemCaseSensitive(h, "spool_max_bytes"))
		fprintf(f, "  spool cap %s bytes (--max-spool-mb): %s files, %s bytes removed, "
			"oldest first\n", value(h, "spool_max_bytes", a, sizeof(a)),
			value(h, "spool_removed_files", b, sizeof(b)),
			value(h, "spool_removed_bytes", c, sizeof(c)));
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

int health__main(const struct options *o)
{
	struct spool_view v = {};
	int err = view__load(o, &v);

	if (!err)
		health__print(stdout, &v, o);
	if (!err && v.skipped)
		err = EXIT_CORRUPT_INPUT;
	spool_view__free(&v);
	return err;
}
