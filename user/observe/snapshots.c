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
// a look or a read needs from the target is found in snap_target.c.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "common/bpf_maps.h"
#include "snap.h"
#include "common/log.h"
#include "observe/observe.h"
#include "observe/snap_internal.h"
#include "observe/snapshots.h"
#include "tree/clock.h"

static void set_wake(struct observer *o, struct target *t, uint64_t every, uint64_t base)
{
	struct snap_ctl *c = t->snap;
	__u32 pid = (__u32)t->pid;

	if (c->wake.every == every && c->wake.base == base && c->wake.flags)
		return;
	c->wake.every = every;
	c->wake.base = base;
	c->wake.flags = SNAP_W_LOOP_END | SNAP_W_TRAINING;
	if (bpf_map_update_elem(o->snap_wakes_fd, &pid, &c->wake, BPF_ANY))
		dlog("pid %d: snapshots: cannot set wakeups: %s", t->pid, strerror(errno));
	else
		dlog("pid %d: snapshots: wakeups every %llu steps from %llu", t->pid,
		     (unsigned long long)every, (unsigned long long)base);
}

static __u32 role_of(const struct probe_result *r)
{
	if (r->def->action != ACT_EMIT)
		return SNAP_ROLE_NONE;
	switch (r->def->meaning) {
	case MEAN_SCOPE_ENTER: return SNAP_ROLE_SCOPE_ENTER;
	case MEAN_SCOPE_EXIT: return SNAP_ROLE_SCOPE_EXIT;
	case MEAN_BACKWARD: return SNAP_ROLE_BACKWARD;
	case MEAN_GRAD_MODE: return SNAP_ROLE_GRAD_MODE;
	default: return SNAP_ROLE_NONE;
	}
}

/* Tells BPF what t's probes are to the snapshots (every one: ids are reused). */
static void set_roles(struct observer *o, struct target *t, bool clear)
{
	for (size_t i = 0; i < t->nprobes; i++) {
		__u32 id = t->probes[i].id, role = clear ? 0 : role_of(&t->probes[i]);

		if (id)
			bpf_map_update_elem(o->snap_roles_fd, &id, &role, BPF_ANY);
	}
}

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

void snapshots__arm(struct observer *o, struct target *t)
{
	if (o->opts->snapshots == SNAP_OFF || t->snap_refused || !t->session)
		return;
	raise_priority();
	if (!t->snap) {
		t->snap = calloc(1, sizeof(*t->snap));
		if (!t->snap)
			return;
	}
	set_roles(o, t, false);
	start_worker(t);	/* ready when training begins: a thread's start takes a while */
	/* the first epoch: every step's end, until plan_wakeups knows better */
	set_wake(o, t, t->snap->wake.flags ? t->snap->wake.every : 1, t->snap->wake.base);
}

/* A backward was seen: the models and their optimizers exist by now. */
static bool training(const struct target *t)
{
	return t->tree.step || t->tree.step_index > 0 || t->tree.optimizer_steps > 0;
}

static void find(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!snap__prepare(o, t, &c->w.req) || !start_worker(t))
		return;
	c->w.req.kind = SNAP_REQ_FIND;
	c->busy = SNAP_REQ_FIND;
	if (training(t) && !c->find_in_training)
		c->find_retry_ns = 0;	/* from now on the models exist: look again soon */
	c->find_in_training = training(t);
	c->find_for_epoch = c->pend.want;
	dlog("pid %d: snapshots: looking for the models at step %ld", t->pid,
	     t->tree.optimizer_steps);
	snap_worker__submit(&c->w);
}

