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
// an epoch whose state could not be read has a record that says why.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "snap.h"
#include "common/log.h"
#include "observe/observe.h"
#include "observe/snapshots.h"
#include "target/cpython.h"
#include "tree/clock.h"

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
	/* the state right after the last optimizer step ended */
	uint32_t seq_after_step;
	long steps_after_step;
	uint64_t opt_end_ns;
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
	} pend;
	struct snap_read cand;
	uint32_t last_read_seq;
	bool last_read_valid;
	double read_ms_last;
	/* wakeups (bpf/snap.h) */
	struct snap_wake wake;
	long steps_offset;	/* BPF's step count - the tree's */
	uint64_t first_step_ns;
	long first_steps;
};

static void read_free(struct snap_read *r)
{
	cJSON_Delete(r->records);
	cJSON_Delete(r->model_attr);
	memset(r, 0, sizeof(*r));
}

static struct snap_read read_dup(const struct snap_read *r)
{
	struct snap_read d = *r;

	d.records = cJSON_Duplicate(r->records, true);
	d.model_attr = cJSON_Duplicate(r->model_attr, true);
	return d;
}

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

/* The CPython the target runs: the file that defines _PyRuntime (the executable, or
 * libpython where it is shared, as in pyenv's builds), its version, and __main__'s dict. */
static const struct mapped_file *python_of(struct observer *o, struct target *t, uint32_t *hex,
					   uint64_t *main_dict)
{
	const struct mapped_file *any = NULL;

	for (size_t i = 0; i < t->nfiles; i++) {
		if (!strstr(t->files[i].path, "python") ||
		    cpython__version(o->syms, t->pid, &t->files[i], hex))
			continue;
		any = &t->files[i];
		if (!cpython__module_dict(o->syms, t->pid, any, *hex, "__main__", main_dict))
			return any;
	}
	*main_dict = 0;
	return any;
}

static const struct py_layout *py_layout_for(const struct observer *o, uint32_t hex)
{
	for (size_t i = 0; i < o->probes.n; i++)
		for (size_t k = 0; k < o->probes.groups[i].n; k++) {
			const struct probe_def *d = &o->probes.groups[i].probes[k];

			if (d->meaning == MEAN_PY_CALL && d->py_layout.known &&
			    d->py_version == (hex & 0xffff0000u))
				return &d->py_layout;
		}
	return NULL;
}

static void refuse(struct target *t, const char *why)
{
	snprintf(t->snap->why, sizeof(t->snap->why), "%s", why);
	t->snap_refused = true;
	elog("pid %d: snapshots off: %s", t->pid, why);
}

/* What the worker needs from the loader's caches (the symbol cache, the probe set: the
 * event thread's), looked up here. Returns false when it cannot be had (yet). */
static bool prepare(struct observer *o, struct target *t, struct snap_req *q)
{
	const struct mapped_file *f;
	const struct py_layout *pyl;
	uint32_t hex = 0;
	uint64_t dict = 0;
	char why[200];
	cJSON *v = cJSON_GetObjectItemCaseSensitive(t->session->root->attrs, "torch_version");

	if (!cJSON_IsString(v))
		return false;	/* not known yet */
	if (torch_layout__find(v->valuestring, &q->l, why, sizeof(why))) {
		refuse(t, why);
		return false;
	}
	f = python_of(o, t, &hex, &dict);
	if (dict)	/* kept: the interpreter's exit clears sys.modules */
		t->snap_main_dict = dict;
	pyl = f ? py_layout_for(o, hex) : NULL;
	if (!pyl) {
		refuse(t, "no object layout for this CPython in probes/cpython.json (3.11 to 3.13)");
		return false;
	}
	q->pid = t->pid;
	q->pyl = *pyl;
	q->roots.main_dict = t->snap_main_dict;
	q->roots.minor = hex >> 16 & 0xff;
	q->roots.forward = t->model_obj;
	q->roots.whole_frames = t->snap->find_partial < FIND_WHOLE_TRIES;
	if (cpython__interp(o->syms, t->pid, f, hex, &q->roots.interp))
		q->roots.interp = 0;
	q->states_fd = o->snap_states_fd;
	q->stats_fd = o->stats_fd;
	return true;
}


/* A backward was seen: the models and their optimizers exist by now. */
static bool training(const struct target *t)
{
	return t->tree.step || t->tree.step_index > 0 || t->tree.optimizer_steps > 0;
}

