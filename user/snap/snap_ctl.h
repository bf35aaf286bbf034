/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_CTL_H
#define __CIRRON_SNAP_CTL_H

/* --snapshots: the state the event thread keeps per target (snapshots.c drives it, with the
 * decisions of snap_plan.c; snap_records.c makes its records), and what health reports. */
#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "snap.h"
#include "snap/snap_plan.h"
#include "snap/snap_req.h"

#define FIND_WHOLE_TRIES	8		/* looks that want every thread's frames whole */
/* A read this small is made on the loop's thread, the moment it wakes (the worker's own
 * wakeup can take milliseconds on a busy machine); larger ones on the worker, so the loop
 * keeps draining the ring meanwhile. */
#define INLINE_READ_BYTES	(4ull << 20)
#define LOOP_NICE		(-20)

/* A record read after the epoch's last optimizer step, before the next began, once another
 * update had begun: the weights are the step's, the gradients may be a zero_grad's. */
/* A record whose weights were read after the epoch's last step, before the next optimizer
 * step began, while a later zero_grad or backward changed the gradients. */
#define SNAP_NOTE_TORN_GRADS "the weights are those after the epoch's last optimizer step (no " \
	"optimizer step began before the read ended); the gradients are torn: read while a " \
	"later update ran (zero_grad, a backward)"
#define SNAP_NOTE_LATER_GRADS "read after the epoch's last optimizer step, once a later " \
	"update had begun (zero_grad, a backward): the weights are those after that step, the " \
	"gradients may not be"

/* What health says of the snapshots (schemas/spool-batch.schema.json, health). */
struct snap_counts {
	long taken;		/* records */
	long skipped_busy;	/* epochs whose end came before their state was read */
	long reads, reads_torn;	/* reads made (every one costs), torn ones */
	uint64_t wakeups;	/* loader wakeups BPF forced for them */
	uint64_t copies;	/* BPF's copies at loops' ends (snap_copy.c) */
	uint64_t bytes_last, bytes_total;	/* target memory read */
	double ms_last, ms_total;
};

/* The epoch whose record waits for its state after its last optimizer step. */
struct snap_pending {
	enum snap_pend state;
	long epoch, last_step;
	uint64_t span_id;
	uint32_t end_seq;	/* the update count its end was seen at */
	int attempts;		/* reads made for it */
	struct snap_read torn;	/* the last torn read, kept in case none is exact */
	/* a read made right after the last step, at the same update count: what the record
	 * holds unless one made now (which also sees what no probe tells, such as
	 * Module.zero_grad()) is exact */
	struct snap_read kept;
	const char *kept_note;	/* what the record says of kept, if not the state right after
				 * the step */
	bool looked;		/* the first look for the models ran as it ended */
};

/* An epoch whose end's state was never read, a later epoch ended first: its record is the
 * next state read (labelled a later one), or an error if none comes. */
#define SNAP_BEHIND_MAX 32	/* epochs of a few ms, ended while the first look ran */
struct snap_behind {
	uint64_t span_id;
	long epoch, last_step;
	bool looked;		/* the first look for the models ran as it ended */
	bool torn;		/* its reads were all torn (else: a later epoch ended first) */
};

struct snap_ctl {
	struct snap_worker w;
	enum snap_busy busy;	/* what the worker does now */
	bool ended;		/* the session ended: nothing more is read (counts stay) */
	struct snap_counts counts;
	cJSON *out;		/* records for the next batch, or NULL */
	/* the update count the last anchor event carried (bpf/snap.h) */
	uint32_t seen;
	bool seen_valid;
	uint64_t main_dict;	/* __main__'s globals once found (the interpreter's exit clears
				 * sys.modules), 0: not yet */
	/* the read under way */
	uint32_t read_seq;
	long read_after_step;
	enum snap_purpose read_purpose;
	/* the models */
	enum snap_models models;
	bool look_for_epoch;	/* the last look was made while an epoch waited */
	uint64_t bytes_estimate;	/* what the models' tensors and grads hold */
	int find_partial;	/* looks in a row that found frames in flux */
	uint64_t look_after_ns, found_ns, retry_ns;
	char why[320];		/* why none was found, or why snapshots cannot be */
	/* epoch ends */
	long prev_end_steps;	/* optimizer steps at the last loop's end */
	long prev_end_before;	/* prev_end_steps before that end (an epoch may end again) */
	uint64_t ended_epoch_id;	/* the last epoch whose end was seen */
	uint64_t epoch_id;	/* the epoch the tree has open */
	long epoch_index;
	/* An epoch's records wait until the next epoch begins: a loop's end the tree saw too
	 * early in it (a framework fetching ahead) gives way to the later one. */
	cJSON *held;
	uint64_t held_epoch_id;
	/* The error records of epochs missed before the first look for the models came back:
	 * whether this build can be read at all (its tensor layout) is not known yet, so the
	 * cause waits for that answer (snap_records__resolve_early). */
	cJSON *early;
	/* the state right after the last optimizer step ended */
	struct snap_step_end after_step;
	uint64_t opt_end_ns;
	struct snap_step_ends step_ends;
	struct snap_pending pend;
	struct snap_behind behind[SNAP_BEHIND_MAX];
	int nbehind;
	struct snap_read cand;	/* the newest exact read */
	/* the newest exact read made right after an optimizer step (no update since): what an
	 * epoch whose end is known only later holds, when later reads (after a zero_grad, in
	 * the next epoch) replaced cand */
	struct snap_read step_read;
	/* the newest read of the weights after an optimizer step made while a later update
	 * (zero_grad, a backward) ran: its grads are torn, its weights are that step's */
	struct snap_read weights_read;
	uint32_t last_read_seq;
	bool read_any;
	double read_ms_last;
	/* BPF's copy at a loop's end (snap_copy.c), and its reader on the loop's thread: the
	 * models and layout its plan was made from (the worker may be looking again meanwhile) */
	struct snap_copy_src copy;
	struct snap_worker cw;
	/* wakeups (bpf/snap.h) */
	struct snap_wake wake;
	long steps_offset;	/* BPF's step count - the tree's */
	struct snap_pace pace;
};

/* A read made (of the target, or of BPF's copy): what health counts of it. */
static inline void snap_counts__read(struct snap_counts *n, const struct snap_result *r)
{
	n->reads++;
	n->bytes_last = r->bytes;
	n->ms_last = r->ms;
	n->bytes_total += r->bytes;
	n->ms_total += r->ms;
}

/* An epoch waits for its record. */
static inline bool snap_ctl__waiting(const struct snap_ctl *c)
{
	return c->pend.state == SNAP_PEND_WAITING;
}

#endif
