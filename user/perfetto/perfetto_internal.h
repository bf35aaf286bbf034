/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PERFETTO_INTERNAL_H
#define __CIRRON_PERFETTO_INTERNAL_H

/* Shared by the Perfetto exporter's files only (perfetto*.c); the rest of cirron-probe uses
 * perfetto.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "common/sbuf.h"
#include "perfetto/perfetto.h"

struct pending {
	uint64_t id;
	cJSON *span;		/* the newest copy of a span still open; NULL: free slot */
};

struct pf_writer {
	FILE *f;
	uint64_t base_ns;
	bool first;		/* no event written yet */
	bool in_session;
	long pid;		/* the session's process track */
	uint64_t last_ns;	/* the session's newest batch: where open spans are drawn to */
	struct pending *tab;	/* open addressing by span id, at most half full */
	size_t cap, n;
	long *pids;		/* used by earlier sessions */
	size_t npids;
	cJSON *sys_prev;	/* the session's previous --sys-interval sample: rates */
	struct sbuf line;	/* the span event being written (reused) */
};

/* perfetto_exact.c: exact integers through cJSON */
bool pf_exact__u64(const cJSON *v, uint64_t *out);
bool pf_exact__get(const cJSON *o, const char *key, uint64_t *out);
void pf_exact__unquote(cJSON *o);
/* One JSON object with its long integers kept exact; NULL with why filled. */
cJSON *pf_exact__parse(const char *text, char *why, size_t why_size);

/* perfetto_events.c: the events written */
void pf_writer__emit_meta(struct pf_writer *w, const char *what, const char *key, cJSON *value);
void pf_writer__emit_span(struct pf_writer *w, const cJSON *js, uint64_t end_ns);
void pf_writer__emit_hang(struct pf_writer *w, const cJSON *h);
void pf_writer__emit_sys(struct pf_writer *w, const cJSON *js);

/* perfetto_pending.c: the open spans. put takes span (a copy already held is replaced);
 * returns 0 or -ENOMEM. */
int pf_pending__put(struct pf_writer *w, uint64_t id, cJSON *span);
void pf_pending__drop(struct pf_writer *w, uint64_t id);

#endif
