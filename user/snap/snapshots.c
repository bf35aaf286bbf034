// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: each epoch's parameters as they were after its last optimizer step, read out
// of the target's memory without stopping it.
//
// Parameters change in optimizer steps (and zero_grad and backward change the grads, an
// update by hand changes both). BPF counts the updates that begin (bpf/snap.bpf.h) and
// stamps every anchor event with that count; a read begins only when the tree says no
// update is under way and BPF's count is the one the last event seen carried (nothing
// began since), and it is exact when the count is still that after the read: the state
// the job had between two updates, after `after_step` optimizer steps. Otherwise it is torn
// and read again at the next quiet moment, a bounded number of times.
//
// Which state is an epoch's: the one of the update count the loop's end was seen at (or, where
// the tree sees no loop's end, right after the epoch's last step). The loop's end is known
// late (the tree learns it from what follows the last __next__), so reads are also made
// ahead, right after the optimizer steps that may end an epoch (every step while the first
// epoch's length is unknown, then every epoch-length-th), and the newest exact one is kept.
// At the loop's end the state is read again (that read also sees what no probe tells, such as
// Module.zero_grad()); if the job has moved on, the read kept from right after the last step,
// at the same count, is the epoch's. BPF wakes the loader at the end of those steps, where a
// loop seems to end and at the first backward (bpf/snap.h), so it reads while the job is
// still between two updates however short the epoch: a few wakeups an epoch, not one an
// event. The loop's thread runs at nice -20 and makes small reads itself, at once.
//
// The models are found ahead too, on the worker thread (snap_worker.c), as training begins
// and again between epochs now and then; large reads run there as well. An epoch's records
// wait until the next epoch begins (a loop's end seen too early gives way to the later one);
// an epoch whose state could not be read has a record that says why (snap_records.c). What
// a look or a read needs from the target is found in snap_prepare.c. The decisions are
// snap_plan.c's (pure, unit-tested); this file does what they decide.
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "snap.h"
#include "common/bpf_maps.h"
#include "common/log.h"
#include "common/options.h"
#include "common/test_hooks.h"
#include "snap/snap_ctl.h"
#include "snap/snap_prepare.h"
#include "snap/snap_records.h"
#include "snap/snap_results.h"
#include "snap/snap_wakes.h"
#include "snap/snap_worker.h"
#include "snap/snapshots.h"
#include "traced/target.h"
#include "tree/clock.h"

/* The loop's thread reads small models itself, and must do so in the moment between two
 * updates the wakeup came for: on a busy machine a thread at the default priority waits
 * milliseconds for a CPU (bench: docs/observer-effects.md). It runs at nice -20 where it
 * may (root, CAP_SYS_NICE); its work per wakeup is a fraction of a millisecond. The worker
 * thread, for large models, goes back to the process's priority. */
static int base_nice, loop_nice;

static void raise_priority(void)
{
	static bool done;
	pid_t tid = gettid();

	if (done)
		return;
	done = true;
	errno = 0;
	base_nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		base_nice = 0;
	loop_nice = LOOP_NICE;
	if (setpriority(PRIO_PROCESS, (id_t)tid, LOOP_NICE)) {
		dlog("snapshots: the loop's thread stays at nice %d: %s", base_nice,
		     strerror(errno));
		loop_nice = base_nice;
	}
}

static bool start_worker(struct target *t)
{
	int err;

	if (t->snap->w.started)
		return true;
	t->snap->w.nice = base_nice;
	t->snap->w.find_nice = loop_nice;
	err = snap_worker__start(&t->snap->w);
	if (err)
		elog("pid %d: cannot start the snapshot thread: %s", t->pid, strerror(err));
	return !err;
}

