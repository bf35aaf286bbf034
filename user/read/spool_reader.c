// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A batch file's text checked whole, merged into its session (a later copy of a span replaces
// an earlier one), then each session's spans linked into a tree (spool_reader.h). Reading
// the directory is spool_dir.c.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/spool_reader.h"
#include "tree/session.h"

/* The arrays here hold pointers; sizeof(struct x *) reads as a bug to clang-tidy. */
#define PTR_SIZE sizeof(void *)

/*
 * cJSON keeps numbers as doubles only, so ns timestamps (~1.8e18) come back rounded to a
 * multiple of 256 ns. That is fine for ordering and wall times; durations stay exact because
 * they are taken from duration_ns (small enough for a double): end_ns = start_ns + duration_ns.
 */
static bool num_u64(const cJSON *v, uint64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= 0 && d < 18446744073709551616.0) || (double)(uint64_t)d != d)
		return false;
	*out = (uint64_t)d;
	return true;
}

static bool get_u64(const cJSON *o, const char *key, uint64_t *out)
{
	return num_u64(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

/* A number, or null (*out = 0). */
static bool get_u64_or_null(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = 0;
	return cJSON_IsNull(v) || num_u64(v, out);
}

static bool get_long(const cJSON *o, const char *key, long *out)
{
	uint64_t v;

	if (!get_u64(o, key, &v) || v > (uint64_t)LONG_MAX)
		return false;
	*out = (long)v;
	return true;
}

static const char *get_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Fills sp from one span object (attrs, marks and name still point into js). Returns the
 * first bad field's name, or NULL. */
static const char *read_span(const cJSON *js, struct span *sp)
{
	uint64_t index, dur;
	const char *status;

	memset(sp, 0, sizeof(*sp));
	if (!cJSON_IsObject(js))
		return "span";
	if (!get_u64(js, "span_id", &sp->id) || !sp->id)
		return "span_id";
	if (!get_u64_or_null(js, "parent_id", &sp->parent_id))
		return "parent_id";
	sp->name = (char *)get_str(js, "name");
	if (!sp->name || !*sp->name)
		return "name";
	if (!get_u64_or_null(js, "index", &index) || index > (uint64_t)LONG_MAX)
		return "index";
	sp->index = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(js, "index")) ? -1 : (long)index;
	if (!get_u64(js, "start_ns", &sp->start_ns))
		return "start_ns";
	if (!get_u64_or_null(js, "end_ns", &sp->end_ns))
		return "end_ns";
	if (sp->end_ns && get_u64(js, "duration_ns", &dur))
		sp->end_ns = sp->start_ns + dur;	/* exact, see num_u64 */
	status = get_str(js, "status");
	if (!status)
		return "status";
	if (!strcmp(status, "ok"))
		sp->status = SPAN_OK;
	else if (!strcmp(status, "open"))
		sp->status = SPAN_OPEN;
	else if (!strcmp(status, "incomplete"))
		sp->status = SPAN_INCOMPLETE;
	else
		return "status";
	sp->attrs = cJSON_GetObjectItemCaseSensitive(js, "attrs");
	if (!cJSON_IsObject(sp->attrs))
		return "attrs";
	sp->marks = cJSON_GetObjectItemCaseSensitive(js, "marks");
	if (!cJSON_IsArray(sp->marks))
		return "marks";
	return NULL;
}

/* The batch's envelope; *spans and *health point into b. Returns a bad field or NULL. */
static const char *read_batch(const cJSON *b, struct rsession *meta, uint64_t *seq,
			      const cJSON **spans, const cJSON **health)
{
	const char *format = get_str(b, "format");
	const cJSON *final = cJSON_GetObjectItemCaseSensitive(b, "final");

	if (!format)
		return "format";
	meta->id = (char *)get_str(b, "session_id");
	if (!meta->id)
		return "session_id";
	if (!get_long(b, "pid", &meta->pid))
		return "pid";
	if (!get_long(b, "rank", &meta->rank))
		return "rank";
	if (!get_long(b, "local_rank", &meta->local_rank))
		return "local_rank";
	if (!get_long(b, "world_size", &meta->world_size))
		return "world_size";
	meta->host = (char *)get_str(b, "host");
	if (!meta->host)
		return "host";
	if (!get_u64(b, "seq", seq))
		return "seq";
	if (!get_u64(b, "written_ns", &meta->written_ns))
		return "written_ns";
	if (!cJSON_IsBool(final))
		return "final";
	meta->final = cJSON_IsTrue(final);
	*spans = cJSON_GetObjectItemCaseSensitive(b, "spans");
	if (!cJSON_IsArray(*spans))
		return "spans";
	*health = cJSON_GetObjectItemCaseSensitive(b, "health");
	if (!cJSON_IsObject(*health))
		return "health";
	return NULL;
}

bool spool_view__batch_name(const char *name, size_t *id_len, uint64_t *seq)
{
	size_t len = strlen(name);
	const char *d;

	if (len < 1 + 1 + 8 + 5 || strcmp(name + len - 5, ".json") != 0)
		return false;
	d = name + len - 5 - 8;
	if (d[-1] != '.' || strspn(d, "0123456789") != 8)
		return false;
	*seq = strtoull(d, NULL, 10);
	*id_len = (size_t)(d - 1 - name);
	return true;
}

static size_t hash_slot(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static struct rspan *lookup(const struct rsession *s, uint64_t id)
{
	size_t i;

	if (!s->table_cap)
		return NULL;
	for (i = hash_slot(id, s->table_cap); s->table[i]; i = (i + 1) & (s->table_cap - 1))
		if (s->table[i]->sp.id == id)
			return s->table[i];
	return NULL;
}

static void table_put(struct rspan **table, size_t cap, struct rspan *r)
{
	size_t i = hash_slot(r->sp.id, cap);

	while (table[i])
		i = (i + 1) & (cap - 1);
	table[i] = r;
}

/* Doubles an array of span pointers. */
static int grow(struct rspan ***a, size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 8;
	struct rspan **b = reallocarray(*a, n, PTR_SIZE);

	if (!b)
		return -ENOMEM;
	*a = b;
	*cap = n;
	return 0;
}

/* Keeps the table at most half full and the array big enough for one more span. */
static int reserve(struct rsession *s)
{
	if (s->nspans == s->spans_cap && grow(&s->spans, &s->spans_cap))
		return -ENOMEM;
	if ((s->nspans + 1) * 2 > s->table_cap) {
		size_t cap = s->table_cap ? s->table_cap * 2 : 128;
		struct rspan **t = calloc(cap, PTR_SIZE);

		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < s->nspans; i++)
			table_put(t, cap, s->spans[i]);
		free(s->table);
		s->table = t;
		s->table_cap = cap;
	}
	return 0;
}

static void clear_span(struct rspan *r)
{
	free(r->sp.name);
	cJSON_Delete(r->sp.attrs);
	cJSON_Delete(r->sp.marks);
}

/* Takes attrs and marks out of js: the parsed batch is freed right after. */
static int merge_span(struct rsession *s, cJSON *js, const struct span *in, uint64_t seq)
{
	struct rspan *r = lookup(s, in->id);
	char *name;

	if (r && r->seq > seq)
		return 0;	/* an older copy than the one we have */
	name = strdup(in->name);
	if (!name)
		return -ENOMEM;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || reserve(s)) {
			free(r);
			free(name);
			return -ENOMEM;
		}
		r->sp.id = in->id;
		s->spans[s->nspans++] = r;
		table_put(s->table, s->table_cap, r);
	} else {
		clear_span(r);
	}
	r->sp = *in;
	r->sp.name = name;
	r->sp.attrs = cJSON_DetachItemFromObjectCaseSensitive(js, "attrs");
	r->sp.marks = cJSON_DetachItemFromObjectCaseSensitive(js, "marks");
	r->seq = seq;
	if (!s->start_ns || in->start_ns < s->start_ns)
		s->start_ns = in->start_ns;
	return 0;
}