/* Starts a read of the state as of update count seq, after_step steps. */
static void read_now(struct observer *o, struct target *t, uint32_t seq)
{
	struct snap_ctl *c = t->snap;
	struct snap_req *q = &c->w.req;
	const struct options *op = o->opts;
	bool files = op->snapshots == SNAP_SAMPLED || op->snapshots == SNAP_FULL;

	q->kind = SNAP_REQ_READ;
	q->mode = op->snapshots;
	q->sample_rate = op->sample_rate;
	q->max_bytes = op->snapshot_max_bytes;
	q->s0 = seq;
	q->drops0 = bpf_maps__percpu_sum(o->stats_fd, STAT_RB_DROPS);
	q->dir[0] = 0;
	if (files && c->pend.want)
		snprintf(q->dir, sizeof(q->dir), "%s/snapshots/%llu", op->path,
			 (unsigned long long)c->pend.span_id);
	c->read_seq = seq;
	c->read_after_step = t->tree.optimizer_steps;
	c->read_for_epoch = c->pend.want;
	c->last_read_seq = seq;
	c->last_read_valid = true;
	c->busy = SNAP_REQ_READ;
	dlog("pid %d: snapshots: read at update %u, step %ld%s", t->pid, seq, c->read_after_step,
	     c->read_for_epoch ? " (an epoch's end)" : "");
	if ((t->snap_reads ? t->snap_bytes_last : c->bytes_estimate) <= INLINE_READ_BYTES) {
		snap_worker__run_here(&c->w);	/* the result is collected by the caller */
		return;
	}
	snap_worker__submit(&c->w);
}

/* The wakeups for the coming epoch ends: at each epoch-length-th step's end once the length
 * is known; before, at every step's end: for the first EVERY_STEP_FREE steps, then where
 * steps are long and reads cheap enough. */
static void plan_wakeups(struct observer *o, struct target *t, long end_step)
{
	struct snap_ctl *c = t->snap;
	long len = end_step - c->prev_end_steps, steps = t->tree.optimizer_steps;
	uint64_t now = clock__mono_ns(), step_ns;

	if (c->ended_epoch_id) {
		if (len > 0 && end_step != c->prev_end_steps)
			set_wake(o, t, (uint64_t)len, (uint64_t)(end_step + c->steps_offset));
		return;
	}
	if (steps <= 0)
		return;
	if (!c->first_step_ns) {
		c->first_step_ns = now;
		c->first_steps = steps;
	}
	if (steps <= EVERY_STEP_FREE || steps <= c->first_steps)
		return;
	step_ns = (now - c->first_step_ns) / (uint64_t)(steps - c->first_steps);
	set_wake(o, t, step_ns >= EVERY_STEP_MIN_NS &&
		 c->read_ms_last * 1e6 * EVERY_STEP_READ_SHARE <= (double)step_ns ? 1 : 0, 0);
}

/* An epoch ended (its loop's end seen, or late: the next epoch began first) with the
 * update count end_seq, after last_step optimizer steps. */
static void epoch_ended(struct observer *o, struct target *t, uint64_t span_id, long index,
			uint32_t end_seq, long last_step, bool late)
{
	struct snap_ctl *c = t->snap;

	if (c->ended_epoch_id == span_id) {	/* it ends again: the earlier end was not it */
		c->prev_end_steps = c->prev_end_before;	/* its length counts from its start */
		snap__drop_records(t, span_id);
		if (c->pend.span_id == span_id) {
			c->pend.want = false;
			snap_read__free(&c->pend.torn);
			snap_read__free(&c->pend.kept);
		}
	}
	if (c->pend.want) {	/* the last one's state was never read */
		t->snapshots_skipped_busy++;
		snap__settle(o, t, "the next epoch ended before this one's state could be read");
	}
	dlog("pid %d: snapshots: epoch %ld ended at update %u, step %ld%s", t->pid, index, end_seq,
	     last_step, late ? " (seen when the next began)" : "");
	c->ended_epoch_id = span_id;
	c->pend.want = true;
	c->pend.epoch = index;
	c->pend.span_id = span_id;
	c->pend.end_seq = end_seq;
	c->pend.last_step = last_step;
	c->pend.attempts = 0;
	c->pend.late = late;
	snap_read__free(&c->pend.kept);
	if (c->cand.valid && c->cand.seq == end_seq)	/* read right after the last step */
		c->pend.kept = snap_read__dup(&c->cand);
	else if (c->step_read.valid && c->step_read.seq == end_seq)	/* read then, replaced */
		c->pend.kept = snap_read__dup(&c->step_read);
	c->pend.kept_note = NULL;
	/* Known late, with no read right after the last step: a read made before the next
	 * optimizer step began has its weights; its gradients may be a zero_grad's or a
	 * backward's later (the update count does not tell which update began). */
	if (late && !c->pend.kept.valid && c->cand.valid && c->cand.seq > end_seq &&
	    c->cand.after_step == last_step) {
		c->pend.kept = snap_read__dup(&c->cand);
		c->pend.kept_note = SNAP_NOTE_LATER_GRADS;
	}
	c->cand.fresh = false;
	plan_wakeups(o, t, last_step);
	c->prev_end_before = c->prev_end_steps;
	c->prev_end_steps = last_step;
	if (late)	/* the next epoch's updates have begun: that state is gone, but for a
			 * read kept from right after the last step */
		snap__settle(o, t, "the epoch's end was seen only when the next epoch began, and its "
		       "state after its last step had not been read");
}