void snapshots__arm(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (e->opts->snapshots == SNAP_OFF || !t->session ||
	    (c && c->models == SNAP_MODELS_REFUSED))
		return;
	raise_priority();
	if (!c) {
		c = t->snap = calloc(1, sizeof(*t->snap));
		if (!c)
			return;
	}
	c->ended = false;	/* a new image's session (exec) */
	snap_wakes__roles(e, t, false);
	start_worker(t);	/* ready when training begins: a thread's start takes a while */
	/* the first epoch: every step's end, until plan_wakeups knows better */
	snap_wakes__set(e, t, c->wake.flags ? c->wake.every : 1, c->wake.base);
}

void snapshots__seen(struct target *t, uint32_t updates)
{
	if (!t->snap)
		return;
	t->snap->seen = updates;
	t->snap->seen_valid = true;
}

static bool have_models(const struct snap_ctl *c)
{
	return c->models == SNAP_MODELS_FOUND || c->models == SNAP_MODELS_STALE;
}

/* A backward was seen: the models and their optimizers exist by now. */
static bool training(const struct target *t)
{
	return t->tree.step || t->tree.step_index > 0 || t->tree.optimizer_steps > 0;
}

static void look(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!snap_prepare__request(e, t, &c->w.req) || !start_worker(t))
		return;
	c->w.req.kind = SNAP_REQ_FIND;
	c->busy = SNAP_FINDING;
	if (c->models == SNAP_MODELS_NOT_LOOKED) {	/* from now on the models exist */
		c->models = SNAP_MODELS_NONE;
		c->retry_ns = 0;
	}
	c->look_for_epoch = snap_ctl__waiting(c);
	dlog("pid %d: snapshots: looking for the models at step %ld", t->pid,
	     t->tree.optimizer_steps);
	snap_worker__submit(&c->w);
}

/* A READ of the state as of update count seq, as the options ask (files under the directory
 * of the epoch that waits): the worker's, or the copy's reader's. */
static void read_req(const struct snap_env *e, const struct snap_ctl *c, struct snap_req *q,
		     uint32_t seq)
{
	const struct options *op = e->opts;

	q->kind = SNAP_REQ_READ;
	q->mode = op->snapshots;
	q->sample_rate = op->sample_rate;
	q->max_bytes = op->snapshot_max_bytes;
	q->s0 = seq;
	q->dir[0] = 0;
	if ((op->snapshots == SNAP_SAMPLED || op->snapshots == SNAP_FULL) && snap_ctl__waiting(c))
		snprintf(q->dir, sizeof(q->dir), "%s/snapshots/%llu", op->path,
			 (unsigned long long)c->pend.span_id);
}

/* Starts a read of the state as of update count seq, after step optimizer steps (BPF's
 * count: steps0, none open). */
static void read_now(const struct snap_env *e, struct target *t, uint32_t seq, long step,
		     uint64_t steps0)
{
	struct snap_ctl *c = t->snap;
	struct snap_req *q = &c->w.req;

	read_req(e, c, q, seq);
	q->steps0 = steps0;
	q->drops0 = bpf_maps__percpu_sum(e->stats_fd, STAT_RB_DROPS);
	c->read_seq = seq;
	c->read_after_step = step;
	c->read_purpose = snap_ctl__waiting(c) ? SNAP_FOR_EPOCH : SNAP_AHEAD;
	c->last_read_seq = seq;
	c->read_any = true;
	c->busy = SNAP_READING;
	dlog("pid %d: snapshots: read at update %u, step %ld%s", t->pid, seq, c->read_after_step,
	     c->read_purpose == SNAP_FOR_EPOCH ? " (an epoch's end)" : "");
	if ((c->counts.reads ? c->counts.bytes_last : c->bytes_estimate) <= INLINE_READ_BYTES) {
		snap_worker__run_here(&c->w);	/* the result is collected by the caller */
		return;
	}
	snap_worker__submit(&c->w);
}

/* The state of the loop's end whose update count was end_seq (or that of the step that ended
 * there), after step optimizer steps, from BPF's copy (bpf/snap.h), read here and now (the
 * tensors' bytes are the copy's: nothing is read from the target but their shapes). */
