// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's requests line: latency percentiles of an inference process (requests_view.h).
#include "trace/requests_view.h"

static const char *approx(const struct pctl *p)
{
	return pctl__approx(p) ? "~" : "";
}

static void print_ms(FILE *f, const char *what, struct pctl *x)
{
	if (!x->count)
		return;
	fprintf(f, "; %s p50 %s%.1fms p90 %s%.1fms p99 %s%.1fms", what, approx(x),
		(double)pctl__pct(x, 50) / 1e6, approx(x), (double)pctl__pct(x, 90) / 1e6,
		approx(x), (double)pctl__pct(x, 99) / 1e6);
}

void requests_view__print(FILE *f, struct req_stats *r)
{
	if (!r->all)
		return;
	fprintf(f, "requests: %llu ended (%zu in all)", (unsigned long long)r->latency.count, r->all);
	print_ms(f, "latency", &r->latency);
	print_ms(f, "ttft", &r->ttft);
	if (r->rate.count)	/* kept x 1000 */
		fprintf(f, "; decode p50 %s%.0f tokens/s per sequence", approx(&r->rate),
			(double)pctl__pct(&r->rate, 50) / 1000);
	fputc('\n', f);
}
