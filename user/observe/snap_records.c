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
#include "observe/snap_internal.h"

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
	if (!t->snapshots)
		t->snapshots = cJSON_CreateArray();
	while ((rec = cJSON_DetachItemFromArray(arr, 0))) {
		if (error)
			cJSON_ReplaceItemInObjectCaseSensitive(rec, "error", cJSON_CreateString(error));
		cJSON_AddItemToArray(t->snapshots, rec);
		t->snapshots_taken++;
	}
	cJSON_Delete(arr);
}

void snap__flush_held(struct target *t)
{
	send(t, t->snap->held, NULL);
	t->snap->held = NULL;
}

void snap__resolve_early(struct target *t)
{
	send(t, t->snap->early, t->snap->why[0] ? t->snap->why : NULL);
	t->snap->early = NULL;
}

void snap__drop_records(struct target *t, uint64_t span_id)
{
	struct snap_ctl *c = t->snap;
	cJSON *rec, *next;
	char id[24];

	if (c->held && c->held_epoch_id == span_id) {
		cJSON_Delete(c->held);
		c->held = NULL;
	}
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
		snap__flush_held(t);
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

/* A read's files lie under the directory of the epoch it was made for; when its values are
 * another epoch's (the state after that epoch's last step had not changed: the same read
 * serves both), the files are linked under that epoch's directory too, so that
 * snapshots/<span id>/ always holds the record's own files. */
static void files_for(const struct observer *o, cJSON *files, uint64_t span_id)
{
	char prefix[PATH_MAX], want[PATH_MAX], dir[PATH_MAX];
	cJSON *f;

	snprintf(prefix, sizeof(prefix), "%s/snapshots/", o->opts->path);
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

/* An epoch's records from a read: one per model. */
void snap__records_from(struct observer *o, struct target *t, uint64_t span_id, long epoch,
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
		files_for(o, cJSON_GetObjectItemCaseSensitive(rec, "files"), span_id);
		cJSON_AddNumberToObject(rec, "bytes_read", (double)rd->bytes);
		cJSON_AddNumberToObject(rec, "duration_ms", rd->ms);
		add_record(t, span_id, rec);
	}
	set_model_attr(t, rd->model_attr);
}

void snap__error_record(struct observer *o, struct target *t, uint64_t span_id, long epoch,
			 long last_step, const char *why)
{
	cJSON *rec = record_head(o, span_id, epoch);

	cJSON_AddNumberToObject(rec, "epoch_last_step", (double)last_step);
	cJSON_AddStringToObject(rec, "error", why);
	cJSON_AddNumberToObject(rec, "bytes_read", 0);
	cJSON_AddNumberToObject(rec, "duration_ms", 0);
	if (!t->snap->found_ns && !t->snap_refused) {	/* before the first look came back */
		if (!t->snap->early)
			t->snap->early = cJSON_CreateArray();
		cJSON_AddItemToArray(t->snap->early, rec);
		if (cJSON_GetArraySize(t->snap->early) >= EARLY_MAX)
			snap__resolve_early(t);
		return;
	}
	add_record(t, span_id, rec);
}

/* The waiting epoch's record, from what there is: the kept read of its end's state, the
 * last torn one, or why there is none. */
void snap__settle(struct observer *o, struct target *t, const char *why_none)
{
	struct snap_ctl *c = t->snap;

	if (!c->pend.want)
		return;
	c->pend.want = false;
	c->refresh = c->found && clock__mono_ns() >= c->find_after_ns;
	if (c->cand.valid && c->cand.seq == c->pend.end_seq && c->cand.fresh)
		snap__records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step, &c->cand,
			     true, c->pend.attempts ? c->pend.attempts : 1, NULL);
	else if (c->pend.kept.valid)
		snap__records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     &c->pend.kept, true, c->pend.attempts + 1, c->pend.kept_note);
	else if (c->pend.torn.valid)
		snap__records_from(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     &c->pend.torn, false, c->pend.attempts, "every read was torn: an "
			     "update began before it ended");
	else
		snap__error_record(o, t, c->pend.span_id, c->pend.epoch, c->pend.last_step,
			     c->why[0] ? c->why : why_none);
	snap_read__free(&c->pend.torn);
	snap_read__free(&c->pend.kept);
}