static bool read_copied(const struct snap_env *e, struct target *t, uint32_t end_seq, long step,
			struct snap_read *out)
{
	struct snap_ctl *c = t->snap;
	struct snap_req *q = &c->cw.req;	/* the copy's reader: the worker may be busy */
	struct snap_result *r = &c->cw.res;
	uint32_t seq;

	if (!c->cw.models.n || !snap_copy__take(e, t->pid, &c->copy, end_seq, &seq))
		return false;
	read_req(e, c, q, seq);
	q->copy = &c->copy;
	snap_worker__run_here(&c->cw);
	atomic_store(&c->cw.done, false);
	snap_counts__read(&c->counts, r);
	*out = (struct snap_read){
		.valid = true, .purpose = SNAP_FOR_EPOCH, .seq = seq, .after_step = step,
		.records = r->records, .model_attr = r->model_attr, .bytes = r->bytes,
		.ms = r->ms, .exact = r->exact, .weights_exact = r->weights_exact,
	};
	r->records = r->model_attr = NULL;
	dlog("pid %d: snapshots: BPF's copy at update %u (step %ld): %s, %.2f ms", t->pid, seq,
	     step, out->exact && out->model_attr ? "exact" : "not whole", out->ms);
	if (out->exact && out->model_attr)
		return true;
	snap_read__free(out);
	return false;
}

/* The epoch that waits, with nothing kept from right after its last step: BPF's copy of its
 * loop's end, if one was made. */
static void kept_from_copy(const struct snap_env *e, struct target *t)
{
	struct snap_pending *p = &t->snap->pend;
	struct snap_read rd;

	if (!snap_ctl__waiting(t->snap) || (p->kept.valid && !p->kept_note) ||
	    !read_copied(e, t, p->end_seq, p->last_step, &rd))
		return;
	if (rd.seq != p->end_seq && p->kept.valid) {	/* no better than what is kept */
		snap_read__free(&rd);
		return;
	}
	snap_read__free(&p->kept);
	p->kept = rd;
	/* zero_grad ran between the step and the loop's end: the weights are the step's */
	p->kept_note = rd.seq == p->end_seq ? NULL : SNAP_NOTE_LATER_GRADS;
}

/* An epoch ended (its loop's end seen, or late: the next epoch began first) with the
 * update count end_seq, after last_step optimizer steps. */
static void epoch_ended(const struct snap_env *e, struct target *t, uint64_t span_id,
			long index, uint32_t end_seq, long last_step, bool late)
{
	struct snap_ctl *c = t->snap;
	struct snap_pending *p = &c->pend;

	if (c->ended_epoch_id == span_id) {	/* it ends again: the earlier end was not it */
		c->prev_end_steps = c->prev_end_before;	/* its length counts from its start */
		snap_records__drop(t, span_id);
		if (p->span_id == span_id) {
			p->state = SNAP_PEND_NONE;
			snap_read__free(&p->torn);
			snap_read__free(&p->kept);
		}
	}
	if (snap_ctl__waiting(c)) {	/* the last one's state was never read */
		kept_from_copy(e, t);
		if (!p->kept.valid)
			c->counts.skipped_busy++;
		snap_records__settle(e, t, snap_why_next_ended);
	}
	dlog("pid %d: snapshots: epoch %ld ended at update %u, step %ld%s", t->pid, index, end_seq,
	     last_step, late ? " (seen when the next began)" : "");
	c->ended_epoch_id = span_id;
	p->state = SNAP_PEND_WAITING;
	p->epoch = index;
	p->span_id = span_id;
	p->end_seq = end_seq;
	p->last_step = last_step;
	p->attempts = 0;
	p->looked = !c->found_ns;	/* the first look has not come back */
	snap_read__free(&p->kept);
	p->kept_note = NULL;
	switch (snap_plan__kept_at_end(&c->cand, &c->step_read, &c->weights_read, end_seq,
				       last_step, late)) {
	case SNAP_KEPT_CAND:	/* read right after the last step */
		p->kept = snap_read__dup(&c->cand);
		break;
	case SNAP_KEPT_STEP_READ:	/* read then, replaced since */
		p->kept = snap_read__dup(&c->step_read);
		break;
	case SNAP_KEPT_LATER_GRADS:
		p->kept = snap_read__dup(&c->cand);
		p->kept_note = SNAP_NOTE_LATER_GRADS;
		break;
	case SNAP_KEPT_WEIGHTS:	/* its weights, read while the grads changed */
		p->kept = snap_read__dup(&c->weights_read);
		p->kept_note = SNAP_NOTE_TORN_GRADS;
		break;
	case SNAP_KEPT_NONE:
		break;
	}
	kept_from_copy(e, t);	/* where BPF copied the loop's end */
	if (c->cand.purpose == SNAP_FOR_EPOCH)	/* made for the last one, not this one */
		c->cand.purpose = SNAP_AHEAD;
	snap_wakes__plan(e, t, last_step);
	c->prev_end_before = c->prev_end_steps;
	c->prev_end_steps = last_step;
	if (late)	/* the next epoch's updates have begun: that state is gone, but for a
			 * read kept from right after the last step */
		snap_records__settle(e, t, "the epoch's end was seen only when the next epoch "
				     "began, and its state after its last step had not been read");
}