static void find(struct observer *o, struct target *t)
{
	struct snap_ctl *c = t->snap;

	if (!prepare(o, t, &c->w.req) || !start_worker(t))
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

static uint64_t ring_drops(struct observer *o)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
	__u32 key = STAT_RB_DROPS;
	uint64_t sum = 0;

	if (v && !bpf_map_lookup_elem(o->stats_fd, &key, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
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
	q->drops0 = ring_drops(o);
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

/* The held records go out with the next batch. */
static void flush_held(struct target *t)
{
	struct snap_ctl *c = t->snap;
	cJSON *rec;

	if (!c->held)
		return;
	if (!t->snapshots)
		t->snapshots = cJSON_CreateArray();
	while ((rec = cJSON_DetachItemFromArray(c->held, 0))) {
		cJSON_AddItemToArray(t->snapshots, rec);
		t->snapshots_taken++;
	}
	cJSON_Delete(c->held);
	c->held = NULL;
}

/* The session's `model` attribute: the inventory, written again only when it changed (an
 * epoch of a few ms would otherwise put the root in every batch). */
static void set_model_attr(struct target *t, const cJSON *inv)
{
	cJSON *a = t->session->root->attrs, *was = cJSON_GetObjectItemCaseSensitive(a, "model");

	if (!inv || (was && cJSON_Compare(was, inv, true)))
		return;
	if (was)
		cJSON_ReplaceItemInObjectCaseSensitive(a, "model", cJSON_Duplicate(inv, true));
	else
		cJSON_AddItemToObject(a, "model", cJSON_Duplicate(inv, true));
	session__touch_root(t->session);
}

static void add_record(struct target *t, uint64_t span_id, cJSON *rec)
{
	struct snap_ctl *c = t->snap;

	if (c->held && c->held_epoch_id != span_id)
		flush_held(t);
	if (!c->held)
		c->held = cJSON_CreateArray();
	c->held_epoch_id = span_id;
	cJSON_AddItemToArray(c->held, rec);
}

static cJSON *record_head(const struct observer *o, uint64_t span_id, long epoch)
{
	static const char *const mode[] = { "stats", "sampled", "full" };
	cJSON *rec = cJSON_CreateObject();

	json__add_u64(rec, "span_id", span_id);
	cJSON_AddNumberToObject(rec, "epoch", (double)epoch);
	json__add_u64(rec, "ts_ns", clock__wall_ns());
	cJSON_AddStringToObject(rec, "mode", mode[o->opts->snapshots]);
	return rec;
}

/* An epoch's records from a read: one per model. */
static void records_from(struct observer *o, struct target *t, uint64_t span_id, long epoch,
			 long last_step, const struct snap_read *rd, bool exact, int attempts,
			 const char *note)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, rd->records) {
		cJSON *rec = record_head(o, span_id, epoch), *it;

		cJSON_AddStringToObject(rec, "consistency", exact ? "exact" : "torn");
		cJSON_AddNumberToObject(rec, "after_step", (double)rd->after_step);
		cJSON_AddNumberToObject(rec, "epoch_last_step", (double)last_step);
		cJSON_AddNumberToObject(rec, "attempts", attempts);
		if (note)
			cJSON_AddStringToObject(rec, "note", note);
		cJSON_ArrayForEach(it, m) {
			cJSON_AddItemToObject(rec, it->string, cJSON_Duplicate(it, true));
		}
		cJSON_AddNumberToObject(rec, "bytes_read", (double)rd->bytes);
		cJSON_AddNumberToObject(rec, "duration_ms", rd->ms);
		add_record(t, span_id, rec);
	}
	set_model_attr(t, rd->model_attr);
}

static void error_record(struct observer *o, struct target *t, uint64_t span_id, long epoch,
			 long last_step, const char *why)
{
	cJSON *rec = record_head(o, span_id, epoch);

	cJSON_AddNumberToObject(rec, "epoch_last_step", (double)last_step);
	cJSON_AddStringToObject(rec, "error", why);
	cJSON_AddNumberToObject(rec, "bytes_read", 0);
	cJSON_AddNumberToObject(rec, "duration_ms", 0);
	add_record(t, span_id, rec);
}

/* The waiting epoch's record, from what there is: the kept read of its end's state, the
 * last torn one, or why there is none. */
static void settle(struct observer *o, struct target *t, const char *why_none)
{
	struct snap_ctl *c = t->snap;

	if (!c->pend.want)
		return;
	c->pend.want = false;
	c->refresh = c->found && clock__mono_ns() >= c->find_after_ns;
	if (c->cand.valid && c->cand.seq == c->pend.end_seq && c->cand.fresh)
		records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step, &c->cand,
			     true, c->pend.attempts ? c->pend.attempts : 1, NULL);
	else if (c->pend.kept.valid)
		records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     &c->pend.kept, true, c->pend.attempts + 1, NULL);
	else if (c->pend.torn.valid)
		records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     &c->pend.torn, false, c->pend.attempts, "every read was torn: an "
			     "update began before it ended");
	else
		error_record(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     c->why[0] ? c->why : why_none);
	read_free(&c->pend.torn);
	read_free(&c->pend.kept);
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
		if (c->held_epoch_id == span_id) {
			cJSON_Delete(c->held);
			c->held = NULL;
		}
		if (c->pend.span_id == span_id) {
			c->pend.want = false;
			read_free(&c->pend.torn);
			read_free(&c->pend.kept);
		}
	}
	if (c->pend.want) {	/* the last one's state was never read */
		t->snapshots_skipped_busy++;
		settle(o, t, "the next epoch ended before this one's state could be read");
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
	read_free(&c->pend.kept);
	if (c->cand.valid && c->cand.seq == end_seq)	/* read right after the last step */
		c->pend.kept = read_dup(&c->cand);
	c->cand.fresh = false;
	plan_wakeups(o, t, last_step);
	c->prev_end_before = c->prev_end_steps;
	c->prev_end_steps = last_step;
	if (late)	/* the next epoch's updates have begun: that state is gone */
		settle(o, t, "the epoch's end was seen only when the next epoch began, and its "
		       "state after its last step had not been read");
}

