// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// GPU time on a target's spans. The session tells this file of every span's open and close
// (session.gpu); the CUPTI companion's batches come as EV_GPU_BATCH records from the events
// ring, go through the join (gputime/gpu_join.h) and onto the spans (gputime/gpu_spans.h); a
// closed span waits, not written, until the records of every call made before its end are
// in, then is released onto the session. Without the companion, a closed span that launched
// waits for a synchronize that began after its last launch (the process's counters, read at
// each anchor event and flush) for its bound.
#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "common/log.h"
#include "gputime/gpu_join.h"
#include "gputime/gpu_spans.h"
#include "observe/gpu_time.h"
#include "tree/clock.h"

struct gpu_time {
	struct observer *o;
	struct target *t;
	struct gpu_join join;
	struct gpu_spans spans;
	bool companion;		/* a batch came: the process has the companion */
	uint64_t batches;
};

/* A span's time back on BPF's clock: by its session's offset, which made it */
static uint64_t to_mono(const struct target *t, uint64_t wall)
{
	return (uint64_t)((int64_t)wall - t->clock.wall_minus_mono_ns);
}

static struct gpu_source source(const struct gpu_time *g)
{
	struct gpu_source s = { .join = g->companion ? &g->join : NULL };

	s.cupti = g->companion && g->join.state == GPU_STATE_ACTIVE;
	s.active_since = s.cupti ? g->join.active_since : 0;
	if (!g->companion)
		s.note = NULL;
	else if (g->join.state == GPU_STATE_OTHER_SUBSCRIBER)
		s.note = "another CUPTI subscriber (a profiler) holds CUPTI: the companion stood aside";
	else if (g->join.state == GPU_STATE_NO_CUPTI)
		s.note = "the process maps no libcupti: the companion has nothing to use";
	else if (g->join.state == GPU_STATE_ERROR)
		s.note = "CUPTI refused the companion (see health's gpu_companion_result)";
	return s;
}

static void span_opened(void *ctx, struct span *sp)
{
	struct gpu_time *g = ctx;

	if (gpu_spans__open(&g->spans, sp, to_mono(g->t, sp->start_ns)))
		elog("pid %d: GPU time of %s not followed: out of memory", g->t->pid, sp->name);
}

static bool span_closed(void *ctx, struct span *sp, const uint64_t *counters)
{
	struct gpu_time *g = ctx;
	struct gpu_source src = source(g);

	if (counters)
		gpu_spans__sync(&g->spans, counters[CC_SYNC_ENTRY_NS], counters[CC_SYNC_RETURN_NS]);
	return gpu_spans__close(&g->spans, sp, to_mono(g->t, sp->end_ns), counters, &src,
				clock__mono_ns());
}

static void release(void *ctx, struct span *sp)
{
	struct gpu_time *g = ctx;

	session__release(g->t->session, sp);
}

void gpu_time__start(struct observer *o, struct target *t)
{
	struct gpu_time *g = t->cuda.gpu ? t->cuda.gpu : calloc(1, sizeof(*g));

	if (!g) {
		elog("pid %d: no GPU time: out of memory", t->pid);
		return;
	}
	g->o = o;
	g->t = t;
	t->cuda.gpu = g;
	t->session->gpu = (struct session_gpu_hooks){ .opened = span_opened,
						      .closed = span_closed, .ctx = g };
	span_opened(g, t->session->root);
}

static void settle(struct gpu_time *g, bool final)
{
	struct gpu_source src = source(g);
	struct gpu_item *items = NULL;
	long n = gpu_join__take(&g->join, &items, final);

	if (n > 0)
		gpu_spans__items(&g->spans, items, (size_t)n);
	free(items);
	gpu_spans__settle(&g->spans, &src, gpu_join__watermark(&g->join), clock__mono_ns(), final,
			  release, g);
}

/* CIRRON_GPU_DUMP=FILE: every record as it came, one JSON object a line (the "rec" lines of
 * tests/unit/data/gpu/README.md), to keep a GPU's stream for the unit tests. */