void snapshots__after_event(const struct snap_env *e, struct target *t, bool loop_ended)
{
	struct snap_ctl *c = t->snap;
	const struct span *ep = t->tree.epoch;

	if (!c || c->ended || !ep)
		return;
	if (t->tree.optimizer_end_ns != c->opt_end_ns) {	/* an optimizer step ended */
		c->opt_end_ns = t->tree.optimizer_end_ns;
		c->after_step = (struct snap_step_end){ c->opt_end_ns, c->seen,
							t->tree.optimizer_steps };
		snap_plan__note_step_end(&c->step_ends, c->after_step);
	}
	if (ep->id != c->epoch_id) {	/* a new epoch began */
		struct snap_step_end last = snap_plan__last_step_before(&c->step_ends,
									ep->start_ns);

		if (snap_plan__ended_unseen(c->epoch_id, c->ended_epoch_id, last.steps,
					    c->prev_end_steps))
			epoch_ended(e, t, c->epoch_id, c->epoch_index, last.seq, last.steps, true);
		/* the loop's end the tree learnt with it (the next loop's first batch trained)
		 * is the last epoch's, not this one's */
		loop_ended = false;
		if (!snap_ctl__waiting(c))
			snap_records__flush_held(t);
		c->epoch_id = ep->id;	/* the tree lets go of it when the session ends */
		c->epoch_index = ep->index;
	}
	if (loop_ended)
		epoch_ended(e, t, ep->id, ep->index, c->seen, t->tree.optimizer_steps, false);
}

/* An update is under way (zero_grad, a backward): the grads are changing, but the weights are
 * still those after the last optimizer step until the next one begins. Where that step may
 * end an epoch, or is the one whose epoch waits, its weights are read now (BPF's count of
 * steps begun says none began). Not for a job that updates its weights by hand. */
static void read_weights(const struct snap_env *e, struct target *t, const struct snap_state *st)
{
	struct snap_ctl *c = t->snap;
	long step = (long)st->steps - c->steps_offset;
	bool candidate = e->opts->snapshots == SNAP_STATS &&
			 snap_plan__candidate(step, c->prev_end_steps, c->wake.every);
	bool have = (c->cand.valid && c->cand.after_step == step) ||
		    (c->weights_read.valid && c->weights_read.after_step == step);
	long waiting_step = snap_ctl__waiting(c) && !c->pend.kept.valid ? c->pend.last_step : -1;

	if (t->tree.optimizer_steps <= 0 ||
	    !snap_plan__weights_read_due(step, st->flags & SNAP_S_IN_STEP, candidate,
					 waiting_step, have))
		return;
	c->counts.wakeups = st->wakes;
	read_now(e, t, c->seen, step, st->steps);
	if (c->busy && atomic_load(&c->w.done))
		snap_results__collect(e, t);	/* read here and now */
}