void snapshots__after_event(struct observer *o, struct target *t, bool loop_ended)
{
	struct snap_ctl *c = t->snap;
	const struct span *ep = t->tree.epoch;

	if (!c || !ep)
		return;
	if (t->tree.optimizer_end_ns != c->opt_end_ns) {	/* an optimizer step ended */
		c->opt_end_ns = t->tree.optimizer_end_ns;
		c->seq_after_step = t->snap_seen;
		c->steps_after_step = t->tree.optimizer_steps;
	}
	if (ep->id != c->epoch_id) {	/* a new epoch began */
		if (c->epoch_id && c->ended_epoch_id != c->epoch_id &&
		    c->steps_after_step > c->prev_end_steps)
			epoch_ended(o, t, c->epoch_id, c->epoch_index, c->seq_after_step,
				    c->steps_after_step, true);
		if (!c->pend.want)
			flush_held(t);
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
		if (c->found)
			c->why[0] = 0;
		else
			snprintf(c->why, sizeof(c->why), "%s", r->why);
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
	if (r->refused)
		t->snap_refused = true;
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
			read_free(&c->pend.torn);
			c->pend.torn = rd;	/* as good as it gets (but a kept one): its error */
			c->pend.torn.valid = true;
			settle(o, t, NULL);
			return;
		}
		read_free(&rd);
		return;
	}
	dlog("pid %d: snapshots: read at update %u: %s, %.2f ms", t->pid, rd.seq,
	     r->exact ? "exact" : "torn", r->ms);
	if (!r->exact)
		t->snap_reads_torn++;
	if (r->exact) {
		read_free(&c->cand);
		c->cand = rd;
		c->cand.fresh = c->pend.want && c->read_for_epoch;
	}
	if (!c->pend.want || !c->read_for_epoch) {	/* made ahead */
		if (!r->exact)
			read_free(&rd);
		else if (c->pend.want && rd.seq == c->pend.end_seq && !c->pend.kept.valid)
			c->pend.kept = read_dup(&c->cand);	/* begun before the end was known */
		return;
	}
	c->pend.attempts++;
	if ((r->exact && rd.seq == c->pend.end_seq) || c->pend.kept.valid) {
		if (!r->exact)
			read_free(&rd);
		settle(o, t, NULL);	/* this read, or the one kept from the step's end */
	} else if (r->exact) {	/* the epoch's end state was gone before the read began */
		records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step, &c->cand,
			     true, c->pend.attempts, "the state after the epoch's last step "
			     "changed before it could be read: this is a later one");
		c->pend.want = false;
		read_free(&c->pend.torn);
		read_free(&c->pend.kept);
	} else {
		read_free(&c->pend.torn);
		c->pend.torn = rd;
		if (c->pend.attempts >= SNAP_ATTEMPTS)
			settle(o, t, NULL);
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
			settle(o, t, NULL);	/* no model: its record says so */
		return;
	}
	if (c->pend.want && c->pend.kept.valid && t->snap_seen_valid &&
	    t->snap_seen != c->pend.end_seq) {
		settle(o, t, NULL);	/* moved on: the read from the step's end it is */
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

bool snapshots__active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (t->snap && (t->snap->busy || t->snap->pend.want))
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
	settle(o, t, why);
	/* the last epoch, whose loop's end was not seen: the state the job ended with, if a
	 * read of it was kept */
	if (c->epoch_id && c->epoch_id != c->ended_epoch_id &&
	    t->tree.optimizer_steps > c->prev_end_steps && !t->snap_refused) {
		if (c->cand.valid && c->cand.after_step == t->tree.optimizer_steps &&
		    (c->cand.seq == c->seq_after_step ||
		     (t->snap_seen_valid && c->cand.seq == t->snap_seen)))
			records_from(o, t, c->epoch_id, c->epoch_index, t->tree.optimizer_steps,
				     &c->cand, true, 1, NULL);
		else
			error_record(o, t, c->epoch_id, c->epoch_index, t->tree.optimizer_steps,
				     c->why[0] ? c->why : why);
	}
	flush_held(t);
	read_free(&c->cand);
	read_free(&c->pend.torn);
	read_free(&c->pend.kept);
	set_roles(o, t, true);
	bpf_map_delete_elem(o->snap_wakes_fd, &pid);
	bpf_map_delete_elem(o->snap_states_fd, &pid);
	free(c);
	t->snap = NULL;
}
