// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: the records of an epoch (one per model, or one that says why there is none),
// held until the next epoch begins, then added to the session.
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "common/log.h"
#include "common/json.h"
#include "common/options.h"
#include "snap/snap_ctl.h"
#include "snap/snap_records.h"
#include "snap/snap_env.h"
#include "traced/target.h"
#include "tree/clock.h"

void snap_read__free(struct snap_read *r)
{
	cJSON_Delete(r->records);
	cJSON_Delete(r->model_attr);
	memset(r, 0, sizeof(*r));
}

struct snap_read snap_read__dup(const struct snap_read *r)
{
	struct snap_read d = *r;

	d.records = cJSON_Duplicate(r->records, true);
	d.model_attr = cJSON_Duplicate(r->model_attr, true);
	return d;
}

/* Early records at most: they wait only while the first look runs (ms to a second). */
#define EARLY_MAX 16

/* The records of arr go out with the next batch; arr is freed. */
static void send(struct target *t, cJSON *arr, const char *error)
{
	cJSON *rec;

	if (!arr)
		return;
	if (!t->snap->out)
		t->snap->out = cJSON_CreateArray();
	while ((rec = cJSON_DetachItemFromArray(arr, 0))) {
		if (error)
			cJSON_ReplaceItemInObjectCaseSensitive(rec, "error", cJSON_CreateString(error));
		cJSON_AddItemToArray(t->snap->out, rec);
		t->snap->counts.taken++;
	}
	cJSON_Delete(arr);
}

void snap_records__flush_held(struct target *t)
{
	send(t, t->snap->held, NULL);
	t->snap->held = NULL;
}

void snap_records__resolve_early(struct target *t)
{
	send(t, t->snap->early, t->snap->why[0] ? t->snap->why : NULL);
	t->snap->early = NULL;
}

void snap_records__drop(struct target *t, uint64_t span_id)
{
	struct snap_ctl *c = t->snap;
	cJSON *rec, *next;
	char id[24];

	if (c->held && c->held_epoch_id == span_id) {
		cJSON_Delete(c->held);
		c->held = NULL;
	}
	for (int i = 0; i < c->nbehind; i++)
		if (c->behind[i].span_id == span_id)
			c->behind[i--] = c->behind[--c->nbehind];
	snprintf(id, sizeof(id), "%" PRIu64, span_id);	/* as record_head wrote it: raw */
	for (rec = c->early ? c->early->child : NULL; rec; rec = next) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, "span_id");

		next = rec->next;
		if (cJSON_IsRaw(v) && !strcmp(v->valuestring, id))
			cJSON_Delete(cJSON_DetachItemViaPointer(c->early, rec));
	}
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
		snap_records__flush_held(t);
	if (!c->held)
		c->held = cJSON_CreateArray();
	c->held_epoch_id = span_id;
	cJSON_AddItemToArray(c->held, rec);
}

static cJSON *record_head(const struct snap_env *e, const struct target *t, uint64_t span_id,
			 long epoch)
{
	static const char *const mode[] = { "stats", "sampled", "full" };
	cJSON *rec = cJSON_CreateObject();

	json__add_u64(rec, "span_id", span_id);
	cJSON_AddNumberToObject(rec, "epoch", (double)epoch);
	json__add_u64(rec, "ts_ns", clock_map__now(&t->clock));	/* on its spans' clock */
	cJSON_AddStringToObject(rec, "mode", mode[e->opts->snapshots]);
	return rec;
}

/* A read's files lie under the directory of the epoch it was made for; when its values are
 * another epoch's (the state after that epoch's last step had not changed: the same read
 * serves both), the files are linked under that epoch's directory too, so that
 * snapshots/<span id>/ always holds the record's own files. */
static void files_for(const struct snap_env *e, cJSON *files, uint64_t span_id)
{
	char prefix[PATH_MAX], want[PATH_MAX], dir[PATH_MAX];
	cJSON *f;

	snprintf(prefix, sizeof(prefix), "%s/snapshots/", e->opts->path);
	cJSON_ArrayForEach(f, files) {
		const char *p = cJSON_GetStringValue(f), *rest;
		char *slash;
		int err;

		if (!p || strncmp(p, prefix, strlen(prefix)) != 0 ||
		    !(rest = strchr(p + strlen(prefix), '/')))
			continue;
		if (snprintf(want, sizeof(want), "%s%llu%s", prefix, (unsigned long long)span_id,
			     rest) >= (int)sizeof(want) || !strcmp(want, p))
			continue;
		memcpy(dir, want, sizeof(dir));
		if ((slash = strrchr(dir, '/')))
			*slash = 0;
		err = fs__mkdir_p(dir, 0755);
		if (!err && link(p, want) && errno != EEXIST)
			err = -errno;
		if (err) {
			elog("snapshots: %s: cannot link it as %s: %s", p, want, fs__strerror(err));
			continue;
		}
		cJSON_SetValuestring(f, want);
	}
}

const char snap_why_next_ended[] = "the next epoch ended before this one's state could be read";

/* [torn][looked] */
static const char *const behind_notes[2][2] = {
	{ "a later epoch ended before this one's state could be read: this is a later one, "
	  "the first read after",
	  "a later epoch ended before this one's state could be read (the first look for the "
	  "models and their layout ran as it ended): this is a later one, the first read after" },
	{ "every read made for it was torn (an update ran while it was read): this is a later "
	  "one, the first whole read after",
	  "every read made for it was torn (an update ran while it was read; the first look for "
	  "the models and their layout ran as it ended): this is a later one, the first whole "
	  "read after" },
};