void snapshots__after_event(struct observer *o, struct target *t, bool loop_ended)
{
	struct snap_ctl *c = t->snap;
	const struct span *ep = t->tree.epoch;

	if (!c || !ep)
		return;
	if (t->tree.optimizer_end_ns != c->opt_end_ns) {	/* an optimizer step ended */
		unsigned int i = c->nstep_ends++ % 4;

		c->opt_end_ns = t->tree.optimizer_end_ns;
		c->seq_after_step = t->snap_seen;
		c->steps_after_step = t->tree.optimizer_steps;
		c->step_ends[i].end_ns = c->opt_end_ns;
		c->step_ends[i].seq = c->seq_after_step;
		c->step_ends[i].steps = c->steps_after_step;
	}
	if (ep->id != c->epoch_id) {	/* a new epoch began */
		uint32_t seq = c->seq_after_step;
		long last = c->steps_after_step;

		/* the last epoch ended with the last optimizer step before this one began: the
		 * tree may learn where it began only after this epoch's first step */
		for (unsigned int k = 0; k < 4 && k < c->nstep_ends; k++) {
			unsigned int i = (c->nstep_ends - 1 - k) % 4;

			if (c->step_ends[i].end_ns <= ep->start_ns) {
				seq = c->step_ends[i].seq;
				last = c->step_ends[i].steps;
				break;
			}
		}
		if (c->epoch_id && c->ended_epoch_id != c->epoch_id && last > c->prev_end_steps)
			epoch_ended(o, t, c->epoch_id, c->epoch_index, seq, last, true);
		/* the loop's end the tree learnt with it (the next loop's first batch trained)
		 * is the last epoch's, not this one's */
		loop_ended = false;
		if (!c->pend.want)
			snap__flush_held(t);
		c->epoch_id = ep->id;	/* the tree lets go of it when the session ends */
		c->epoch_index = ep->index;
	}
	if (loop_ended)
		epoch_ended(o, t, ep->id, ep->index, t->snap_seen, t->tree.optimizer_steps, false);
}

