// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A batch file's text checked whole (batch.h): the envelope, then every span, before any of
// it is used.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/batch.h"
#include "read/batch_arena.h"
#include "tree/session.h"

/*
 * cJSON keeps numbers as doubles only, so ns timestamps (~1.8e18) come back rounded to a
 * multiple of 256 ns. That is fine for ordering and wall times; durations stay exact because
 * they are taken from duration_ns (small enough for a double): end_ns = start_ns + duration_ns.
 */
static bool num_u64(const cJSON *v, uint64_t *out)
{
	double d;

	if (!v || !cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= 0 && d < 18446744073709551616.0) || (double)(uint64_t)d != d)
		return false;
	*out = (uint64_t)d;
	return true;
}

bool batch__u64(const cJSON *o, const char *key, uint64_t *out)
{
	return num_u64(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

static bool get_long(const cJSON *o, const char *key, long *out)
{
	uint64_t v;

	if (!batch__u64(o, key, &v) || v > (uint64_t)LONG_MAX)
		return false;
	*out = (long)v;
	return true;
}

static const char *get_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One walk over a span's keys (a lookup per key would walk them again for each). */
const char *batch__span(const cJSON *js, struct span *sp)
{
	const cJSON *id = NULL, *parent = NULL, *name = NULL, *idx = NULL, *start = NULL,
		    *end = NULL, *dur = NULL, *status = NULL, *attrs = NULL, *marks = NULL, *k;
	uint64_t index = 0, d;
	const char *st;

	memset(sp, 0, sizeof(*sp));
	if (!cJSON_IsObject(js))
		return "span";
	static const char *const keys[] = { "span_id", "parent_id", "name", "index", "start_ns",
					    "end_ns", "duration_ns", "status", "attrs", "marks" };
	const cJSON **vars[] = { &id, &parent, &name, &idx, &start, &end, &dur, &status, &attrs,
				 &marks };
	size_t next = 0;

	for (k = js->child; k; k = k->next) {
		const char *key = k->string;
		size_t i;

		if (!key)
			continue;
		/* the writer's order first: one comparison a key */
		if (next < 10 && !strcmp(key, keys[next])) {
			i = next++;
		} else {
			for (i = 0; i < 10 && strcmp(key, keys[i]) != 0; i++)
				;
			if (i == 10)
				continue;
		}
		if (!*vars[i])	/* the first of a repeated key, as cJSON_GetObjectItem finds */
			*vars[i] = k;
	}
	if (!num_u64(id, &sp->id) || !sp->id)
		return "span_id";
	if (!cJSON_IsNull(parent) && !num_u64(parent, &sp->parent_id))
		return "parent_id";
	if (!cJSON_IsString(name) || !*name->valuestring)
		return "name";
	sp->name = name->valuestring;
	if (!(cJSON_IsNull(idx) || num_u64(idx, &index)) ||
	    (!cJSON_IsNull(idx) && index > (uint64_t)LONG_MAX))
		return "index";
	sp->index = cJSON_IsNull(idx) ? -1 : (long)index;
	if (!num_u64(start, &sp->start_ns))
		return "start_ns";
	if (!cJSON_IsNull(end) && !num_u64(end, &sp->end_ns))
		return "end_ns";
	if (sp->end_ns && num_u64(dur, &d))
		sp->end_ns = sp->start_ns + d;	/* exact, see num_u64 */
	if (!cJSON_IsString(status))
		return "status";
	st = status->valuestring;
	if (!strcmp(st, "ok"))
		sp->status = SPAN_OK;
	else if (!strcmp(st, "open"))
		sp->status = SPAN_OPEN;
	else if (!strcmp(st, "incomplete"))
		sp->status = SPAN_INCOMPLETE;
	else
		return "status";
	if (!cJSON_IsObject(attrs))
		return "attrs";
	sp->attrs = (cJSON *)attrs;
	if (!cJSON_IsArray(marks))
		return "marks";
	sp->marks = (cJSON *)marks;
	return NULL;
}

/* The envelope. Returns a bad field or NULL. */
static const char *read_envelope(struct batch *b)
{
	const cJSON *j = b->json, *final = cJSON_GetObjectItemCaseSensitive(j, "final");

	if (!get_str(j, "format"))
		return "format";
	if (!(b->id = get_str(j, "session_id")))
		return "session_id";
	if (!get_long(j, "pid", &b->pid))
		return "pid";
	if (!get_long(j, "rank", &b->rank))
		return "rank";
	if (!get_long(j, "local_rank", &b->local_rank))
		return "local_rank";
	if (!get_long(j, "world_size", &b->world_size))
		return "world_size";
	if (!(b->host = get_str(j, "host")))
		return "host";
	if (!batch__u64(j, "seq", &b->seq))
		return "seq";
	if (!batch__u64(j, "written_ns", &b->written_ns))
		return "written_ns";
	if (!cJSON_IsBool(final))
		return "final";
	b->final = cJSON_IsTrue(final);
	b->all_open = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "all_open"));
	b->spans = cJSON_GetObjectItemCaseSensitive(j, "spans");
	if (!cJSON_IsArray(b->spans))
		return "spans";
	b->health = cJSON_GetObjectItemCaseSensitive(j, "health");
	if (!cJSON_IsObject(b->health))
		return "health";
	b->hangs = cJSON_GetObjectItemCaseSensitive(j, "hangs");
	b->sys = cJSON_GetObjectItemCaseSensitive(j, "sys");
	b->snapshots = cJSON_GetObjectItemCaseSensitive(j, "snapshots");
	b->hang_batches = cJSON_GetObjectItemCaseSensitive(j, "hang_batches");
	return NULL;
}

