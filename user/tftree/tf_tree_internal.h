/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TF_TREE_INTERNAL_H
#define __CIRRON_TF_TREE_INTERNAL_H

/* Shared by tf_tree.c (inputs, what each function is) and tf_tree_spans.c (epochs, steps,
 * evaluations as spans): tf_tree.c calls down into tf_tree_spans.c, never the other way. */
#include "tftree/tf_tree.h"

/* The counters now (the CUDA totals the event being handled carries), or zeros. */
void tf_tree__counters(struct tf_tree *t, uint64_t out[SESSION_NCOUNTERS]);

/* A training function's call, its spans made once its batch tells the epoch (it: the
 * iterator it reads, 0 if none). */
void tf_tree__place_train(struct tf_tree *t, uint64_t it);
/* An evaluation or prediction call's spans, likewise. */
void tf_tree__place_eval(struct tf_tree *t, uint64_t it);
/* A batch read inside the open call begins / ends. */
void tf_tree__call_next(struct tf_tree *t, uint64_t ts, bool enter);
/* The open call returned. */
void tf_tree__call_end(struct tf_tree *t, uint64_t ts);
/* The batch held (read outside a call) was nobody's: a loop's end (StopIteration). */
void tf_tree__next_exhausted(struct tf_tree *t);
/* An eager loop's gradient (tape.gradient run op by op): the step's backward. */
void tf_tree__eager_backward(struct tf_tree *t, uint64_t start, uint64_t end);
/* Ends the open eval run at its last call's end; training_follows: a training step begins
 * after it (an undecided run was fit's validation). */
void tf_tree__close_eval(struct tf_tree *t, bool training_follows);
/* Says what the open eval run was where its start could not (its kind: kind, or NULL by
 * what follows it), leaving it open. */
void tf_tree__decide_eval(struct tf_tree *t, bool training_follows, const char *kind);
/* Ends the open step (eager steps end where the next thing begins). */
void tf_tree__close_step(struct tf_tree *t, uint64_t ts);
void tf_tree__close_epoch(struct tf_tree *t, uint64_t ts, bool training_follows);
/* Whether iterator it was made and not yet read by training. */
struct tf_iterator *tf_tree__iterator(struct tf_tree *t, uint64_t it);

#endif
