/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SESSION_H
#define __CIRRON_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "cirron.h"
#include "tree/span.h"

#define SPOOL_FORMAT "cirron-spool/1"
#define SESSION_MAX_DEPTH 64	/* scope depth cap (DESIGN.md) */
#define SESSION_ID_MAX 160	/* <host>-<pid>-<start_ticks>[.<observation>] and a NUL */

struct session;
typedef void (*span_closed_fn)(const struct session *s, const struct span *sp, void *ctx);
/* Reads the process's running counters (CUDA totals); a span gets what changed while it ran. */
#define SESSION_NCOUNTERS CIRRON_NCOUNTERS
_Static_assert(CC__COUNT == CIRRON_NCOUNTERS, "an event carries every enum cuda_counter");
typedef bool (*counters_fn)(void *ctx, uint64_t out[SESSION_NCOUNTERS]);
/* Adds a closing step's or request's launches per kernel (anchor seqs from..to-1) to its
 * attributes. */
typedef void (*kernels_fn)(void *ctx, struct span *sp, uint64_t from_seq, uint64_t to_seq);
extern const char *const session_counter_names[SESSION_NCOUNTERS];

/* One traced process = one rank = one cirron.session root span. Spans stream out: closed
 * spans are freed once a batch has carried them, so memory stays flat in long sessions. */
struct session {
	char id[SESSION_ID_MAX];
	int pid;
	long rank, local_rank, world_size;
	char host[64];
	uint64_t seq;		/* next batch number */
	uint64_t next_span_id;
	struct span *root;
	struct span *live;	/* open spans and closed ones not yet in a batch */
	int depth;		/* open spans under the root */
	bool ended;
	bool resend_open;	/* every batch carries the open spans (all_open): the newest
				 * alone holds the open path, and --max-spool-mb loses none */
	span_closed_fn on_close;
	void *on_close_ctx;
	counters_fn counters;	/* NULL: no counters (no CUDA runtime mapped) */
	void *counters_ctx;	/* also kernels' */
	kernels_fn kernels;	/* NULL: spans get no launches per kernel */
	/* GPU time (observe/gpu_time.c): told of each span's open, and of its close with the
	 * counters then (NULL: none); a span closed() returns true for is held until
	 * session__release gives it to on_close and the next batch. */
	struct session_gpu_hooks {
		void (*opened)(void *ctx, struct span *sp);
		bool (*closed)(void *ctx, struct span *sp, const uint64_t *counters);
		void *ctx;
	} gpu;
};

struct session_ids {
	int pid;
	uint64_t start_ticks;	/* makes the id unique when pids are reused */
	long rank, local_rank, world_size;
	const char *host;
	int observation;	/* 2 and up: the process was traced before (an earlier attach,
				 * an agent's restart); the id ends in ".N" */
};

struct session *session__new(const struct session_ids *ids, uint64_t start_ns);
/* "<host>-<pid>-<start_ticks>[.<observation>]", as session__new names a session. */
void session__format_id(const struct session_ids *ids, char *buf, size_t size);
void session__free(struct session *s);
/* Opens a span under parent (NULL: the root). NULL past SESSION_MAX_DEPTH (counted). */
struct span *session__open(struct session *s, struct span *parent, const char *name, long index,
			   uint64_t start_ns);
void session__close(struct session *s, struct span *sp, uint64_t end_ns, enum span_status st);
/* The same for spans made after the fact: counters (SESSION_NCOUNTERS values) as they were
 * at start_ns / end_ns; NULL reads them now. */
struct span *session__open_at(struct session *s, struct span *parent, const char *name,
			      long index, uint64_t start_ns, const uint64_t *counters);
void session__close_at(struct session *s, struct span *sp, uint64_t end_ns, enum span_status st,
		       const uint64_t *counters);
/* Ends every open span, innermost first. At a detach (end_ns 0) they stay open; at the
 * target's exit they become incomplete, and the root ok only if exit_ok. */
void session__end(struct session *s, uint64_t end_ns, bool exit_ok, const char *cause);
/* Builds the next spool batch: every span changed since the last one, and every open span
 * with resend_open (so the newest batch alone holds the open path; it says so: all_open).
 * Takes health. */
cJSON *session__take_batch(struct session *s, cJSON *health, uint64_t now_ns, bool final);
/* A span held at its close (session.gpu) goes out: on_close, and the next batch. A final
 * batch writes the spans still held as they are. */
void session__release(struct session *s, struct span *sp);
/* Marks the root dirty so the next batch carries its fresh attributes. */
void session__touch_root(struct session *s);

#endif
