// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: the decisions (snap_plan.h), pure.
#include "snap/snap_plan.h"

void snap_plan__note_step_end(struct snap_step_ends *r, struct snap_step_end e)
{
	r->v[r->n++ % SNAP_STEP_ENDS] = e;
}

struct snap_step_end snap_plan__last_step_before(const struct snap_step_ends *r,
						 uint64_t start_ns)
{
	struct snap_step_end none = {};

	if (!r->n)
		return none;
	/* the tree may learn where an epoch began only after its first step ended */
	for (unsigned int k = 0; k < SNAP_STEP_ENDS && k < r->n; k++) {
		const struct snap_step_end *e = &r->v[(r->n - 1 - k) % SNAP_STEP_ENDS];

		if (e->end_ns <= start_ns)
			return *e;
	}
	return r->v[(r->n - 1) % SNAP_STEP_ENDS];
}

bool snap_plan__ended_unseen(uint64_t prev_epoch, uint64_t ended_epoch, long last_step,
			     long prev_end_steps)
{
	return prev_epoch && ended_epoch != prev_epoch && last_step > prev_end_steps;
}

bool snap_plan__read_exact(uint32_t seen_before, uint32_t updates_after, uint64_t drops_before,
			   uint64_t drops_after, bool objects_alive)
{
	return updates_after == seen_before && drops_after == drops_before && objects_alive;
}

bool snap_plan__weights_exact(uint64_t steps_before, uint64_t steps_after, uint64_t drops_before,
			      uint64_t drops_after, bool objects_alive)
{
	return steps_after == steps_before && drops_after == drops_before && objects_alive;
}

bool snap_plan__weights_read_due(long step, bool in_step, bool candidate, long waiting_step,
				 bool have_it)
{
	return step > 0 && !in_step && !have_it && (candidate || step == waiting_step);
}

enum snap_kept snap_plan__kept_at_end(const struct snap_read *cand,
				      const struct snap_read *step_read,
				      const struct snap_read *weights_read, uint32_t end_seq,
				      long last_step, bool late)
{
	if (cand->valid && cand->seq == end_seq)
		return SNAP_KEPT_CAND;
	if (step_read->valid && step_read->seq == end_seq)
		return SNAP_KEPT_STEP_READ;
	/* Known late, with no read right after the last step: a read made before the next
	 * optimizer step began has its weights; its gradients may be a zero_grad's or a
	 * backward's later (the update count does not tell which update began). */
	if (late && cand->valid && cand->seq > end_seq && cand->after_step == last_step)
		return SNAP_KEPT_LATER_GRADS;
	if (weights_read->valid && weights_read->weights_exact &&
	    weights_read->after_step == last_step)
		return SNAP_KEPT_WEIGHTS;
	return SNAP_KEPT_NONE;
}

enum snap_settle snap_plan__settle(const struct snap_read *cand, uint32_t end_seq,
				   long last_step, const struct snap_read *kept,
				   const struct snap_read *torn)
{
	if (cand->valid && cand->seq == end_seq && cand->purpose == SNAP_FOR_EPOCH)
		return SNAP_SETTLE_FRESH;
	if (kept->valid)
		return SNAP_SETTLE_KEPT;
	/* a torn read of a later step is no state of this epoch's, torn or not */
	if (torn->valid && (torn->after_step == last_step || !torn->model_attr))
		return SNAP_SETTLE_TORN;
	return SNAP_SETTLE_NONE;
}

enum snap_outcome snap_plan__after_epoch_read(bool exact, uint32_t seq, uint32_t end_seq,
					      bool kept_valid, int attempts)
{
	if ((exact && seq == end_seq) || kept_valid)
		return SNAP_OUT_SETTLE;
	if (exact)
		return SNAP_OUT_LATER_STATE;
	return attempts >= SNAP_ATTEMPTS ? SNAP_OUT_TORN : SNAP_OUT_RETRY;
}

bool snap_plan__look_due(enum snap_models m, bool training, uint64_t now_ns,
			 uint64_t look_after_ns, bool epoch_waits, bool last_look_for_epoch)
{
	switch (m) {
	case SNAP_MODELS_NOT_LOOKED:
		return training;
	case SNAP_MODELS_NONE:
		return now_ns >= look_after_ns || (epoch_waits && !last_look_for_epoch);
	case SNAP_MODELS_STALE:
		return !epoch_waits;
	default:
		return false;
	}
}

uint64_t snap_plan__retry_ns(uint64_t last_retry_ns, bool found)
{
	if (found)
		return 0;
	if (!last_retry_ns)
		return FIND_RETRY_NS;
	return last_retry_ns * 2 > FIND_RETRY_MAX_NS ? FIND_RETRY_MAX_NS : last_retry_ns * 2;
}

bool snap_plan__candidate(long step, long prev_end_steps, uint64_t every)
{
	long since = step - prev_end_steps;

	return step > 0 && every && since > 0 && since % (long)every == 0;
}

bool snap_plan__ahead_due(long steps, long prev_end_steps, uint64_t every, bool read_any,
			  uint32_t last_read_seq, uint32_t seen)
{
	if (read_any && last_read_seq == seen)
		return false;
	return snap_plan__candidate(steps, prev_end_steps, every);
}

struct snap_wake_plan snap_plan__wakeups(struct snap_pace *p, bool end_seen, long epoch_len,
					 long end_step, long steps_offset, long steps,
					 uint64_t now_ns, double read_ms_last)
{
	struct snap_wake_plan w = {};
	uint64_t step_ns;

	if (end_seen) {
		if (epoch_len > 0) {
			w.set = true;
			w.every = (uint64_t)epoch_len;
			w.base = (uint64_t)(end_step + steps_offset);
		}
		return w;
	}
	if (steps <= 0)
		return w;
	if (!p->first_step_ns) {
		p->first_step_ns = now_ns;
		p->first_steps = steps;
	}
	if (steps <= EVERY_STEP_FREE || steps <= p->first_steps)
		return w;
	step_ns = (now_ns - p->first_step_ns) / (uint64_t)(steps - p->first_steps);
	w.set = true;
	w.every = step_ns >= EVERY_STEP_MIN_NS &&
		  read_ms_last * 1e6 * EVERY_STEP_READ_SHARE <= (double)step_ns ? 1 : 0;
	return w;
}