static void decide(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_state st;
	__u32 pid = (__u32)t->pid;

	if (c->busy || c->models == SNAP_MODELS_REFUSED)
		return;
	if (snap_plan__look_due(c->models, training(t), clock__mono_ns(), c->look_after_ns,
				snap_ctl__waiting(c), c->look_for_epoch)) {
		if (c->models == SNAP_MODELS_STALE)
			c->models = SNAP_MODELS_FOUND;
		look(e, t);
		return;
	}
	if (!have_models(c)) {
		if (snap_ctl__waiting(c) && c->why[0])
			snap_records__settle(e, t, NULL);	/* no model: its record says so */
		return;
	}
	if (snap_ctl__waiting(c) && c->pend.kept.valid && c->seen_valid &&
	    c->seen != c->pend.end_seq) {
		snap_records__settle(e, t, NULL);	/* moved on: the read from the step's end */
		return;
	}
	if (!c->seen_valid || bpf_map_lookup_elem(e->states_fd, &pid, &st))
		return;
	c->counts.copies = st.copies;
	if (c->copy.plan_set && test_hooks__get()->snap_copy_only)
		return;	/* tests: every epoch's end from BPF's copy */
	if (torch_tree__updating(&t->tree) || (uint32_t)st.updates != c->seen) {
		read_weights(e, t, &st);	/* an update is under way */
		return;
	}
	if (!snap_ctl__waiting(c) && (e->opts->snapshots != SNAP_STATS ||
				      !snap_plan__ahead_due(t->tree.optimizer_steps,
							    c->prev_end_steps, c->wake.every,
							    c->read_any, c->last_read_seq,
							    c->seen))) {
		snap_wakes__plan(e, t, c->prev_end_steps);
		return;
	}
	c->steps_offset = (long)st.steps - t->tree.optimizer_steps;
	c->counts.wakeups = st.wakes;
	read_now(e, t, c->seen, t->tree.optimizer_steps, st.steps);
	if (c->busy && atomic_load(&c->w.done))
		snap_results__collect(e, t);	/* read here and now */
}

void snapshots__poll(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!c || c->ended || !t->session)
		return;
	if (c->busy && atomic_load(&c->w.done))
		snap_results__collect(e, t);
	decide(e, t);
}

/* Whether the loop should look every few ms: a read is due or under way, or a process
 * trains with no optimizer step (Keras, updates by hand), where no step's end wakes the
 * loader: its epoch's end is then seen within a poll, not a whole timeout later. The
 * loader's timer, not the job, pays for that. */
bool snapshots__active(const struct target *t)
{
	const struct snap_ctl *c = t->snap;

	return c && !c->ended && (c->busy || snap_ctl__waiting(c) ||
				  (training(t) && t->tree.optimizer_steps <= 0));
}

/* The last epoch, whose loop's end was not seen: the state the job ended with, if a read of
 * it was kept. */
static void last_epoch(const struct snap_env *e, struct target *t, const char *why)
{
	struct snap_ctl *c = t->snap;
	long steps = t->tree.optimizer_steps;

	if (!c->epoch_id || c->epoch_id == c->ended_epoch_id || steps <= c->prev_end_steps)
		return;
	if (c->models != SNAP_MODELS_REFUSED && c->cand.valid && c->cand.after_step == steps &&
	    (c->cand.seq == c->after_step.seq || (c->seen_valid && c->cand.seq == c->seen)))
		snap_records__from(e, t, c->epoch_id, c->epoch_index, steps, &c->cand, true, 1,
				   NULL);
	else
		snap_records__error(e, t, c->epoch_id, c->epoch_index, steps,
				    c->why[0] ? c->why : why);
}