/* The spans' array of one batch at a time is kept for the next (a fresh one costs a page
 * fault per 4 KiB); another batch alive at once gets its own. */
static struct {
	struct span *a;
	size_t cap;
	bool busy;
} spans_cache;

static struct span *spans_get(size_t n)
{
	if (spans_cache.busy)
		return malloc(n * sizeof(struct span));
	if (n > spans_cache.cap) {
		struct span *a = reallocarray(spans_cache.a, n, sizeof(*a));

		if (!a)
			return NULL;
		spans_cache.a = a;
		spans_cache.cap = n;
	}
	spans_cache.busy = true;
	return spans_cache.a;
}

static void spans_put(struct span *a)
{
	if (a && a == spans_cache.a)
		spans_cache.busy = false;
	else
		free(a);
}

bool batch__name(const char *name, size_t *id_len, uint64_t *seq)
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

int batch__parse(struct batch *b, const char *name, const char *text, char *why,
		 size_t why_size)
{
	const char *bad, *end = NULL, *format;
	const cJSON *js;
	uint64_t name_seq;
	size_t id_len, i = 0;

	*b = (struct batch){};
	if (!batch__name(name, &id_len, &name_seq)) {
		snprintf(why, why_size, "not a batch name (<session_id>.<8-digit seq>.json)");
		return -EINVAL;
	}
	if (!*text) {
		snprintf(why, why_size, "empty file");
		return -EINVAL;
	}
	b->json = batch_arena__parse(text, &end, &b->in_arena);
	if (!b->json) {
		end = cJSON_GetErrorPtr();
		snprintf(why, why_size, "not valid JSON (at byte %zu)",
			 end && end >= text ? (size_t)(end - text) : (size_t)0);
		return -EINVAL;
	}
	if (end[strspn(end, " \t\r\n")]) {
		snprintf(why, why_size, "text after the JSON value (at byte %zu)",
			 (size_t)(end - text));
		goto bad;
	}
	if (!cJSON_IsObject(b->json)) {
		snprintf(why, why_size, "not a JSON object");
		goto bad;
	}
	format = get_str(b->json, "format");
	if (format && strcmp(format, SPOOL_FORMAT) != 0) {
		snprintf(why, why_size, "format is '%.64s', not " SPOOL_FORMAT, format);
		goto bad;
	}
	bad = read_envelope(b);
	if (bad) {
		snprintf(why, why_size, "missing or invalid '%s'", bad);
		goto bad;
	}
	if (strlen(b->id) != id_len || strncmp(b->id, name, id_len) != 0 || b->seq != name_seq) {
		snprintf(why, why_size, "session_id or seq differs from the file name");
		goto bad;
	}
	b->nsp = (size_t)cJSON_GetArraySize(b->spans);
	b->sp = b->nsp ? spans_get(b->nsp) : NULL;
	if (b->nsp && !b->sp) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		goto bad;
	}
	cJSON_ArrayForEach(js, b->spans) {
		bad = batch__span(js, &b->sp[i]);
		if (bad) {
			snprintf(why, why_size, "span %zu: missing or invalid '%s'", i, bad);
			goto bad;
		}
		i++;
	}
	return 0;
bad:
	batch__free(b);
	return -EINVAL;
}

void batch__free(struct batch *b)
{
	spans_put(b->sp);
	if (b->json && b->in_arena)
		batch_arena__release(b->json);
	else
		cJSON_Delete(b->json);
	*b = (struct batch){};
}
