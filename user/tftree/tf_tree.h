/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TF_TREE_H
#define __CIRRON_TF_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include "tree/session.h"

/*
 * The training tree of a TensorFlow job (Keras 3 and tf-keras model.fit, evaluate, predict;
 * custom tf.GradientTape loops, eager or in a tf.function), from TensorFlow's own C++ anchors
 * (probes/tensorflow.json, probes/tensorflow_python.json; docs/tree.md "TensorFlow"):
 *   a call of a tf.function (TFE_Py_ExecuteCancelable with the function's name),
 *   a gradient taken (TFE_Py_TapeGradient: once per step in an eager loop, once per trace of
 *     a function that computes gradients),
 *   a batch read from a tf.data iterator (IteratorResource::GetNext, on whichever thread), and
 *   an iterator made (IteratorResource::SetIteratorFromDataset: which dataset it reads).
 * It knows nothing about probes (observe/tf_events.c translates them), so the rules are
 * unit-testable on their own (tests/unit/test_tf_tree.c).
 */

enum tf_input {
	TFI_CALL_ENTER,		/* a tf.function called: name (the op name, __inference_<fn>_<id>) */
	TFI_CALL_EXIT,
	TFI_GRADIENT_ENTER,	/* tape.gradient(): eager (a backward), or inside a trace */
	TFI_GRADIENT_EXIT,
	TFI_NEXT_ENTER,		/* a batch read: obj = the iterator resource */
	TFI_NEXT_EXIT,
	TFI_ITERATOR,		/* an iterator made: obj = iterator resource, obj2 = its dataset */
	TFI_LOST,		/* events of this process were dropped just before: value = count */
	TFI_STACK,		/* the job's Python stack as the loader read it at ts: value = enum
				 * tf_hint, obj = 1 when its innermost frame was calling a
				 * tf.function (the call open at ts is that method's) */
};

/* What a tf.function does, as the tree learns it. */
enum tf_class {
	TFC_UNKNOWN = 0,	/* attached after its trace, nothing told yet: its calls wait */
	TFC_TRAIN,		/* a training step: forward, backward and update in one graph */
	TFC_EVAL,		/* an evaluation step (Keras's test function) */
	TFC_PREDICT,		/* a prediction step */
	TFC_IGNORED,		/* tf.function's own variable initializer, an eager op's slow path */
};

/* The Python stack at a call, as the loader read it (traced/py_stack.h): which Keras
 * method runs, innermost first. */
enum tf_hint {
	TFH_NONE = 0,		/* no Keras method on the stack (a custom loop), or unread */
	TFH_FIT,		/* Model.fit, no evaluate or predict inside it */
	TFH_VALIDATION,		/* Model.evaluate inside Model.fit */
	TFH_EVALUATE,		/* Model.evaluate on its own */
	TFH_PREDICT,		/* Model.predict */
};

struct tf_event {
	enum tf_input kind;
	uint64_t ts_ns;		/* wall clock */
	uint32_t tid;
	const char *name;
	uint64_t obj, obj2;
	int value;
};

#define TF_MAX_FUNCTIONS 64
#define TF_MAX_ITERATORS 32
#define TF_NAME_LEN 96
#define TF_MAX_GRADS 8	/* gradients held undecided; more: the oldest was a backward */
#define TF_MAX_OBS 64	/* stack reads kept until the call they fell in returns */
#define TF_UNDECIDED_CALLS 64	/* calls of a function nothing told: then taken for a step */

struct tf_function {
	char name[TF_NAME_LEN];		/* the op name as called */
	char stem[TF_NAME_LEN];		/* the Python function's name: multi_step_on_iterator */
	enum tf_class cls;
	const char *cls_source;		/* how it was told: gradient_traced, python_stack, name,
					 * paired, assumed, no_gradient */
	long calls;
};

struct tf_iterator {
	uint64_t obj, dataset;
	bool fresh;			/* made and not read by training yet */
};

