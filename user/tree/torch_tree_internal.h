/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TORCH_TREE_INTERNAL_H
#define __CIRRON_TORCH_TREE_INTERNAL_H

/* Shared by the torch tree's files only (torch_tree.c lists the rules each holds); the rest
 * of cirron-probe uses torch_tree.h. */
#include <stdbool.h>
#include <stdint.h>
#include "tree/torch_tree.h"

enum scope_kind {
	SK_OTHER, SK_DATA_TRAIN, SK_DATA_EVAL, SK_DATA_PENDING, SK_OPTIMIZER, SK_ZERO_GRAD,
	SK_MODEL_FORWARD,	/* a model's own forward scope (DistributedDataParallel) */
	SK_COLLECTIVE,		/* waiting for a collective: part of a step, never a batch's start */
	SK_ROOT_FORWARD,	/* FSDP2's root module begins its forward (FSDP::root_pre_forward) */
	SK_COMPILE,		/* torch 2.6's dynamo names a frame's compile (dynamo_timed) */
	SK_COMPILE_BACKWARD,	/* ... and the backward graph's, compiled in the first backward */
};

/* torch_tree_steps.c: steps, epochs, inferred forwards */
void torch_tree__close_span(struct torch_tree *t, struct span **sp, uint64_t ts,
			    const uint64_t *counters);
void torch_tree__close_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters);
void torch_tree__close_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters);
void torch_tree__open_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters);
void torch_tree__set_boundary(struct torch_tree *t, const char *boundary);
void torch_tree__open_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters,
			   const char *boundary);
/* The step has what ends it (an optimizer step, skipped or not, or an update by hand). */
bool torch_tree__step_done(const struct torch_tree *t);
struct span *torch_tree__open_optimizer(struct torch_tree *t);
struct span *torch_tree__innermost(struct torch_tree *t);
void torch_tree__set_mode(struct span *sp, const char *mode, const char *source);
void torch_tree__snapshot(struct torch_tree *t, uint64_t out[SESSION_NCOUNTERS]);
void torch_tree__mark_boundary(struct torch_tree *t, uint64_t ts);
bool torch_tree__forwards_measured(const struct torch_tree *t);
/* Whether a training batch of iterator obj (0: unknown) begins an epoch; obj becomes the
 * training iterator. */
bool torch_tree__take_new_epoch(struct torch_tree *t, uint64_t obj);

/* torch_tree_inferred.c: train: before a backward (in the step); else an eval forward before
 * the next batch. */
void torch_tree__infer_forward(struct torch_tree *t, uint64_t ts, bool train);

/* torch_tree_batches.c: what a DataLoader __next__ was */
void torch_tree__confirm_batch(struct torch_tree *t);
void torch_tree__unconfirmed_data_load(struct torch_tree *t, uint64_t start, uint64_t end,
				       const uint64_t *start_counters,
				       const uint64_t *end_counters, bool exhausted);
void torch_tree__count_loop_end(struct torch_tree *t);
void torch_tree__release_held(struct torch_tree *t, bool exhausted);
void torch_tree__settle_unconfirmed(struct torch_tree *t, uint64_t next_ts,
				    const uint64_t *next_counters);
void torch_tree__eval_batch(struct torch_tree *t);
void torch_tree__nograd_eval_batch(struct torch_tree *t);

/* torch_tree_data.c: a DataLoader __next__ begins */
void torch_tree__on_data_enter(struct torch_tree *t, const struct tree_event *ev);

/* torch_tree_grad.c: grad switches */
void torch_tree__on_grad_mode(struct torch_tree *t, const struct tree_event *ev);

/* torch_tree_stack.c: the scope stack */
void torch_tree__push_scope(struct torch_tree *t, struct span *sp, int kind);
/* A scope's name as an enum scope_kind. */
int torch_tree__classify(const char *name);
/* A forward FSDP's root began (SK_ROOT_FORWARD) ends when the next thing does. */
void torch_tree__end_inferred_forward(struct torch_tree *t, uint64_t ts);

/* torch_tree_scopes.c: scopes, backward, forward; optimizer steps */
void torch_tree__on_scope_enter(struct torch_tree *t, const struct tree_event *ev);
void torch_tree__on_scope_exit(struct torch_tree *t, const struct tree_event *ev);
void torch_tree__on_backward(struct torch_tree *t, const struct tree_event *ev, bool enter);
void torch_tree__on_forward(struct torch_tree *t, const struct tree_event *ev, bool enter);

/* torch_tree_eval.c: a validation batch's inferred forward */
void torch_tree__inferred_eval_forward(struct torch_tree *t, uint64_t start,
				       const uint64_t *start_counters, uint64_t end,
				       const uint64_t *end_counters);

/* torch_tree_prefetch.c: runs of back-to-back __next__ calls */
/* Settles the run and replays the events held back after it (none: nothing to do). */
void torch_tree__decide_prefetch(struct torch_tree *t);
/* Learns how many backwards a batch runs (at an optimizer step or the next __next__). */
void torch_tree__learn_batch(struct torch_tree *t);
/* Returns true when ev was held back (it runs later, from decide_prefetch). */
bool torch_tree__hold_back(struct torch_tree *t, const struct tree_event *ev);

/* torch_tree_compile.c: torch.compile's compiles */
void torch_tree__on_compile(struct torch_tree *t, const struct tree_event *ev);
/* A compile is known to run now (dynamo's scope or callback open): what it runs (tracing
 * the model, its backward) is not the job's. */
bool torch_tree__compiling(const struct torch_tree *t);
/* A compile scope (SK_COMPILE*) ended: its compile, as create_cache_entry's would be. */
void torch_tree__compile_scope_end(struct torch_tree *t, const struct tree_scope *sc,
				   uint64_t end_ns);
/* Compiles held while the forward they ran in is not known yet: under fwd when within it,
 * else under fallback (NULL: the innermost span). */
void torch_tree__place_compiles(struct torch_tree *t, struct span *fwd, struct span *fallback);
/* torch_tree_recompute.c: inside a backward. Each returns true when it took the event. */
bool torch_tree__nested_backward(struct torch_tree *t, const struct tree_event *ev, bool enter);
bool torch_tree__recompute_forward(struct torch_tree *t, const struct tree_event *ev, bool enter);

/* torch_tree_phases.c: evaluation phases of loops without a DataLoader */
void torch_tree__phase_region(struct torch_tree *t, uint64_t ts, bool start);
void torch_tree__phase_model_call(struct torch_tree *t);
void torch_tree__phase_train_call(struct torch_tree *t, const struct tree_event *ev);
void torch_tree__phase_zero_grad(struct torch_tree *t);
/* new_step: a step begins (or the session ends cleanly): the regions since the last update
 * are known. */
void torch_tree__phase_decide(struct torch_tree *t, bool new_step);
void torch_tree__phase_data(struct torch_tree *t);
bool torch_tree__phase_current(const struct torch_tree *t);

/* torch_tree_amp.c: GradScaler */
void torch_tree__on_scaler_update(struct torch_tree *t, const struct tree_event *ev);

#endif