static struct rsession *get_session(struct spool_view *v, const struct rsession *meta)
{
	struct rsession *s, **a;

	for (size_t i = 0; i < v->nsessions; i++)
		if (!strcmp(v->sessions[i]->id, meta->id))
			return v->sessions[i];
	a = reallocarray(v->sessions, v->nsessions + 1, PTR_SIZE);
	if (!a)
		return NULL;
	v->sessions = a;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	*s = (struct rsession){ .id = strdup(meta->id), .host = strdup(meta->host),
				.pid = meta->pid, .rank = meta->rank,
				.local_rank = meta->local_rank, .world_size = meta->world_size };
	if (!s->id || !s->host) {
		free(s->id);
		free(s->host);
		free(s);
		return NULL;
	}
	v->sessions[v->nsessions++] = s;
	return s;
}

/* A --sys-interval sample: kept if it is the oldest or newest so far; maxima. */
static int merge_sys(struct rsession *s, const cJSON *js)
{
	uint64_t ts, first = 0, last = 0, v;

	if (!cJSON_IsObject(js) || !get_u64(js, "ts_ns", &ts))
		return 0;
	s->nsys++;
	if (get_u64(js, "rss_bytes", &v) && (double)v > s->sys_rss_max)
		s->sys_rss_max = (double)v;
	if (get_u64(js, "threads", &v) && (double)v > s->sys_threads_max)
		s->sys_threads_max = (double)v;
	if (!s->sys_first || (get_u64(s->sys_first, "ts_ns", &first) && ts < first)) {
		cJSON_Delete(s->sys_first);
		if (!(s->sys_first = cJSON_Duplicate(js, true)))
			return -ENOMEM;
	}
	if (!s->sys_last || (get_u64(s->sys_last, "ts_ns", &last) && ts > last)) {
		cJSON_Delete(s->sys_last);
		if (!(s->sys_last = cJSON_Duplicate(js, true)))
			return -ENOMEM;
	}
	return 0;
}

