/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TORCH_TREE_H
#define __CIRRON_TORCH_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include "tree/session.h"
#include "tree/tree_input.h"

/*
 * The training-structure state machine: turns scope events from the target's training
 * thread into epoch > step > data_load / forward / backward / optimizer_step spans
 * (DESIGN.md "Tree rules"). It knows nothing about probes: attach code translates uprobe
 * events into these inputs, so the rules are unit-testable on their own.
 */
#define TREE_MAX_SCOPES 64
#define TREE_MAX_PREFETCH 32	/* back-to-back __next__ calls kept undecided */
#define TREE_MAX_BUFFERED 256	/* events held back until they are decided */
#define TREE_MAX_COMPILES 64	/* compiles held until their batch is decided */
#define TREE_MAX_CODES 64	/* frames compiled so far, told apart for recompilations */
#define TREE_MAX_PHASE_REGIONS 8	/* no_grad regions a step has after its update, at most */

/* A DataLoader __next__ that ended and was followed at once by another one. */
struct tree_batch {
	uint64_t start, end, obj;
	uint64_t start_counters[SESSION_NCOUNTERS], end_counters[SESSION_NCOUNTERS];
};


/* A compile (torch.compile) not placed yet: its batch is still undecided. */
struct tree_compile {
	uint64_t start, end;
	int recompile;		/* 1 a frame compiled again, 0 a first compile, -1 unknown */
	bool start_inferred;	/* the start is the last point nothing was compiling */
	bool backward;		/* a backward graph, compiled inside the backward */
};

struct tree_scope {
	struct span *span;	/* NULL: a scope we do not make a span of (still nested) */
	int kind;
	uint64_t start_ns;	/* compile scopes: made a span at their end */
};

