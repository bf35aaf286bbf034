// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: what the worker hands back, taken in on the event thread: a look's models
// (or why there are none), a read (exact or torn) kept ahead of an end or made for the
// epoch that waits, whose record it may settle (snap_plan__after_epoch_read).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/log.h"
#include "snap/snap_ctl.h"
#include "snap/snap_records.h"
#include "snap/snap_results.h"
#include "snap/snap_worker.h"
#include "traced/target.h"
#include "tree/clock.h"

/* BPF copies the models the worker has now where a loop ends (snap_copy.c); the copies are
 * read with these models (the worker idle, as it is here). */
static void set_plan(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!snap_worker__mirror(&c->cw, &c->w))
		snap_copy__set_plan(e, t->pid, &c->copy, &c->w.res.plan);
}

/* The worker's look for the models, taken in. */
static void collect_look(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_result *r = &c->w.res;
	uint64_t now = clock__mono_ns();
	bool found = r->models > 0;	/* a failed refresh keeps the models */

	if (!found)
		c->models = SNAP_MODELS_NONE;
	else if (c->models != SNAP_MODELS_STALE)
		c->models = SNAP_MODELS_FOUND;
	c->bytes_estimate = r->bytes;
	if (r->err == -EAGAIN) {	/* frames in flux: at once, a few times */
		c->find_partial++;
		c->look_after_ns = now;
		return;
	}
	c->find_partial = 0;
	c->found_ns = now;
	c->retry_ns = snap_plan__retry_ns(c->retry_ns, found);
	c->look_after_ns = now + (found ? FIND_REFRESH_NS : c->retry_ns);
	if (found && !r->refused)
		c->why[0] = 0;
	else
		snprintf(c->why, sizeof(c->why), "%s", r->why);
	if (r->refused)	/* no layout fits this torch: for good */
		c->models = SNAP_MODELS_REFUSED;
	else if (found && r->plan_ok)	/* BPF copies them where a loop ends, from now on */
		set_plan(e, t);
	snap_records__resolve_early(t);
	dlog("pid %d: snapshots: %zu models, %zu optimizers (%.1f ms; %s)", t->pid, r->models,
	     r->optimizers, r->ms, r->found_how);
}

/* A read made for the epoch that waits: its record, a later state, or another try. */
static void epoch_read(const struct snap_env *e, struct target *t, struct snap_read rd,
		       bool exact)
{
	struct snap_ctl *c = t->snap;
	struct snap_pending *p = &c->pend;

	p->attempts++;
	if (!exact && rd.weights_exact && rd.after_step == p->last_step && !p->kept.valid) {
		p->kept = rd;	/* its weights are the end's, its grads torn: as good as it gets */
		p->kept_note = SNAP_NOTE_TORN_GRADS;
		snap_records__settle(e, t, NULL);
		return;
	}
	switch (snap_plan__after_epoch_read(exact, rd.seq, p->end_seq, p->kept.valid,
					    p->attempts)) {
	case SNAP_OUT_SETTLE:	/* this read, or the one kept from the step's end */
		if (!exact)
			snap_read__free(&rd);
		snap_records__settle(e, t, NULL);
		break;
	case SNAP_OUT_LATER_STATE:	/* the end's state was gone before the read began */
		snap_records__from(e, t, p->span_id, p->epoch, p->last_step, &c->cand, true,
				   p->attempts, c->cand.after_step == p->last_step
				   ? SNAP_NOTE_LATER_GRADS : p->looked ? "the state after the "
				   "epoch's last step changed before it could be read (the first "
				   "look for the models and their layout ran as it ended): this is a "
				   "later one" : "the state after the epoch's last step changed "
				   "before it could be read: this is a later one");
		p->state = SNAP_PEND_NONE;
		snap_read__free(&p->torn);
		snap_read__free(&p->kept);
		break;
	case SNAP_OUT_RETRY:
	case SNAP_OUT_TORN:
		snap_read__free(&p->torn);
		p->torn = rd;
		if (p->attempts >= SNAP_ATTEMPTS)
			snap_records__settle(e, t, NULL);
		break;
	}
}

/* The worker's read, taken in. */
static void collect_read(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_result *r = &c->w.res;
	struct snap_read rd = {};
	bool for_epoch = snap_ctl__waiting(c) && c->read_purpose == SNAP_FOR_EPOCH;

	snap_counts__read(&c->counts, r);
	c->read_ms_last = r->ms;
	if (r->plan_ok)	/* BPF copies this model where a loop ends */
		set_plan(e, t);
	if (r->refused) {	/* the epochs' records from now on say why */
		c->models = SNAP_MODELS_REFUSED;
		if (r->why[0])
			snprintf(c->why, sizeof(c->why), "%s", r->why);
	}
	rd.valid = true;
	rd.purpose = for_epoch ? SNAP_FOR_EPOCH : SNAP_AHEAD;
	rd.seq = c->read_seq;
	rd.after_step = c->read_after_step;
	rd.records = r->records;
	rd.model_attr = r->model_attr;
	rd.bytes = r->bytes;
	rd.ms = r->ms;
	rd.exact = r->exact;
	rd.weights_exact = r->weights_exact;
	r->records = r->model_attr = NULL;
	if (!rd.model_attr) {	/* a tensor could not be read (the records say why), or the
				 * models moved: look again */
		if (c->models != SNAP_MODELS_REFUSED)
			c->models = SNAP_MODELS_NONE;
		if (for_epoch) {
			c->pend.attempts++;
			snap_read__free(&c->pend.torn);
			c->pend.torn = rd;	/* as good as it gets (but a kept one): its error */
			snap_records__settle(e, t, NULL);
			return;
		}
		snap_read__free(&rd);
		return;
	}
	dlog("pid %d: snapshots: read at update %u: %s, %.2f ms", t->pid, rd.seq,
	     r->exact ? "exact" : "torn", r->ms);
	if (!r->exact)
		c->counts.reads_torn++;
	if (r->exact) {
		snap_read__free(&c->cand);
		c->cand = rd;
		if (rd.seq == c->after_step.seq && rd.after_step == c->after_step.steps) {
			snap_read__free(&c->step_read);
			c->step_read = snap_read__dup(&rd);
		}
	} else if (r->weights_exact) {	/* that step's weights, grads torn */
		snap_read__free(&c->weights_read);
		c->weights_read = snap_read__dup(&rd);
	}
	if (!for_epoch) {	/* made ahead */
		if (!r->exact)
			snap_read__free(&rd);
		else if (snap_ctl__waiting(c) && rd.seq == c->pend.end_seq && !c->pend.kept.valid)
			c->pend.kept = snap_read__dup(&c->cand);	/* begun before the end was known */
		return;
	}
	epoch_read(e, t, rd, r->exact);
}

void snap_results__collect(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;
	enum snap_busy was = c->busy;

	c->busy = SNAP_IDLE;
	atomic_store(&c->w.done, false);
	if (was == SNAP_FINDING)
		collect_look(e, t);
	else
		collect_read(e, t);
}