static int merge_batch(struct spool_view *v, cJSON *b, const struct rsession *meta,
		       uint64_t seq, const cJSON *spans)
{
	struct rsession *s = get_session(v, meta);
	struct span in;
	cJSON *js;

	if (!s)
		return -ENOMEM;
	s->nfiles++;
	s->final |= meta->final;
	if (meta->written_ns > s->written_ns)
		s->written_ns = meta->written_ns;
	if (!s->health || seq >= s->last_seq) {
		cJSON_Delete(s->health);
		s->health = cJSON_DetachItemFromObjectCaseSensitive(b, "health");
		s->last_seq = seq;
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "hangs")) {
		if (!cJSON_IsObject(js))
			continue;
		if (!s->hangs && !(s->hangs = cJSON_CreateArray()))
			return -ENOMEM;
		cJSON_AddItemToArray(s->hangs, cJSON_Duplicate(js, true));
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "snapshots")) {
		if (!cJSON_IsObject(js))
			continue;
		if (!s->snapshots && !(s->snapshots = cJSON_CreateArray()))
			return -ENOMEM;
		cJSON_AddItemToArray(s->snapshots, cJSON_Duplicate(js, true));
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "sys")) {
		if (merge_sys(s, js))
			return -ENOMEM;
	}
	cJSON_ArrayForEach(js, spans) {
		if (read_span(js, &in))
			continue;	/* not reached: the caller checked every span */
		if (merge_span(s, js, &in, seq))
			return -ENOMEM;
	}
	return 0;
}

int spool_view__add_batch(struct spool_view *v, const char *name, const char *text,
			  char *why, size_t why_size)
{
	const cJSON *spans, *health, *js;
	struct rsession meta = {};
	const char *bad, *end = NULL, *format;
	size_t id_len, i = 0;
	uint64_t name_seq, seq;
	struct span in;
	cJSON *b;
	int err = -EINVAL;

	if (!spool_view__batch_name(name, &id_len, &name_seq)) {
		snprintf(why, why_size, "not a batch name (<session_id>.<8-digit seq>.json)");
		return -EINVAL;
	}
	if (!*text) {
		snprintf(why, why_size, "empty file");
		return -EINVAL;
	}
	b = cJSON_ParseWithOpts(text, &end, 0);
	if (!b) {
		end = cJSON_GetErrorPtr();
		snprintf(why, why_size, "not valid JSON (at byte %zu)",
			 end && end >= text ? (size_t)(end - text) : (size_t)0);
		return -EINVAL;
	}
	if (end[strspn(end, " \t\r\n")]) {
		snprintf(why, why_size, "text after the JSON value (at byte %zu)",
			 (size_t)(end - text));
		goto out;
	}
	if (!cJSON_IsObject(b)) {
		snprintf(why, why_size, "not a JSON object");
		goto out;
	}
	format = get_str(b, "format");
	if (format && strcmp(format, SPOOL_FORMAT) != 0) {
		snprintf(why, why_size, "format is '%.64s', not " SPOOL_FORMAT, format);
		goto out;
	}
	bad = read_batch(b, &meta, &seq, &spans, &health);
	if (bad) {
		snprintf(why, why_size, "missing or invalid '%s'", bad);
		goto out;
	}
	if (strlen(meta.id) != id_len || strncmp(meta.id, name, id_len) != 0 || seq != name_seq) {
		snprintf(why, why_size, "session_id or seq differs from the file name");
		goto out;
	}
	/* Check every span before merging any: a file is taken whole or not at all. */
	cJSON_ArrayForEach(js, spans) {
		bad = read_span(js, &in);
		if (bad) {
			snprintf(why, why_size, "span %zu: missing or invalid '%s'", i, bad);
			goto out;
		}
		i++;
	}
	err = merge_batch(v, b, &meta, seq, spans);
	if (err)
		snprintf(why, why_size, "%s", strerror(-err));
out:
	cJSON_Delete(b);
	return err;
}