/* After the session's end: only what the last batch and health need, and whether this
 * target was refused (for good: an exec keeps the libraries' verdict). */
static void reset(struct snap_ctl *c)
{
	struct snap_counts counts = c->counts;
	cJSON *out = c->out;
	bool refused = c->models == SNAP_MODELS_REFUSED;

	snap_read__free(&c->cand);
	snap_read__free(&c->step_read);
	snap_read__free(&c->weights_read);
	snap_read__free(&c->pend.torn);
	snap_read__free(&c->pend.kept);
	py_models__free(&c->cw.models);
	cJSON_Delete(c->held);
	cJSON_Delete(c->early);
	memset(c, 0, sizeof(*c));
	c->counts = counts;
	c->out = out;
	c->models = refused ? SNAP_MODELS_REFUSED : SNAP_MODELS_NOT_LOOKED;
	c->ended = true;
}

void snapshots__end(const struct snap_env *e, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_state st;
	__u32 pid = (__u32)t->pid;
	const char *gone = t->exited ? "the process ended" : "the observer detached";
	char why[256];

	if (!c || c->ended)
		return;
	snap_worker__stop(&c->w);
	if (c->busy == SNAP_READING && atomic_load(&c->w.done))
		snap_results__collect(e, t);
	else {
		cJSON_Delete(c->w.res.records);
		cJSON_Delete(c->w.res.model_attr);
		c->busy = SNAP_IDLE;
	}
	if (!bpf_map_lookup_elem(e->states_fd, &pid, &st)) {
		c->counts.wakeups = st.wakes;
		c->counts.copies = st.copies;
	}
	snprintf(why, sizeof(why), "%s before the state after this epoch's last step could be "
		 "read", gone);
	kept_from_copy(e, t);
	snap_records__settle(e, t, why);
	snap_records__behind_errors(e, t, why);
	last_epoch(e, t, why);
	snap_records__resolve_early(t);
	snap_records__flush_held(t);
	snap_wakes__roles(e, t, true);
	snap_copy__drop(e, t->pid, &c->copy);
	bpf_map_delete_elem(e->wakes_fd, &pid);
	bpf_map_delete_elem(e->states_fd, &pid);
	reset(c);
}

cJSON *snapshots__take_records(struct target *t)
{
	cJSON *out = t->snap ? t->snap->out : NULL;

	if (out)
		t->snap->out = NULL;
	return out;
}

void snapshots__health(const struct target *t, cJSON *h)
{
	const struct snap_counts *n = t->snap ? &t->snap->counts : NULL;

	if (!n || (!n->taken && !n->reads))
		return;
	cJSON_AddNumberToObject(h, "snapshots", (double)n->taken);
	cJSON_AddNumberToObject(h, "snapshots_skipped_busy", (double)n->skipped_busy);
	cJSON_AddNumberToObject(h, "snapshot_reads", (double)n->reads);
	cJSON_AddNumberToObject(h, "snapshot_reads_torn", (double)n->reads_torn);
	cJSON_AddNumberToObject(h, "snapshot_wakeups", (double)n->wakeups);
	cJSON_AddNumberToObject(h, "snapshot_bpf_copies", (double)n->copies);
	cJSON_AddNumberToObject(h, "snapshot_bytes_last", (double)n->bytes_last);
	cJSON_AddNumberToObject(h, "snapshot_ms_last", n->ms_last);
	cJSON_AddNumberToObject(h, "snapshot_bytes_total", (double)n->bytes_total);
	cJSON_AddNumberToObject(h, "snapshot_ms_total", n->ms_total);
}

void snapshots__free(struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!c)
		return;
	if (!c->ended) {	/* never ended (no session): nothing to say */
		snap_worker__stop(&c->w);
		snap_copy__drop(NULL, t->pid, &c->copy);
		reset(c);
	}
	cJSON_Delete(c->out);
	free(c);
	t->snap = NULL;
}