static void dump(int pid, const struct cirron_gpu_rec *r, size_t n)
{
	static FILE *f;
	static bool tried;
	const char *path = getenv("CIRRON_GPU_DUMP");

	if (!tried && path && *path) {
		f = fopen(path, "a");
		if (!f)
			wlog("CIRRON_GPU_DUMP %s: cannot open it", path);
	}
	tried = true;
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "{\"pid\": %d, \"rec\": %u, \"sub\": %u, \"corr\": %u, \"a\": \"%" PRIu64
			"\", \"b\": \"%" PRIu64 "\", \"c\": \"%" PRIu64 "\"}\n", pid, r[i].type,
			r[i].sub, r[i].corr, (uint64_t)r[i].a, (uint64_t)r[i].b, (uint64_t)r[i].c);
	if (f)
		fflush(f);
}

int gpu_time__pid(const void *data, size_t size)
{
	const struct gpu_batch_event *e = data;

	return size < sizeof(*e) - sizeof(e->batch.recs) ? -1 : (int)e->pid;
}

int gpu_time__event(struct target *t, const void *data, size_t size)
{
	const struct gpu_batch_event *e = data;
	struct gpu_time *g;
	size_t n;

	if (size < sizeof(*e) - sizeof(e->batch.recs) || !t || !t->session || !(g = t->cuda.gpu))
		return 0;
	n = (size - (sizeof(*e) - sizeof(e->batch.recs))) / sizeof(e->batch.recs[0]);
	if (n > e->batch.n)
		n = e->batch.n;
	if (!g->companion)
		ilog("pid %d: GPU time from its CUPTI companion", t->pid);
	g->companion = true;
	g->batches++;
	dump(t->pid, e->batch.recs, n);
	for (size_t i = 0; i < n; i++)
		gpu_join__record(&g->join, &e->batch.recs[i]);
	settle(g, false);
	return 0;
}

void gpu_time__flush(struct observer *o, struct target *t, bool final)
{
	struct gpu_time *g = t->cuda.gpu;
	struct cuda_counts c;

	if (!g || !t->session)
		return;
	if (!bpf_map_lookup_elem(o->cuda_fd, &t->pid, &c))
		gpu_spans__sync(&g->spans, c.sync_entry_ns, c.sync_return_ns);
	settle(g, final);
}

static const char *state_name(int st)
{
	switch (st) {
	case GPU_STATE_ACTIVE: return "active";
	case GPU_STATE_OFF: return "off";
	case GPU_STATE_NO_CUPTI: return "no libcupti mapped";
	case GPU_STATE_OTHER_SUBSCRIBER: return "stood aside: another CUPTI subscriber";
	case GPU_STATE_ERROR: return "CUPTI error";
	}
	return "loaded, not heard from";
}

void gpu_time__health(const struct target *t, cJSON *h)
{
	const struct gpu_time *g = t->cuda.gpu;

	if (!g || !g->companion)
		return;
	cJSON_AddStringToObject(h, "gpu_companion", state_name(g->join.state));
	if (g->join.state_result)
		cJSON_AddNumberToObject(h, "gpu_companion_result", g->join.state_result);
	cJSON_AddNumberToObject(h, "gpu_cupti_version", (double)g->join.cupti_version);
	cJSON_AddNumberToObject(h, "gpu_batches", (double)g->batches);
	cJSON_AddNumberToObject(h, "gpu_records", (double)g->join.records);
	cJSON_AddNumberToObject(h, "gpu_calls", (double)g->join.api_records);
	cJSON_AddNumberToObject(h, "gpu_activity_records", (double)g->join.activity_records);
	cJSON_AddNumberToObject(h, "gpu_records_unplaced", (double)g->join.unplaced);
	cJSON_AddNumberToObject(h, "gpu_calls_without_records", (double)g->join.given_up);
	cJSON_AddNumberToObject(h, "gpu_records_dropped",
				(double)(g->join.companion_dropped + g->join.cupti_dropped));
	cJSON_AddNumberToObject(h, "gpu_clock_error_ns", (double)g->join.max_clock_err);
	cJSON_AddNumberToObject(h, "gpu_spans_held", (double)g->spans.held);
}

void gpu_time__free(struct target *t)
{
	struct gpu_time *g = t->cuda.gpu;

	if (!g)
		return;
	gpu_join__free(&g->join);
	gpu_spans__free(&g->spans);
	free(g);
	t->cuda.gpu = NULL;
}