/* The worker's result, taken in. */
static void collect(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_result *r = &c->w.res;
	struct snap_read rd = {};
	uint64_t now = clock__mono_ns();

	c->busy = SNAP_REQ_NONE;
	atomic_store(&c->w.done, false);
	if (c->w.req.kind == SNAP_REQ_FIND) {
		c->found = r->models > 0;	/* a failed refresh keeps the models */
		c->bytes_estimate = r->bytes;
		if (r->err == -EAGAIN) {	/* frames in flux: at once, a few times */
			c->find_partial++;
			c->find_after_ns = now;
			return;
		}
		c->find_partial = 0;
		c->found_ns = now;
		c->find_retry_ns = c->found ? 0 : !c->find_retry_ns ? FIND_RETRY_NS
				   : c->find_retry_ns * 2 > FIND_RETRY_MAX_NS ? FIND_RETRY_MAX_NS
				   : c->find_retry_ns * 2;
		c->find_after_ns = now + (c->found ? FIND_REFRESH_NS : c->find_retry_ns);
		if (c->found && !r->refused)
			c->why[0] = 0;
		else
			snprintf(c->why, sizeof(c->why), "%s", r->why);
		if (r->refused)	/* no layout fits this torch: for good */
			t->snap_refused = true;
		snap__resolve_early(t);
		dlog("pid %d: snapshots: %zu models, %zu optimizers (%.1f ms; %s)", t->pid, r->models,
		     r->optimizers, r->ms, r->found_how);
		return;
	}
	t->snap_reads++;
	t->snap_bytes_last = r->bytes;
	t->snap_ms_last = r->ms;
	t->snap_bytes_total += r->bytes;
	t->snap_ms_total += r->ms;
	c->read_ms_last = r->ms;
	if (r->refused) {	/* the epochs' records from now on say why */
		t->snap_refused = true;
		if (r->why[0])
			snprintf(c->why, sizeof(c->why), "%s", r->why);
	}
	rd.valid = true;
	rd.seq = c->read_seq;
	rd.after_step = c->read_after_step;
	rd.records = r->records;
	rd.model_attr = r->model_attr;
	rd.bytes = r->bytes;
	rd.ms = r->ms;
	r->records = r->model_attr = NULL;
	if (!rd.model_attr) {	/* a tensor could not be read (the records say why), or the
				 * models moved: look again */
		c->found = false;
		if (c->pend.want && c->read_for_epoch) {
			c->pend.attempts++;
			snap_read__free(&c->pend.torn);
			c->pend.torn = rd;	/* as good as it gets (but a kept one): its error */
			c->pend.torn.valid = true;
			snap__settle(o, t, NULL);
			return;
		}
		snap_read__free(&rd);
		return;
	}
	dlog("pid %d: snapshots: read at update %u: %s, %.2f ms", t->pid, rd.seq,
	     r->exact ? "exact" : "torn", r->ms);
	if (!r->exact)
		t->snap_reads_torn++;
	if (r->exact) {
		snap_read__free(&c->cand);
		c->cand = rd;
		c->cand.fresh = c->pend.want && c->read_for_epoch;
		if (rd.seq == c->seq_after_step && rd.after_step == c->steps_after_step) {
			snap_read__free(&c->step_read);
			c->step_read = snap_read__dup(&rd);
		}
	}
	if (!c->pend.want || !c->read_for_epoch) {	/* made ahead */
		if (!r->exact)
			snap_read__free(&rd);
		else if (c->pend.want && rd.seq == c->pend.end_seq && !c->pend.kept.valid)
			c->pend.kept = snap_read__dup(&c->cand);	/* begun before the end was known */
		return;
	}
	c->pend.attempts++;
	if ((r->exact && rd.seq == c->pend.end_seq) || c->pend.kept.valid) {
		if (!r->exact)
			snap_read__free(&rd);
		snap__settle(o, t, NULL);	/* this read, or the one kept from the step's end */
	} else if (r->exact) {	/* the epoch's end state was gone before the read began */
		snap__records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step, &c->cand,
			     true, c->pend.attempts, c->cand.after_step == c->pend.last_step
			     ? SNAP_NOTE_LATER_GRADS : "the state after the epoch's last step "
			     "changed before it could be read: this is a later one");
		c->pend.want = false;
		snap_read__free(&c->pend.torn);
		snap_read__free(&c->pend.kept);
	} else {
		snap_read__free(&c->pend.torn);
		c->pend.torn = rd;
		if (c->pend.attempts >= SNAP_ATTEMPTS)
			snap__settle(o, t, NULL);
	}
}

/* Whether a read now would be one of those made ahead: right after an optimizer step that
 * may end an epoch. */
static bool ahead_due(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;
	long steps = t->tree.optimizer_steps, since = steps - c->prev_end_steps;

	if (o->opts->snapshots != SNAP_STATS || steps <= 0 || !c->wake.every ||
	    (c->last_read_valid && c->last_read_seq == t->snap_seen))
		return false;
	return since > 0 && since % (long)c->wake.every == 0;
}

