// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// TensorFlow's anchors (probes/tensorflow.json, probes/tensorflow_python.json) as inputs of
// the target's TensorFlow tree (tftree/tf_tree.h). Where the tree cannot tell a function's
// part from what it saw (a Keras function first seen after an attach; an evaluation run:
// validation or evaluate()), the job's Python stack is read here, at most every
// STACK_READ_NS while the tree asks, on every round of the loop (which polls often then: the
// loader's rounds, not the job's events, set when reads fall), and handed in with the time of
// the read: a read that finds a tf.function's call under way tells what the call open then
// was, however late the loader reads that call's events.
#include <stdio.h>
#include <stdlib.h>
#include "attach/observer.h"
#include "observe/tf_events.h"
#include "traced/py_stack.h"
#include "traced/versions.h"

#define STACK_READ_NS (5ull * 1000000ull)

bool tf_events__handles(enum probe_meaning m)
{
	return m == MEAN_TF_CALL || m == MEAN_TF_GRADIENT || m == MEAN_TF_NEXT ||
	       m == MEAN_TF_ITERATOR;
}

/* CIRRON_DEBUG_TREE=1: each input on stderr, as the torch tree's are. */
static void debug_input(const struct target *t, const struct tf_event *ev)
{
	static const char *const kinds[] = {
		[TFI_CALL_ENTER] = "TFCALL+", [TFI_CALL_EXIT] = "TFCALL-",
		[TFI_GRADIENT_ENTER] = "TFGRAD+", [TFI_GRADIENT_EXIT] = "TFGRAD-",
		[TFI_NEXT_ENTER] = "TFNEXT+", [TFI_NEXT_EXIT] = "TFNEXT-",
		[TFI_ITERATOR] = "TFITER", [TFI_LOST] = "TFLOST", [TFI_STACK] = "TFSTACK",
	};
	static int on = -1;

	if (on < 0)
		on = getenv("CIRRON_DEBUG_TREE") != NULL;
	if (on)
		fprintf(stderr, "TREE pid=%d tid=%u ts=%llu %s name=%s obj=%llx obj2=%llx val=%d\n",
			t->pid, ev->tid, (unsigned long long)ev->ts_ns, kinds[ev->kind],
			ev->name && *ev->name ? ev->name : "-", (unsigned long long)ev->obj,
			(unsigned long long)ev->obj2, ev->value);
}

/* The job's Python stack, while the tree asks (a read per STACK_READ_NS at most: the loader's
 * time and the job's mmap lock, never a stop). */
static void read_stack(struct observer *o, struct target *t)
{
	uint64_t now = clock_map__now(&t->clock);
	struct tf_event st = { .kind = TFI_STACK };
	bool in_call;

	if (!tf_tree__wants_stack(&t->tf) || now - t->tf.stack_read_ns < STACK_READ_NS)
		return;
	t->tf.stack_read_ns = now;
	st.ts_ns = now;
	st.value = py_stack__keras(o->syms, t, &in_call);
	st.obj = in_call;
	debug_input(t, &st);
	tf_tree__feed(&t->tf, &st);
}

void tf_events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		       const struct event *e, const char *name)
{
	struct tf_event te = { .ts_ns = clock_map__to_wall(&t->clock, e->ts_ns), .tid = e->tid };
	bool entry = e->type == EV_CALL;
	bool was_active;

	if (e->lost_before) {
		struct tf_event lost = te;

		lost.kind = TFI_LOST;
		lost.value = (int)e->lost_before;
		debug_input(t, &lost);
		tf_tree__feed(&t->tf, &lost);
	}
	switch (r->def->meaning) {
	case MEAN_TF_CALL:
		te.kind = entry ? TFI_CALL_ENTER : TFI_CALL_EXIT;
		te.name = entry ? name : NULL;
		break;
	case MEAN_TF_GRADIENT:
		te.kind = entry ? TFI_GRADIENT_ENTER : TFI_GRADIENT_EXIT;
		break;
	case MEAN_TF_NEXT:
		te.kind = entry ? TFI_NEXT_ENTER : TFI_NEXT_EXIT;
		te.obj = entry ? e->args[0] : 0;
		break;
	case MEAN_TF_ITERATOR:
		if (!entry)
			return;
		te.kind = TFI_ITERATOR;
		te.obj = e->args[0];
		te.obj2 = e->args[1];
		break;
	default:
		return;
	}
	debug_input(t, &te);
	hang__progress(&t->report.hang, te.ts_ns);
	was_active = t->tf.active;
	tf_tree__feed(&t->tf, &te);
	if (!was_active && t->tf.active)	/* its imports are done: versions read now (a */
		versions__detect(o->syms, t);	/* short job may end before the next flush) */
	read_stack(o, t);
}

bool tf_events__reading(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (tf_tree__wants_stack(&t->tf))
			return true;
	return false;
}

void tf_events__round(struct observer *o)
{
	for (struct target *t = o->targets; t; t = t->next)
		read_stack(o, t);
}
