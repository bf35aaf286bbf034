// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks from what a traced job prints: each EV_WRITE (a write to fd 1 or 2, copied up to
// CIRRON_WRITE_COPY bytes) is cut into lines per stream, and the metrics in them become
// marks on the span open at the write (marks/marks.h says which forms). The text itself is
// never stored.
#include <stdio.h>
#include "attach/observer.h"
#include "common/log.h"
#include "observe/registry.h"
#include "observe/writes.h"

struct mark_ctx {
	struct target *t;
	uint64_t ts_ns;
	const char *source;
};

static void add_mark(void *ctx, const char *name, double value, bool summary)
{
	struct mark_ctx *m = ctx;
	struct torch_tree *tr = &m->t->tree;
	bool tf = m->t->tf.active;	/* a TensorFlow job (tftree/tf_tree.h) */
	struct span *cur = tf ? tf_tree__current(&m->t->tf, m->ts_ns)
			      : torch_tree__current(tr, m->ts_ns);
	struct span *epoch = tf ? tf_tree__epoch(&m->t->tf) : tr->epoch;
	struct span *sp = summary && epoch ? epoch : cur;
	cJSON *j;

	if (!m->t->session)
		return;
	if (!sp)
		sp = m->t->session->root;
	j = cJSON_CreateObject();
	if (!j)
		return;
	cJSON_AddStringToObject(j, "name", name);
	json__add_double(j, "value", value);
	cJSON_AddStringToObject(j, "kind", summary ? "summary" : "point");
	json__add_u64(j, "ts_ns", m->ts_ns);
	cJSON_AddStringToObject(j, "source", m->source);
	span__add_mark(sp, j);
}

int writes__event(struct observer *o, const void *data, size_t size)
{
	const struct write_event *w = data;
	size_t hdr = offsetof(struct write_event, data), copied;
	struct mark_ctx m;
	struct target *t;

	if (size < hdr || !(t = registry__find(o, (int)w->pid)))
		return 0;
	copied = w->copied;
	if (copied > size - hdr)
		copied = size - hdr;
	t->marks.writes++;
	t->marks.bytes += w->len;
	if (w->len > copied)
		t->marks.over_bound++;
	if (o->opts->marks_regex && !o->marks_rx.compiled) {
		char err[128];

		if (marks_regex__compile(&o->marks_rx, o->opts->marks_regex, err, sizeof(err)))
			wlog("--marks-regex: %s", err);	/* cli.c checked it: not expected */
	}
	m.t = t;
	m.ts_ns = clock_map__to_wall(&t->clock, w->ts_ns);
	m.source = w->fd == 2 ? "stderr" : "stdout";
	marks__feed(&t->marks.streams[w->fd == 2], w->data, copied, w->len,
		    o->marks_rx.compiled ? &o->marks_rx : NULL, &t->marks.counts, add_mark, &m);
	return 0;
}
