/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TREE_STREAM_H
#define __CIRRON_TREE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "read/batch.h"
#include "read/span_names.h"
#include "tree/span.h"

/*
 * One session's span tree, rebuilt as its batches are read oldest first, holding only what is
 * not finished: a span is kept from its first copy until it and everything under it ended
 * ("complete"); then its reader makes its output of it (a line, a JSON object, numbers) and
 * the spans under it go. The writer sends a span when it opens and when it ends, children
 * before the parent ends, so memory is what is open at a time plus what the reader keeps of
 * finished spans (the first and last of long runs, an epoch not yet printed).
 *
 * The root (the session span, known from the newest batch) is "started": its line is out
 * before the stream, and its children are handed to the reader as they complete (flush), in
 * start order, the newest TSTREAM_SETTLE of them held back in case one that started earlier
 * is sent late. A reader may start another span early (its children then stream too).
 * Spans whose parent is in no batch read (removed by --max-spool-mb) are tops: kept to the
 * end, then handed over in start order.
 */

#define TSTREAM_SETTLE 4
#define TSTREAM_MAX_DEPTH 1024	/* the writer caps depth at 64; deeper is a corrupt spool */

enum {
	TN_FINAL = 1 << 0,	/* its copy says it ended (ok, incomplete) */
	TN_COMPLETE = 1 << 1,	/* it and everything under it ended (or the stream did) */
	TN_STARTED = 1 << 2,	/* its children stream out (flush) */
	TN_OWNS_JSON = 1 << 3,	/* sp.attrs and sp.marks are its own copies */
	TN_GAP = 1 << 4,	/* stands for `count` spans of a run a reader elided */
	TN_ROOT = 1 << 5,
	TN_TOUCHED = 1 << 6,	/* changed in the batch being read */
	TN_DROPPED = 1 << 7,	/* to be freed at the batch's end */
	TN_RENDERED = 1 << 8,
	TN_OPEN_AT_END = 1 << 9,	/* complete only because the stream ended */
};


struct tnode {
	struct span sp;		/* name: the stream's (one copy per name: same name, same
				 * pointer); attrs, marks: the batch's while it is read */
	struct tnode *parent;
	struct tnode **kids;	/* kids[first..nkids), by start, then id */
	size_t first, nkids, kids_cap;
	size_t waiting;		/* kids not complete */
	int depth;		/* 0: a top or the root */
	unsigned flags;
	int kind;		/* a phase (enum phase), TK_STEP, TK_REQUEST, TK_OTHER */
	uint64_t count;		/* TN_GAP: how many spans */
	void *out;		/* the reader's */
	struct tnode *hnext;	/* the id table */
	struct tnode *lnext;	/* the batch's lists */
};

struct tstream;

struct tstream_ops {
	/* n and everything under it ended: n's copy and its kids' outputs can be read. */
	void (*complete)(struct tstream *t, struct tnode *n);
	/* End of a batch, for each node completed in it and still kept, kids first: its copy
	 * goes after this. */
	void (*render)(struct tstream *t, struct tnode *n);
	/* End of a batch: hand over what can be of s's kids (started; all of them when
	 * finishing), with tstream__drop on each one done. */
	void (*flush)(struct tstream *t, struct tnode *s, bool finishing);
	/* At the end, each top but the root, complete and rendered, in start order. */
	void (*top)(struct tstream *t, struct tnode *n);
	/* Frees n->out. */
	void (*free_out)(struct tnode *n);
};

struct tstream *tstream__new(const struct tstream_ops *ops, void *ctx);
void *tstream__ctx(const struct tstream *t);
/* The session's root, its newest copy (copied): started, never completed before the end. */
int tstream__set_root(struct tstream *t, const struct span *root);
struct tnode *tstream__root(const struct tstream *t);
/* One batch, oldest first. Returns 0 or -ENOMEM. */
int tstream__batch(struct tstream *t, const struct batch *b);
/* No more batches: what is still open completes as it stands (TN_OPEN_AT_END), the root's
 * kids are flushed, the tops handed over. */
int tstream__finish(struct tstream *t);
void tstream__free(struct tstream *t);

/* Removes n from its parent's kids (and the id table): freed at the batch's end. */
void tstream__drop(struct tstream *t, struct tnode *n);
/* For readers that sum spans up (tree_stream_sum.c): what is summed up once complete: n,
 * else (a root's kid goes at the flush) n's kids. */
void tstream__drop_summed(struct tstream *t, struct tnode *n);
/* A flush callback for readers that keep nothing: the session's complete kids, in order. */
void tstream__drop_complete_kids(struct tstream *t, struct tnode *s, bool finishing);
/* Starts n (a kid of a started node, all kids before it handed over). */
void tstream__start(struct tstream *t, struct tnode *n);
/* A gap standing for count spans named like n, put where n was (n dropped). */
struct tnode *tstream__gap(struct tstream *t, struct tnode *n, uint64_t count);
/* Stats: spans read, most nodes kept at once. */
size_t tstream__peak(const struct tstream *t);

#endif