static void from_read(const struct snap_env *e, struct target *t, uint64_t span_id,
		      long epoch, long last_step, const struct snap_read *rd, bool exact,
		      int attempts, const char *note)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, rd->records) {
		cJSON *rec = record_head(e, t, span_id, epoch), *it;

		cJSON_AddStringToObject(rec, "consistency", exact ? "exact" : "torn");
		if (!exact && rd->weights_exact)
			cJSON_AddBoolToObject(rec, "weights_exact", true);
		cJSON_AddNumberToObject(rec, "after_step", (double)rd->after_step);
		cJSON_AddNumberToObject(rec, "epoch_last_step", (double)last_step);
		cJSON_AddNumberToObject(rec, "attempts", attempts);
		if (note)
			cJSON_AddStringToObject(rec, "note", note);
		cJSON_ArrayForEach(it, m) {
			cJSON_AddItemToObject(rec, it->string, cJSON_Duplicate(it, true));
		}
		files_for(e, cJSON_GetObjectItemCaseSensitive(rec, "files"), span_id);
		cJSON_AddNumberToObject(rec, "bytes_read", (double)rd->bytes);
		cJSON_AddNumberToObject(rec, "duration_ms", rd->ms);
		add_record(t, span_id, rec);
	}
	set_model_attr(t, rd->model_attr);
}

void snap_records__from(const struct snap_env *e, struct target *t, uint64_t span_id,
			long epoch, long last_step, const struct snap_read *rd, bool exact,
			int attempts, const char *note)
{
	struct snap_ctl *c = t->snap;
	int left = 0;

	from_read(e, t, span_id, epoch, last_step, rd, exact, attempts, note);
	/* the epochs behind get this state: the first read after their ends, a later one */
	for (int i = 0; i < c->nbehind; i++) {
		const struct snap_behind *b = &c->behind[i];

		if (b->span_id == span_id)
			continue;
		if (rd->after_step <= b->last_step) {	/* not after its end: it waits on */
			c->behind[left++] = *b;
			continue;
		}
		from_read(e, t, b->span_id, b->epoch, b->last_step, rd, exact, 0,
			  behind_notes[b->torn][b->looked]);
	}
	c->nbehind = left;
}

void snap_records__behind_errors(const struct snap_env *e, struct target *t, const char *why)
{
	struct snap_ctl *c = t->snap;

	for (int i = 0; i < c->nbehind; i++)
		snap_records__error(e, t, c->behind[i].span_id, c->behind[i].epoch,
				    c->behind[i].last_step, c->why[0] ? c->why : why);
	c->nbehind = 0;
}

void snap_records__error(const struct snap_env *e, struct target *t, uint64_t span_id,
			 long epoch, long last_step, const char *why)
{
	cJSON *rec = record_head(e, t, span_id, epoch);

	cJSON_AddNumberToObject(rec, "epoch_last_step", (double)last_step);
	cJSON_AddStringToObject(rec, "error", why);
	cJSON_AddNumberToObject(rec, "bytes_read", 0);
	cJSON_AddNumberToObject(rec, "duration_ms", 0);
	if (!t->snap->found_ns && t->snap->models != SNAP_MODELS_REFUSED) {	/* before the first look came back */
		if (!t->snap->early)
			t->snap->early = cJSON_CreateArray();
		cJSON_AddItemToArray(t->snap->early, rec);
		if (cJSON_GetArraySize(t->snap->early) >= EARLY_MAX)
			snap_records__resolve_early(t);
		return;
	}
	add_record(t, span_id, rec);
}

void snap_records__settle(const struct snap_env *e, struct target *t, const char *why_none)
{
	struct snap_ctl *c = t->snap;
	struct snap_pending *p = &c->pend;

	if (p->state != SNAP_PEND_WAITING)
		return;
	p->state = SNAP_PEND_NONE;
	if (c->models == SNAP_MODELS_FOUND || c->models == SNAP_MODELS_STALE)	/* look again
		 * (new models, wrappers), now that the next end is far, if it is time */
		c->models = clock__mono_ns() >= c->look_after_ns ? SNAP_MODELS_STALE
								 : SNAP_MODELS_FOUND;
	switch (snap_plan__settle(&c->cand, p->end_seq, p->last_step, &p->kept, &p->torn)) {
	case SNAP_SETTLE_FRESH:
		snap_records__from(e, t, p->span_id, p->epoch, p->last_step, &c->cand, true,
				   p->attempts ? p->attempts : 1, NULL);
		break;
	case SNAP_SETTLE_KEPT:
		snap_records__from(e, t, p->span_id, p->epoch, p->last_step, &p->kept,
				   p->kept.exact, p->attempts + 1, p->kept_note);
		break;
	case SNAP_SETTLE_TORN:
		snap_records__from(e, t, p->span_id, p->epoch, p->last_step, &p->torn, false,
				   p->attempts, "every read was torn: an update began before it "
				   "ended");
		break;
	case SNAP_SETTLE_NONE:
		/* a later epoch's end, or reads all torn (why_none NULL): the next whole read,
		 * where there is room */
		if ((why_none == snap_why_next_ended || !why_none) && !c->why[0] &&
		    c->models != SNAP_MODELS_REFUSED && c->nbehind < SNAP_BEHIND_MAX) {
			c->behind[c->nbehind++] = (struct snap_behind){
				p->span_id, p->epoch, p->last_step, p->looked, !why_none };
			break;
		}
		snap_records__error(e, t, p->span_id, p->epoch, p->last_step,
				    c->why[0] ? c->why : why_none ? why_none : "every read made "
				    "for it was torn (an update ran while it was read)");
		break;
	}
	snap_read__free(&p->torn);
	snap_read__free(&p->kept);
}