/* One per target: fields are grouped by the rule they serve, not packed (56 bytes of padding). */
struct torch_tree {	// NOLINT(clang-analyzer-optin.performance.Padding)
	struct session *s;
	/* The rules' entry for an event held back and replayed (torch_tree_prefetch.c): set by
	 * torch_tree__init, so that the rules below it never call up into the dispatcher. */
	void (*replay)(struct torch_tree *t, const struct tree_event *ev);
	long epoch_steps;	/* fallback epoch length in optimizer steps */
	uint32_t tid;		/* the training thread (first to load data or run backward) */
	struct span *epoch, *step, *forward, *backward;
	long epoch_index, step_index;
	long steps_in_epoch;
	bool step_had_optimizer;
	bool grad_enabled;
	bool eval_since_train;	/* eval batches since the last training batch */
	bool train_exhausted;	/* a training iterator ran out since the last training batch */
	bool eval_inside;	/* the evaluation since the last training batch began right after
				 * it (module.training false): inside the epoch (E1) */
	bool eval_end_next;	/* the next loop's end is that evaluation's */
	bool exact_forward_seen;	/* a measured forward covers the window an inferred
					 * one would have */
	uint64_t train_iter;	/* iterator of the current training epoch (0: unknown) */
	uint64_t last_data_end_ns;	/* end of the batch's data_load: a forward may start */
	uint64_t last_boundary_ns;	/* end of the last backward / optimizer step */
	uint64_t quiet_ns;	/* the last time no forward could be running: a data_load,
				 * backward or optimizer step ended */
	uint64_t optimizer_end_ns;	/* the last optimizer step's end */
	uint64_t boundary_counters[SESSION_NCOUNTERS];	/* CUDA counters at that boundary */
	bool pending;		/* a training __next__ not yet confirmed by a backward etc. */
	uint64_t pending_start, pending_end, pending_obj;
	uint64_t pending_start_counters[SESSION_NCOUNTERS], pending_end_counters[SESSION_NCOUNTERS];
	struct tree_scope scopes[TREE_MAX_SCOPES];
	int nscopes;
	long optimizer_steps;
	uint64_t last_ts_ns;	/* the training thread's last event */
	long events_lost;	/* told by TI_LOST */
	/* Loops as real code writes them (issue 18) */
	bool step_from_data;	/* the step began at a training batch */
	bool step_had_backward;
	bool step_updated;	/* grad was disabled outside any scope after the step's backward:
				 * a hand-written parameter update (no optimizer) */
	long unconfirmed_run;	/* unconfirmed __next__ calls since the last trained batch */
	bool held;		/* an unconfirmed __next__ not yet known to be a batch of an
				 * inference_mode loop or that loop's end (torch_tree_batches.c) */
	uint64_t held_start, held_end, held_next;	/* held_next: the next __next__'s start */
	uint64_t held_start_counters[SESSION_NCOUNTERS], held_end_counters[SESSION_NCOUNTERS];
	uint64_t held_next_counters[SESSION_NCOUNTERS];
	/* Evaluation loops that load with grad enabled and disable it around the model call
	 * only (HF Trainer): a pending batch followed by a no_grad region outside any scope */
	bool pending_nograd;
	int grad_calls;		/* torch.autograd.grad calls under way (no exit seen for one an
				 * exception left: reset at the next batch or backward) */
	bool nograd_undecided;	/* the region began right after training, with no model call to
				 * tell (no Python frames): the loop's end, or a no_grad region
				 * inside a training batch (Keras's metric updates), until a
				 * backward or the next __next__ tells */
	bool pending_eval;	/* the pending batch had a forward in eval (no_grad, or a module
				 * in eval mode): a validation batch unless a backward follows */
	uint64_t last_event_ns;	/* the training thread's last event handled */
	uint64_t nograd_start, nograd_end;	/* the region; end 0: still open */
	uint64_t nograd_counters[SESSION_NCOUNTERS], nograd_end_counters[SESSION_NCOUNTERS];
	bool exact_forwards;	/* Python frames gave forwards */
	bool forward_end_inferred;	/* the open forward ends with what comes next (FSDP) */
	/* Training loops seen (or, with Python frames, suspected) to end: at most one an epoch,
	 * counted when it is known: what --snapshots takes its epoch-end snapshot at. */
	unsigned long loop_ends;
	bool loop_end_counted;	/* in this epoch */
	bool frames_always;	/* set by the caller: every forward comes from Python frames
				 * (--python-frames always), none is inferred once one came */
	/* Loops that fetch K batches, then train on them (HF Trainer's get_batch_samples,
	 * DataLoader wrappers that fetch one ahead): back-to-back __next__ calls are kept
	 * undecided, and what follows the last is held back, until the next __next__, optimizer
	 * step or the end tells how many batches were trained on (torch_tree_prefetch.c) */
	struct tree_batch prefetch[TREE_MAX_PREFETCH];
	int nprefetch;
	struct tree_buffered buffered[TREE_MAX_BUFFERED];
	int nbuffered;
	bool replaying;
	/* Backwards a batch runs before its first optimizer step (a GAN's critic learns from a
	 * real and a generated batch: 2), learned from batches fetched alone, so that a run's
	 * backwards count its batches (torch_tree_prefetch.c); 0: not known yet */
	int backwards_per_batch;
	int batch_backwards;	/* since the last training batch was confirmed */
	bool batch_alone;	/* that batch was fetched alone, its count not learned yet */
	/* Evaluation phases of loops without a DataLoader (torch_tree_phases.c, issue 44): the
	 * no_grad regions the job opens after a step's update, until it trains again */
	bool data_seen;		/* a DataLoader __next__ came: its iterators tell epochs */
	bool phase_epochs;	/* evaluations ended epochs: --epoch-steps no longer does */
	bool phase_open;	/* such a region is open */
	int phase_regions;	/* regions since the step's update */
	int regions_per_step;	/* what every step has after its update; -1: not known yet */
	uint64_t phase_start[TREE_MAX_PHASE_REGIONS];
	uint64_t phase_start_counters[TREE_MAX_PHASE_REGIONS][SESSION_NCOUNTERS];
	uint64_t phase_end;	/* the last region's end */
	uint64_t phase_end_counters[SESSION_NCOUNTERS];
	struct span *eval;	/* an evaluation phase open (a model call in it: Python frames) */
	int eval_first;		/* its first region, counted since the update */
	long eval_forwards;
	/* Mixed precision (torch_tree_amp.c): GradScaler skips the optimizer step of a batch
	 * whose gradients hold inf/nan, and update() shows it */
	bool step_skipped;
	bool optimizer_since_update;
	/* torch.compile (torch_tree_compile.c) */
	bool compile_open;		/* dynamo's callback runs (Python frames) */
	uint64_t compile_enter_ns;	/* its last call began; 0: none since the last compile */
	uint64_t compile_exit_ns;	/* and returned */
	uint64_t compile_end_ns;	/* the last compile's end */
	uint64_t compile_scope_end_ns;	/* the last compile told by dynamo's scope ended */
	struct tree_compile held_compiles[TREE_MAX_COMPILES];
	int nheld_compiles;
	uint64_t codes[TREE_MAX_CODES];	/* frames compiled (their code state) */
	int ncodes;
	long compiles;			/* compiles seen, recompilations included */
	/* Activation checkpointing (torch_tree_recompute.c) */
	int backward_depth;		/* nested Engine::execute inside the open backward */
	uint64_t backward_sp;		/* the open backward's stack pointer at entry, or 0 */
	struct span *recompute;		/* a forward recomputed inside the backward */
};

void torch_tree__init(struct torch_tree *t, struct session *s, long epoch_steps);
void torch_tree__feed(struct torch_tree *t, const struct tree_event *ev);
/* Called when the session ends: settles spans the tree still holds back and, after a clean
 * exit, ends the last step and epoch at the last event; session__end does the rest. */
void torch_tree__finish(struct torch_tree *t, bool clean_exit);
/* The innermost span open at ts, now (a scope, backward, forward, step or epoch), or NULL:
 * where a mark the job prints at ts belongs. ts counts as seen: a clean exit ends the last
 * step and epoch after it. */
struct span *torch_tree__current(struct torch_tree *t, uint64_t ts);
/* Whether an update of the parameters or their grads may be under way after the events
 * seen (an optimizer step, zero_grad or backward open, an update by hand). */
bool torch_tree__updating(const struct torch_tree *t);

#endif
