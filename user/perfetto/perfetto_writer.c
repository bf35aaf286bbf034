// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The streaming writer (perfetto.h): one process track per session; each batch file is
// checked whole, then its closed spans are written at once and its open ones held
// (perfetto_pending.c) until a later batch closes them.
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "perfetto/perfetto_internal.h"
#include "tree/session.h"

#define SYNTH_PID_BASE 0x40000000	/* above any pid_max: for a pid seen twice */

struct pf_writer *pf_writer__new(FILE *f, uint64_t base_ns)
{
	struct pf_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->base_ns = base_ns;
	w->first = true;
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
	return w;
}

static void end_session(struct pf_writer *w)
{
	if (!w->in_session)
		return;
	/* Spans still open: drawn up to the newest batch (consumers sort by time). */
	for (size_t i = 0; i < w->cap; i++) {
		if (!w->tab[i].span)
			continue;
		pf_writer__emit_span(w, w->tab[i].span, w->last_ns);
		cJSON_Delete(w->tab[i].span);
		w->tab[i].span = NULL;
	}
	w->n = 0;
	w->in_session = false;
	cJSON_Delete(w->sys_prev);
	w->sys_prev = NULL;
}

void pf_writer__session(struct pf_writer *w, const char *id, const char *host, long pid,
			long rank)
{
	char name[256];
	long *pids;

	end_session(w);
	w->in_session = true;
	w->last_ns = 0;
	w->pid = pid;
	for (size_t i = 0; i < w->npids; i++)
		if (w->pids[i] == w->pid) {	/* the same pid traced again, or on another host */
			w->pid = SYNTH_PID_BASE + (long)w->npids;
			i = (size_t)-1;
		}
	pids = reallocarray(w->pids, w->npids + 1, sizeof(*pids));
	if (pids) {
		w->pids = pids;
		w->pids[w->npids++] = w->pid;
	}
	snprintf(name, sizeof(name), "rank %ld (%s, %ld)", rank, host, pid);
	pf_writer__emit_meta(w, "process_name", "name", cJSON_CreateString(name));
	pf_writer__emit_meta(w, "process_sort_index", "sort_index",
			     cJSON_CreateNumber((double)rank));
	pf_writer__emit_meta(w, "process_labels", "labels", cJSON_CreateString(id));
	pf_writer__emit_meta(w, "thread_name", "name", cJSON_CreateString("training"));
}

/* A span object of the spool format, exact ids and times; the first bad field or NULL. */
/* A span's fields, found in one walk over its keys (a lookup per field walked them all,
 * comparing names: a fifth of the export's time); the first of a key, as cJSON finds it. */
struct span_fields {
	const cJSON *name, *status, *span_id, *parent_id, *start, *end, *dur, *attrs, *marks;
};

static void take(const cJSON **slot, const cJSON *c, const char *key)
{
	if (!*slot && !strcmp(c->string, key))
		*slot = c;
}

static void fields_of(const cJSON *js, struct span_fields *f)
{
	memset(f, 0, sizeof(*f));
	for (const cJSON *c = js->child; c; c = c->next) {
		if (!c->string)
			continue;
		switch (c->string[0]) {
		case 'n':
			take(&f->name, c, "name");
			break;
		case 's':
			take(&f->status, c, "status");
			take(&f->span_id, c, "span_id");
			take(&f->start, c, "start_ns");
			break;
		case 'p':
			take(&f->parent_id, c, "parent_id");
			break;
		case 'e':
			take(&f->end, c, "end_ns");
			break;
		case 'd':
			take(&f->dur, c, "duration_ns");
			break;
		case 'a':
			take(&f->attrs, c, "attrs");
			break;
		case 'm':
			take(&f->marks, c, "marks");
			break;
		default:
			break;
		}
	}
}