/* A batch read outside any function call (an eager loop, predict's feed), held until what
 * follows tells whose batch it was. */
struct tf_next {
	uint64_t start, end, iterator;
	uint64_t counters_start[SESSION_NCOUNTERS], counters_end[SESSION_NCOUNTERS];
};

/* One per target. Fields grouped by rule. */
struct tf_tree {	// NOLINT(clang-analyzer-optin.performance.Padding)
	struct session *s;
	long epoch_steps;	/* fallback epoch length, steps (--epoch-steps) */
	bool mid_run;		/* attached to a running job: functions traced before are unseen */
	bool active;		/* a step or an evaluation was seen: this tree holds the session */
	uint32_t py_tid;	/* the thread that calls functions (the job's Python thread) */
	struct tf_function fns[TF_MAX_FUNCTIONS];
	int nfns;
	bool gradient_since_call;	/* a gradient since the last function call: a trace */
	struct tf_iterator its[TF_MAX_ITERATORS];
	int nits;
	/* the tree */
	struct span *epoch, *step, *call, *data, *eval, *backward;
	long epoch_index, step_index, steps_in_epoch, eval_index;
	uint64_t train_iterator;	/* what training reads this epoch (0: unknown) */
	uint64_t train_dataset;
	uint64_t val_dataset;		/* what validations read (0: none seen) */
	bool eval_since_train;		/* an evaluation ran since the last training step */
	bool step_has_backward;		/* eager loops: the step's gradient was taken */
	bool step_open_done;		/* the step's work is over: the next batch begins the next */
	/* the open call, its spans made when its batch tells which epoch it is in */
	struct tf_function *call_fn;
	uint64_t call_start;
	uint64_t call_counters[SESSION_NCOUNTERS];
	bool call_placed;
	int call_batches;
	/* the open call of a function not told yet: its first batch, placed once told */
	bool pend_next;
	uint64_t pend_next_start, pend_next_end, pend_next_it;
	/* stack reads that found a tf.function's call under way (TFI_STACK) */
	struct { uint64_t ts; int hint; } obs[TF_MAX_OBS];
	int nobs;
	uint64_t stack_read_ns;	/* the loader's: when it last read the stack for this tree */
	long calls_untold;	/* calls left out while their function was not told */
	long epoch_calls_untold;	/* of them, in the open epoch (it closes incomplete) */
	/* the open batch read */
	bool next_open, next_in_call;
	uint64_t next_start, next_iterator;
	uint64_t next_counters[SESSION_NCOUNTERS];
	bool held;
	struct tf_next held_next;
	/* gradients not yet known to be an eager loop's backwards or a trace's (a function that
	 * makes variables is traced twice: two gradients, then its first call) */
	struct { uint64_t start, end; } grads[TF_MAX_GRADS];
	int ngrads;
	bool grad_open;		/* the last one has not returned */
	/* the open eval run (validation, evaluate or predict) */
	const char *eval_kind;
	uint64_t eval_end, eval_dataset;
	long eval_batches;
	int call_depth;		/* calls open on the Python thread (the outermost is a step's) */
	uint64_t last_ts_ns;
	long events_lost;
};

void tf_tree__init(struct tf_tree *t, struct session *s, long epoch_steps, bool mid_run);
void tf_tree__feed(struct tf_tree *t, const struct tf_event *ev);
/* Whether the loader should read the job's Python stack (TFI_STACK) now and then: a function
 * is not told yet, or an evaluation run's kind. The read is the loader's, not the tree's. */
bool tf_tree__wants_stack(const struct tf_tree *t);
/* The innermost span open now, or NULL: where a mark the job prints belongs. */
struct span *tf_tree__current(struct tf_tree *t, uint64_t ts);
/* The epoch open, or NULL: where an end-of-epoch value belongs. */
struct span *tf_tree__epoch(const struct tf_tree *t);
/* Settles what is held and, after a clean exit, ends the last epoch at the last event. */
void tf_tree__finish(struct tf_tree *t, bool clean_exit);

#endif