static void decide(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_state st;
	uint64_t now = clock__mono_ns();
	__u32 pid = (__u32)t->pid;

	if (c->busy || t->snap_refused)
		return;
	/* Looked for once training begins (a backward: the models and their optimizers exist),
	 * again while none is found (backing off), and for an epoch that waits */
	if ((training(t) && !c->find_in_training) ||
	    (!c->found && c->find_in_training &&
	     (now >= c->find_after_ns || (c->pend.want && !c->find_for_epoch))) ||
	    (c->found && c->refresh && !c->pend.want)) {
		c->refresh = false;
		find(o, t);
		return;
	}
	if (!c->found) {
		if (c->pend.want && c->why[0])
			snap__settle(o, t, NULL);	/* no model: its record says so */
		return;
	}
	if (c->pend.want && c->pend.kept.valid && t->snap_seen_valid &&
	    t->snap_seen != c->pend.end_seq) {
		snap__settle(o, t, NULL);	/* moved on: the read from the step's end it is */
		return;
	}
	if (!t->snap_seen_valid || torch_tree__updating(&t->tree))
		return;
	if (!c->pend.want && !ahead_due(o, t)) {
		plan_wakeups(o, t, c->prev_end_steps);
		return;
	}
	if (bpf_map_lookup_elem(o->snap_states_fd, &pid, &st) || (uint32_t)st.updates != t->snap_seen)
		return;	/* an update began that the events have not told yet */
	c->steps_offset = (long)st.steps - t->tree.optimizer_steps;
	t->snap_wakeups = st.wakes;
	read_now(o, t, t->snap_seen);
	if (c->busy && atomic_load(&c->w.done))
		collect(o, t);	/* read here and now */
}

void snapshots__poll(struct observer *o)
{
	for (struct target *t = o->targets; t; t = t->next) {
		if (!t->snap || !t->session)
			continue;
		if (t->snap->busy && atomic_load(&t->snap->w.done))
			collect(o, t);
		decide(o, t);
	}
}

/* Whether the loop should look every few ms: a read is due or under way, or a process
 * trains with no optimizer step (Keras, updates by hand), where no step's end wakes the
 * loader: its epoch's end is then seen within a poll, not a whole timeout later. The
 * loader's timer, not the job, pays for that. */
bool snapshots__active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (t->snap && (t->snap->busy || t->snap->pend.want ||
				(training(t) && t->tree.optimizer_steps <= 0)))
			return true;
	return false;
}

void snapshots__end(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;
	struct snap_state st;
	__u32 pid = (__u32)t->pid;
	const char *gone = t->exited ? "the process ended" : "the observer detached";
	char why[256];

	if (!c)
		return;
	snap_worker__stop(&c->w);
	if (c->busy == SNAP_REQ_READ && atomic_load(&c->w.done))
		collect(o, t);
	else {
		cJSON_Delete(c->w.res.records);
		cJSON_Delete(c->w.res.model_attr);
		c->busy = SNAP_REQ_NONE;
	}
	if (!bpf_map_lookup_elem(o->snap_states_fd, &pid, &st))
		t->snap_wakeups = st.wakes;
	snprintf(why, sizeof(why), "%s before the state after this epoch's last step could be "
		 "read", gone);
	snap__settle(o, t, why);
	/* the last epoch, whose loop's end was not seen: the state the job ended with, if a
	 * read of it was kept */
	if (c->epoch_id && c->epoch_id != c->ended_epoch_id &&
	    t->tree.optimizer_steps > c->prev_end_steps) {
		if (!t->snap_refused && c->cand.valid && c->cand.after_step == t->tree.optimizer_steps &&
		    (c->cand.seq == c->seq_after_step ||
		     (t->snap_seen_valid && c->cand.seq == t->snap_seen)))
			snap__records_from(o, t, c->epoch_id, c->epoch_index, t->tree.optimizer_steps,
				     &c->cand, true, 1, NULL);
		else
			snap__error_record(o, t, c->epoch_id, c->epoch_index, t->tree.optimizer_steps,
				     c->why[0] ? c->why : why);
	}
	snap__resolve_early(t);
	snap__flush_held(t);
	snap_read__free(&c->cand);
	snap_read__free(&c->step_read);
	snap_read__free(&c->pend.torn);
	snap_read__free(&c->pend.kept);
	set_roles(o, t, true);
	bpf_map_delete_elem(o->snap_wakes_fd, &pid);
	bpf_map_delete_elem(o->snap_states_fd, &pid);
	free(c);
	t->snap = NULL;
}