static const char *check_span(const cJSON *js, uint64_t *id, uint64_t *end)
{
	struct span_fields f;
	uint64_t start, dur, parent;

	if (!cJSON_IsObject(js))
		return "span";
	fields_of(js, &f);
	if (!pf_exact__u64(f.span_id, id) || !*id)
		return "span_id";
	if (!cJSON_IsNull(f.parent_id) && !pf_exact__u64(f.parent_id, &parent))
		return "parent_id";
	if (!f.name || !cJSON_IsString(f.name) || !*f.name->valuestring)
		return "name";
	if (!pf_exact__u64(f.start, &start))
		return "start_ns";
	*end = 0;
	if (!cJSON_IsNull(f.end) && !pf_exact__u64(f.end, end))
		return "end_ns";
	if (*end && pf_exact__u64(f.dur, &dur) && dur <= UINT64_MAX - start)
		*end = start + dur;
	if (!f.status || !cJSON_IsString(f.status) || (strcmp(f.status->valuestring, "ok") != 0 &&
					  strcmp(f.status->valuestring, "open") != 0 &&
					  strcmp(f.status->valuestring, "incomplete") != 0))
		return "status";
	if (!strcmp(f.status->valuestring, "open"))
		*end = 0;
	if (!cJSON_IsObject(f.attrs))
		return "attrs";
	if (!cJSON_IsArray(f.marks))
		return "marks";
	return NULL;
}

int pf_writer__batch(struct pf_writer *w, const char *text, char *why, size_t why_size)
{
	const cJSON *format, *spans, *js;
	cJSON *b = pf_exact__parse(text, why, why_size), *next;
	uint64_t written, id, end;
	const char *bad;
	size_t i = 0;

	if (!b)
		return -EINVAL;
	format = cJSON_GetObjectItemCaseSensitive(b, "format");
	spans = cJSON_GetObjectItemCaseSensitive(b, "spans");
	if (!cJSON_IsString(format) || strcmp(format->valuestring, SPOOL_FORMAT) != 0) {
		snprintf(why, why_size, "format is not " SPOOL_FORMAT);
		goto bad;
	}
	if (!pf_exact__get(b, "written_ns", &written)) {
		snprintf(why, why_size, "missing or invalid 'written_ns'");
		goto bad;
	}
	if (!cJSON_IsArray(spans)) {
		snprintf(why, why_size, "missing or invalid 'spans'");
		goto bad;
	}
	cJSON_ArrayForEach(js, spans) {
		bad = check_span(js, &id, &end);
		if (bad) {
			snprintf(why, why_size, "span %zu: missing or invalid '%s'", i, bad);
			goto bad;
		}
		i++;
	}
	if (written > w->last_ns)
		w->last_ns = written;
	for (cJSON *s = spans->child; s; s = next) {
		next = s->next;
		check_span(s, &id, &end);
		if (end) {
			if (end > w->last_ns)
				w->last_ns = end;
			pf_pending__drop(w, id);
			pf_writer__emit_span(w, s, end);
		} else if (pf_pending__put(w, id, cJSON_DetachItemViaPointer((cJSON *)spans, s))) {
			snprintf(why, why_size, "%s", strerror(ENOMEM));
			cJSON_Delete(b);
			return -ENOMEM;
		}
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "hangs")) {
		pf_writer__emit_hang(w, js);
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "sys")) {
		pf_writer__emit_sys(w, js);
	}
	cJSON_Delete(b);
	return 0;
bad:
	cJSON_Delete(b);
	return -EINVAL;
}

int pf_writer__finish(struct pf_writer *w)
{
	int err;

	end_session(w);
	/* The base in wall time, so a timeline can be lined up with other clocks. */
	fprintf(w->f, "\n],\"metadata\":{\"cirron_base_unix_ns\":\"%" PRIu64 "\"}}\n",
		w->base_ns);
	err = ferror(w->f) ? -EIO : 0;
	free(w->tab);
	free(w->pids);
	sbuf__free(&w->line);
	free(w);
	return err;
}
