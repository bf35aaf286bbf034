/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_INFER_TREE_INTERNAL_H
#define __CIRRON_INFER_TREE_INTERNAL_H

/* Shared by the inference tree's files only (infer_tree.c: regions, forwards, picks and the
 * spans; infer_requests.c: requests within a region); the rest uses infer_tree.h. */
#include "infer/infer_tree.h"

void infer_tree__snapshot(const struct infer_tree *it, uint64_t out[SESSION_NCOUNTERS]);
/* An event of the open region, kept to give back if the region turns out no request. */
void infer_tree__hold(struct infer_tree *it, const struct tree_event *ev);
/* The open region was no request: its events go back to the training tree, in order. */
void infer_tree__give_back(struct infer_tree *it);
void infer_tree__open_region(struct infer_tree *it, const struct tree_event *ev,
			     const char *region);
/* A request begins at ts (the region's start, or a prefill in it). */
void infer_tree__begin_request(struct infer_tree *it, uint64_t ts);
/* A model call (an outermost Module call) begins at ts. */
void infer_tree__forward_enter(struct infer_tree *it, uint64_t ts, const char *cls);
/* Makes the request and its spans; end 0: still open. The region is closed after it. */
void infer_tree__emit_request(struct infer_tree *it, uint64_t end);
/* The outermost forward returned, a token was picked (infer_spans.c). */
void infer_tree__forward_exit(struct infer_tree *it, uint64_t ts);
void infer_tree__token_pick(struct infer_tree *it, const struct tree_event *ev);

/* infer_requests.c */
/* TI_MODEL_TOKENS: true when the event was the inference tree's. */
bool infer_tree__model_tokens(struct infer_tree *it, const struct tree_event *ev);
/* A model call outside any region (Python frames) is held until it tells whether it is a
 * prefill (a region nobody saw open: the request's first forward) or not (given back): true
 * when ev was taken. */
bool infer_tree__pending_call(struct infer_tree *it, const struct tree_event *ev);
/* A grad switch or inference_mode while a region nobody saw open is open: true when taken. */
bool infer_tree__unseen_switch(struct infer_tree *it, const struct tree_event *ev);
/* Whether the open request is one: a region's own rules (infer_tree.c) for a region seen
 * opening; a generation (a decode step after its prefill) for one that was not. */
bool infer_tree__unseen_request(const struct infer_tree *it);

#endif
