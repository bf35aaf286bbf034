/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPAN_NAMES_H
#define __CIRRON_SPAN_NAMES_H

/* Span names, each kept once: a stream's spans of one name share its copy (compared by
 * pointer), with what the name says to the readers (tree_stream.h's TK_*, a phase). */
#define SPAN_NAMES_CAP 1024	/* buckets */

/* What a span's name says to the readers: a phase (phases.h), a step, a request. */
enum { TK_STEP = 16, TK_REQUEST, TK_OTHER };

struct span_name {
	struct span_name *next;
	int kind;
	char s[];
};

struct span_names {
	struct span_name *b[SPAN_NAMES_CAP];
};

/* s's entry, made the first time; NULL out of memory. */
const struct span_name *span_names__get(struct span_names *t, const char *s);
void span_names__free(struct span_names *t);

#endif
