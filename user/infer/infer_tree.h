/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_INFER_TREE_H
#define __CIRRON_INFER_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include "tree/session.h"
#include "tree/tree_input.h"

/*
 * The inference process (docs/inference.md): a process that runs its model with grad off
 * (torch.no_grad(), inference_mode) and has shown no backward, optimizer step or DataLoader.
 * Each such region its Python opens on its main thread in which a model runs (Python frames
 * see its forwards), a token is picked (argmax, multinomial: every level) or which
 * inference_mode opened is one `request`; the forwards seen in it (Python frames) are
 * `prefill` (the first) and `decode` steps (the rest), or one `forward`; without Python
 * frames, the token picks bound them instead (prefill: the region's start to the first pick,
 * a decode step: one pick to the next). Spans are made when the region ends: only then is it known to be a request (a
 * DataLoader or backward inside it makes it part of a training loop instead, and its events
 * go back to the training tree). A region may hold many requests (a serving loop inside one
 * inference_mode block): a model call over more than one new token after a token was made
 * (a prefill after a decode step, told by the token ids it embeds) ends the request there and
 * begins the next. It shares only span bookkeeping (session.h) with the
 * training tree: the dispatcher routes each event to one of them.
 */
#define INFER_MAX_HELD 256	/* events of an open region, given back if it trains */
#define INFER_CLASS_LEN 64

struct infer_forward {
	uint64_t start, end;
	uint64_t c0[SESSION_NCOUNTERS], c1[SESSION_NCOUNTERS];
};

/* A token picked: when, and the counters then. */
struct infer_pick {
	uint64_t ts;
	uint64_t c[SESSION_NCOUNTERS];
};

/* Gives an event back to the training tree (in order). */
typedef void (*infer_giveback_fn)(void *ctx, const struct tree_event *ev);

struct infer_tree {
	struct session *s;
	uint32_t tid;		/* the thread that opened the first region */
	bool frames;		/* Python frames on (--python-frames always): forwards are
				 * seen, so a region without one ran no model */
	bool trains;		/* a backward, optimizer step or DataLoader was seen: a training
				 * process; every event goes to the training tree from now on */
	bool grad_off;		/* the job's Python disabled grad (no_grad) */
	bool inference_on;	/* torch.inference_mode() is on (_InferenceMode.__enter__) */
	bool open;		/* a region is open: a request unless it trains */
	const char *region;	/* "no_grad" or "inference_mode" */
	uint64_t start;
	uint64_t start_counters[SESSION_NCOUNTERS];
	struct infer_forward *fwd;	/* the region's forwards */
	long nfwd, cap_fwd;
	bool fwd_open;		/* a model call began and has not ended */
	long calls;		/* model calls in the region (several may make one forward) */
	struct infer_pick *picks;	/* the region's token picks */
	long npicks, cap_picks;
	const char *pick_op;	/* the first pick's op (argmax, multinomial) */
	char starters[2][INFER_CLASS_LEN];	/* classes whose calls begin a forward */
	int nstarters;
	/* Requests within one region */
	bool decoded;		/* a token came since the last prefill: a pick, or a model call
				 * over one new token */
	bool decode_call;	/* a model call over one new token in the open request */
	bool unseen;		/* the open region's opening switch was not seen (it began
				 * before an attach, or torch does not show it): a prefill
				 * opened it */
	bool split;		/* the region holds several requests: each begins at its
				 * prefill and ends with its last token */
	uint64_t prefill_ts;	/* the open request's prefill began (0: none seen) */
	uint64_t prefill_counters[SESSION_NCOUNTERS];
	long prefill_tokens;	/* how many new tokens it took */
	bool pending_call;	/* a model call outside any region, held (its events in held)
				 * until it shows a prefill or ends (infer_requests.c) */
	bool exited;		/* set by the caller: the process exited cleanly, so the last
				 * request of such a region ends with its last token */
	long requests;
	long loose_forwards;	/* eval forwards outside any region once requests were seen */
	struct tree_buffered held[INFER_MAX_HELD];
	int nheld;
	long held_dropped;
	infer_giveback_fn back;
	void *back_ctx;
};


void infer_tree__init(struct infer_tree *it, struct session *s);
void infer_tree__free(struct infer_tree *it);
/* Returns true when the event belongs to the inference tree; false: the training tree's.
 * Events it held and gives back go through back() first. */
bool infer_tree__feed(struct infer_tree *it, const struct tree_event *ev, infer_giveback_fn back,
		      void *ctx);
/* The session ends: an open region stays an open request (its forwards under it). */
void infer_tree__finish(struct infer_tree *it, uint64_t ts);

#endif