static int add_kid(struct rspan *parent, struct rspan *kid)
{
	if (parent->nkids == parent->kids_cap && grow(&parent->kids, &parent->kids_cap))
		return -ENOMEM;
	parent->kids[parent->nkids++] = kid;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = &(*(struct rspan *const *)a)->sp;
	const struct span *y = &(*(struct rspan *const *)b)->sp;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int newest_first(const void *a, const void *b)
{
	const struct rsession *x = *(struct rsession *const *)a, *y = *(struct rsession *const *)b;

	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Corrupt parent links can form a loop (a is b's parent, b is a's), which no top reaches:
 * the walk up from each span, marked with its number, cuts a loop where it meets its own
 * mark, and that span is shown at the top. Each span is walked over once. */
static void cut_loops(struct rsession *s)
{
	struct rspan *p;

	for (size_t i = 0; i < s->nspans; i++) {
		for (p = s->spans[i]; p && !p->walk; p = p->parent)
			p->walk = i + 1;
		if (p && p->walk == i + 1)
			p->parent = NULL;
	}
}

static int build_session(struct rsession *s)
{
	struct rspan *r;

	s->tops = calloc(s->nspans ? s->nspans : 1, PTR_SIZE);
	if (!s->tops)
		return -ENOMEM;
	for (size_t i = 0; i < s->nspans; i++) {
		r = s->spans[i];
		r->parent = r->sp.parent_id ? lookup(s, r->sp.parent_id) : NULL;
	}
	cut_loops(s);
	for (size_t i = 0; i < s->nspans; i++) {
		r = s->spans[i];
		if (!r->parent)
			s->tops[s->ntops++] = r;
		else if (add_kid(r->parent, r))
			return -ENOMEM;
	}
	if (s->ntops > 1)
		qsort(s->tops, s->ntops, PTR_SIZE, by_start);
	for (size_t i = 0; i < s->nspans; i++)
		if (s->spans[i]->nkids > 1)
			qsort(s->spans[i]->kids, s->spans[i]->nkids, PTR_SIZE, by_start);
	return 0;
}

int spool_view__build(struct spool_view *v)
{
	for (size_t i = 0; i < v->nsessions; i++)
		if (build_session(v->sessions[i]))
			return -ENOMEM;
	if (v->nsessions > 1)
		qsort(v->sessions, v->nsessions, PTR_SIZE, newest_first);
	return 0;
}

void spool_view__free(struct spool_view *v)
{
	for (size_t i = 0; i < v->nsessions; i++) {
		struct rsession *s = v->sessions[i];

		for (size_t j = 0; j < s->nspans; j++) {
			clear_span(s->spans[j]);
			free(s->spans[j]->kids);
			free(s->spans[j]);
		}
		free(s->spans);
		free(s->table);
		free(s->tops);
		cJSON_Delete(s->health);
		cJSON_Delete(s->hangs);
		cJSON_Delete(s->snapshots);
		cJSON_Delete(s->sys_first);
		cJSON_Delete(s->sys_last);
		free(s->id);
		free(s->host);
		free(s);
	}
	free(v->sessions);
	*v = (struct spool_view){};
}
