/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* --snapshots inside observe/: the state snapshots.c keeps per target, shared with the
 * records (snap_records.c) and the look-ups for the worker (snap_target.c). */
#ifndef __CIRRON_OBSERVE_SNAP_INTERNAL_H
#define __CIRRON_OBSERVE_SNAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "snap.h"
#include "observe/observe.h"
#include "observe/snapshots.h"

#define SNAP_ATTEMPTS		3		/* reads of an epoch's end before it is torn */
#define FIND_REFRESH_NS		5000000000ull	/* the models are looked for again after */
#define FIND_RETRY_NS		1000000ull	/* none found: again after, doubled each time
						 * up to a second (frames read while they change
						 * can miss a local; the first epoch may be short) */
#define FIND_RETRY_MAX_NS	1000000000ull
#define FIND_WHOLE_TRIES	8		/* looks that want every thread's frames whole */
/* Reading after every optimizer step (before the first epoch's length is known) costs the
 * job a loader wakeup each (~50 us on the 2-core VM, docs/observer-effects.md): for the
 * first EVERY_STEP_FREE steps (an epoch of a few ms is over by then), beyond only for steps
 * this long, and reads this cheap relative to them. */
#define EVERY_STEP_FREE		64
#define EVERY_STEP_MIN_NS	20000000ull
#define EVERY_STEP_READ_SHARE	10
/* A read this small is made on the loop's thread, the moment it wakes (the worker's own
 * wakeup can take milliseconds on a busy machine); larger ones on the worker, so the loop
 * keeps draining the ring meanwhile. */
#define INLINE_READ_BYTES	(4ull << 20)
#define LOOP_NICE		(-20)

/* A finished read kept: the newest exact one. */
struct snap_read {
	bool valid;
	bool fresh;		/* made once the epoch's end was known */
	uint32_t seq;		/* the update count it reflects */
	long after_step;
	cJSON *records, *model_attr;
	uint64_t bytes;
	double ms;
};

/* A record read after the epoch's last optimizer step, before the next began, once another
 * update had begun: the weights are the step's, the gradients may be a zero_grad's. */
#define SNAP_NOTE_LATER_GRADS "read after the epoch's last optimizer step, once a later " \
	"update had begun (zero_grad, a backward): the weights are those after that step, the " \
	"gradients may not be"

struct snap_ctl {
	struct snap_worker w;
	enum snap_req_kind busy;	/* what the worker does now (NONE: idle) */
	uint32_t read_seq;
	long read_after_step;
	bool read_for_epoch;	/* begun for the waiting epoch (not one made ahead) */
	/* the models */
	bool found;
	bool find_in_training;	/* the last look was after training began */
	bool find_for_epoch;	/* the last look was while an epoch waited */
	bool refresh;		/* look again (new models, wrappers), now that an epoch's record
				 * is out and the next end is far */
	uint64_t bytes_estimate;	/* what the models' tensors and grads hold */
	int find_partial;	/* looks in a row that found frames in flux */
	uint64_t find_after_ns, found_ns, find_retry_ns;
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
	 * cause waits for that answer (snap__resolve_early). */
	cJSON *early;
	/* the state right after the last optimizer step ended */
	uint32_t seq_after_step;
	long steps_after_step;
	uint64_t opt_end_ns;
	/* the last few optimizer steps' ends: which was an epoch's last, once the tree tells
	 * (late) where the next epoch began */
	struct {
		uint64_t end_ns;	/* wall clock, as the tree's spans */
		uint32_t seq;
		long steps;
	} step_ends[4];
	unsigned int nstep_ends;
	struct {
		bool want;
		long epoch, last_step;
		uint64_t span_id;
		uint32_t end_seq;
		int attempts;
		bool late;
		struct snap_read torn;	/* the last torn read, kept in case none is exact */
		/* a read made right after the last step, at the same update count: what the
		 * record holds unless one made now (which also sees what no probe tells, such
		 * as Module.zero_grad()) is exact */
		struct snap_read kept;
		const char *kept_note;	/* what the record says of kept, if not the state
					 * right after the step */
	} pend;
	struct snap_read cand;
	/* the newest exact read made right after an optimizer step (no update since): what an
	 * epoch whose end is known only later holds, when later reads (after a zero_grad, in
	 * the next epoch) replaced cand */
	struct snap_read step_read;
	uint32_t last_read_seq;
	bool last_read_valid;
	double read_ms_last;
	/* wakeups (bpf/snap.h) */
	struct snap_wake wake;
	long steps_offset;	/* BPF's step count - the tree's */
	uint64_t first_step_ns;
	long first_steps;
};

/* snap_target.c: what the worker needs from the loader's caches (the symbol cache, the
 * probe set: the event thread's), looked up here. Returns false when it cannot be had
 * (yet); a target whose torch or CPython has no layout is refused for good. */
bool snap__prepare(struct observer *o, struct target *t, struct snap_req *q);

/* snap_records.c: an epoch's records, held until the next epoch begins */
void snap_read__free(struct snap_read *r);
struct snap_read snap_read__dup(const struct snap_read *r);
void snap__flush_held(struct target *t);
/* The first look came back: the early records go out, with the snapshots' why (a layout
 * that is not found, no model) as their error where there is one, else with the error they
 * were made with (the state was gone before it could be read). */
void snap__resolve_early(struct target *t);
/* An epoch that ends again: the records made at its earlier end go. */
void snap__drop_records(struct target *t, uint64_t span_id);
/* An epoch's records from a read: one per model. */
void snap__records_from(struct observer *o, struct target *t, uint64_t span_id, long epoch,
			long last_step, const struct snap_read *rd, bool exact, int attempts,
			const char *note);
void snap__error_record(struct observer *o, struct target *t, uint64_t span_id, long epoch,
			long last_step, const char *why);
/* The waiting epoch's record, from what there is: the kept read of its end's state, the
 * last torn one, or why there is none. */
void snap__settle(struct observer *o, struct target *t, const char *why_none);

#endif
