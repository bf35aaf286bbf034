// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tree/session.h"

/* enum cuda_counter's order (bpf/cirron.h): what a span made of each, while it ran */
const char *const session_counter_names[SESSION_NCOUNTERS] = {
	"cuda.launches", "cuda.memcpy_bytes", "cuda.memcpy_ns", "cuda.sync_ns", "cuda.malloc_bytes",
	"cuda.launches_driver", "cuda.graph_launches", "cuda.memcpy_calls",
	"cuda.memcpy_bytes_h2d", "cuda.memcpy_bytes_d2h", "cuda.memcpy_bytes_d2d",
	"cuda.malloc_calls", "cuda.free_calls", "cuda.sync_calls", "cuda.nccl_calls",
	"cuda.nccl_bytes",
	NULL /* CC_KERNEL_SEQ: a place, not a count (session.kernels) */, "cuda.kernels_unsplit",
	NULL, NULL, NULL /* CC_LAST_LAUNCH_NS, CC_SYNC_*_NS: times, for gpu_ns_upper */
};

static void link_span(struct session *s, struct span *sp)
{
	sp->next = s->live;
	sp->prev = NULL;
	if (s->live)
		s->live->prev = sp;
	s->live = sp;
}

static void unlink_span(struct session *s, struct span *sp)
{
	if (sp->prev)
		sp->prev->next = sp->next;
	else
		s->live = sp->next;
	if (sp->next)
		sp->next->prev = sp->prev;
}

static void free_span(struct span *sp)
{
	cJSON_Delete(sp->attrs);
	cJSON_Delete(sp->marks);
	free(sp->name);
	free(sp);
}

static struct span *new_span(struct session *s, uint64_t parent_id, const char *name, long index,
			     uint64_t start_ns)
{
	struct span *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->id = s->next_span_id++;
	sp->parent_id = parent_id;
	sp->name = strdup(name);
	sp->index = index;
	sp->start_ns = start_ns;
	sp->status = SPAN_OPEN;
	sp->attrs = cJSON_CreateObject();
	sp->marks = cJSON_CreateArray();
	sp->dirty = true;
	if (!sp->name || !sp->attrs || !sp->marks) {
		free_span(sp);
		return NULL;
	}
	link_span(s, sp);
	return sp;
}

void session__format_id(const struct session_ids *ids, char *buf, size_t size)
{
	char host[sizeof(((struct session *)0)->host)];

	/* The id names spool files: a host name such as the kernel's default "(none)" keeps
	 * only file-name-safe characters (the schema's id pattern). */
	snprintf(host, sizeof(host), "%s", *ids->host ? ids->host : "unknown");
	for (char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
			*c = '_';
	if (ids->observation > 1)
		snprintf(buf, size, "%s-%d-%" PRIu64 ".%d", host, ids->pid, ids->start_ticks,
			 ids->observation);
	else
		snprintf(buf, size, "%s-%d-%" PRIu64, host, ids->pid, ids->start_ticks);
}

struct session *session__new(const struct session_ids *ids, uint64_t start_ns)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->host, sizeof(s->host), "%s", ids->host);
	session__format_id(ids, s->id, sizeof(s->id));
	s->pid = ids->pid;
	s->rank = ids->rank;
	s->local_rank = ids->local_rank;
	s->world_size = ids->world_size;
	s->next_span_id = 1;
	s->root = new_span(s, 0, "cirron.session", -1, start_ns);
	if (!s->root) {
		free(s);
		return NULL;
	}
	return s;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	for (struct span *sp = s->live, *next; sp; sp = next) {
		next = sp->next;
		free_span(sp);
	}
	free(s);
}

struct span *session__open_at(struct session *s, struct span *parent, const char *name,
			      long index, uint64_t start_ns, const uint64_t *counters)
{
	struct span *sp;

	if (s->depth >= SESSION_MAX_DEPTH) {
		cJSON *d = cJSON_GetObjectItemCaseSensitive(s->root->attrs, "depth_capped");

		if (d)
			cJSON_SetNumberValue(d, d->valuedouble + 1);
		else
			cJSON_AddNumberToObject(s->root->attrs, "depth_capped", 1);
		return NULL;
	}
	sp = new_span(s, (parent ? parent : s->root)->id, name, index, start_ns);
	if (!sp)
		return NULL;
	s->depth++;
	if (counters) {
		memcpy(sp->counters_at_open, counters, sizeof(sp->counters_at_open));
		sp->has_counters = true;
	} else if (s->counters) {
		sp->has_counters = s->counters(s->counters_ctx, sp->counters_at_open);
	}
	if (s->gpu.opened)
		s->gpu.opened(s->gpu.ctx, sp);
	return sp;
}

struct span *session__open(struct session *s, struct span *parent, const char *name, long index,
			   uint64_t start_ns)
{
	return session__open_at(s, parent, name, index, start_ns, NULL);
}

void session__close_at(struct session *s, struct span *sp, uint64_t end_ns, enum span_status st,
		       const uint64_t *counters)
{
	uint64_t now[SESSION_NCOUNTERS];
	const uint64_t *at_close = NULL;

	if (sp->status != SPAN_OPEN)
		return;	/* closing twice is a caller bug; never emit a span twice */
	sp->end_ns = end_ns;
	sp->status = st;
	sp->dirty = true;
	if (sp->has_counters) {
		if (counters)
			memcpy(now, counters, sizeof(now));
		/* Only what changed: CPU-only spans stay free of zero-valued CUDA keys. */
		if (counters || (s->counters && s->counters(s->counters_ctx, now))) {
			at_close = now;
			for (int i = 0; i < SESSION_NCOUNTERS; i++)
				if (session_counter_names[i] && now[i] > sp->counters_at_open[i])
					cJSON_AddNumberToObject(sp->attrs, session_counter_names[i],
						(double)(now[i] - sp->counters_at_open[i]));
			if (s->kernels && now[CC_LAUNCHES] + now[CC_GRAPH_LAUNCHES] >
					  sp->counters_at_open[CC_LAUNCHES] +
					  sp->counters_at_open[CC_GRAPH_LAUNCHES] &&
			    (!strcmp(sp->name, "step") || !strcmp(sp->name, "request")))
				s->kernels(s->counters_ctx, sp, sp->counters_at_open[CC_KERNEL_SEQ],
					   now[CC_KERNEL_SEQ]);
		}
	}
	if (sp != s->root)
		s->depth--;
	if (s->gpu.closed && s->gpu.closed(s->gpu.ctx, sp, at_close)) {
		sp->held = true;
		return;
	}
	if (s->on_close)
		s->on_close(s, sp, s->on_close_ctx);
}

void session__release(struct session *s, struct span *sp)
{
	if (!sp->held)
		return;
	sp->held = false;
	sp->dirty = true;
	if (s->on_close)
		s->on_close(s, sp, s->on_close_ctx);
}

void session__close(struct session *s, struct span *sp, uint64_t end_ns, enum span_status st)
{
	session__close_at(s, sp, end_ns, st, NULL);
}

void session__touch_root(struct session *s)
{
	s->root->dirty = true;
}

void session__end(struct session *s, uint64_t end_ns, bool exit_ok, const char *cause)
{
	struct span *sp;

	if (s->ended)
		return;
	s->ended = true;
	cJSON_AddStringToObject(s->root->attrs, "end_cause", cause);
	/* The live list is newest first, so inner spans end before their parents. */
	for (sp = s->live; sp; sp = sp->next) {
		if (sp->status != SPAN_OPEN)
			continue;
		if (!end_ns) {	/* detach: the spans are still running in the target */
			sp->dirty = true;
			if (s->on_close)
				s->on_close(s, sp, s->on_close_ctx);
			continue;
		}
		session__close(s, sp, end_ns,
			       sp == s->root && exit_ok ? SPAN_OK : SPAN_INCOMPLETE);
	}
}

/* The root's string attribute key at the batch's top too: a batch read alone (a shipper's)
 * knows its session's job and role. */
static void copy_root_str(cJSON *b, const struct session *s, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->root->attrs, key);

	if (cJSON_IsString(v) && v->valuestring)
		cJSON_AddStringToObject(b, key, v->valuestring);
}

cJSON *session__take_batch(struct session *s, cJSON *health, uint64_t now_ns, bool final)
{
	cJSON *b = cJSON_CreateObject(), *spans;
	struct span *sp, *next;

	cJSON_AddStringToObject(b, "format", SPOOL_FORMAT);
	cJSON_AddStringToObject(b, "session_id", s->id);
	cJSON_AddNumberToObject(b, "pid", s->pid);
	cJSON_AddNumberToObject(b, "rank", (double)s->rank);
	cJSON_AddNumberToObject(b, "local_rank", (double)s->local_rank);
	cJSON_AddNumberToObject(b, "world_size", (double)s->world_size);
	cJSON_AddStringToObject(b, "host", s->host);
	copy_root_str(b, s, "job");
	copy_root_str(b, s, "job_source");
	copy_root_str(b, s, "role");
	json__add_u64(b, "seq", s->seq++);
	json__add_u64(b, "written_ns", now_ns);
	cJSON_AddBoolToObject(b, "final", final);
	if (s->resend_open)
		cJSON_AddTrueToObject(b, "all_open");
	spans = cJSON_AddArrayToObject(b, "spans");
	/* Oldest first, so a reader meets parents before children. */
	for (sp = s->live; sp && sp->next; sp = sp->next)
		;
	for (; sp; sp = next) {
		next = sp->prev;
		if (sp->held && !final)
			continue;	/* its GPU time is still to come */
		if (sp->dirty || (s->resend_open && sp->status == SPAN_OPEN))
			cJSON_AddItemToArray(spans, span__to_json(sp));
		sp->dirty = false;
		if (sp->status != SPAN_OPEN && sp != s->root) {
			unlink_span(s, sp);
			free_span(sp);
		}
	}
	cJSON_AddItemToObject(b, "health", health ? health : cJSON_CreateObject());
	return b;
}
