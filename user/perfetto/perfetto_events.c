// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the writer writes, as Chrome Trace Event JSON on the session's track: spans as
// complete ("X") events, marks as counters (or instants), hangs as instant events, and
// --sys-interval samples as counter tracks.
#include <string.h>
#include "perfetto/perfetto_internal.h"

/*
 * Trace times are in us, as doubles, and consumers nest events by comparing ts + dur: decimal
 * fractions would round (a child ending where its parent ends can seem to end after it).
 * So times are whole 1/1024 us (~1 ns) steps from base, rounded down, which doubles hold and
 * add exactly: a child stays inside its parent and siblings that touch do not overlap.
 */
static uint64_t q1024(const struct pf_writer *w, uint64_t ns)
{
	return ns > w->base_ns ? (ns - w->base_ns) / 125 * 128 + (ns - w->base_ns) % 125 * 128 / 125
			       : 0;
}

static double us(const struct pf_writer *w, uint64_t ns)
{
	return (double)q1024(w, ns) / 1024.0;
}

static void emit(struct pf_writer *w, cJSON *ev)
{
	char *text = ev ? cJSON_PrintUnformatted(ev) : NULL;

	if (text) {
		fputs(w->first ? "\n" : ",\n", w->f);
		fputs(text, w->f);
		w->first = false;
	}
	cJSON_free(text);
	cJSON_Delete(ev);
}

static cJSON *event(const struct pf_writer *w, const char *ph, const char *name)
{
	cJSON *ev = cJSON_CreateObject();

	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "ph", ph);
	cJSON_AddNumberToObject(ev, "pid", (double)w->pid);
	cJSON_AddNumberToObject(ev, "tid", (double)w->pid);
	return ev;
}

void pf_writer__emit_meta(struct pf_writer *w, const char *what, const char *key, cJSON *value)
{
	cJSON *ev = event(w, "M", what), *args = cJSON_AddObjectToObject(ev, "args");

	cJSON_AddItemToObject(args, key, value);
	emit(w, ev);
}

/* Numeric fields of a mark go to a counter track named after it; a mark without any is an
 * instant event. */
static void emit_marks(struct pf_writer *w, const cJSON *marks)
{
	const cJSON *m, *f;

	cJSON_ArrayForEach(m, marks) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
		cJSON *ev, *args;
		uint64_t ts;

		if (!cJSON_IsString(name) || !pf_exact__get(m, "ts_ns", &ts))
			continue;
		ev = event(w, "C", name->valuestring);
		cJSON_AddNumberToObject(ev, "ts", us(w, ts));
		args = cJSON_AddObjectToObject(ev, "args");
		cJSON_ArrayForEach(f, m) {
			if (cJSON_IsNumber(f) && strcmp(f->string, "ts_ns") != 0 &&
			    strcmp(f->string, "tid") != 0)
				cJSON_AddNumberToObject(args, f->string, f->valuedouble);
		}
		if (!args->child) {
			cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(ev, "ph"), "i");
			cJSON_AddStringToObject(ev, "s", "t");
			cJSON_ArrayForEach(f, m) {
				if (strcmp(f->string, "ts_ns") != 0 && strcmp(f->string, "name") != 0)
					cJSON_AddItemToObject(args, f->string, cJSON_Duplicate(f, true));
			}
			pf_exact__unquote(args);
		}
		emit(w, ev);
	}
}

static const char *const reserved_args[] = { "span_id", "parent_id", "index", "status" };

/* A span as a complete event from its start to end_ns; marks with it. */
void pf_writer__emit_span(struct pf_writer *w, const cJSON *js, uint64_t end_ns)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(js, "status");
	const cJSON *index = cJSON_GetObjectItemCaseSensitive(js, "index");
	const cJSON *a;
	uint64_t id, parent = 0, start;
	cJSON *ev, *args;

	pf_exact__get(js, "span_id", &id);
	pf_exact__get(js, "parent_id", &parent);
	pf_exact__get(js, "start_ns", &start);
	ev = event(w, "X", cJSON_GetObjectItemCaseSensitive(js, "name")->valuestring);
	cJSON_AddStringToObject(ev, "cat", "cirron");
	cJSON_AddNumberToObject(ev, "ts", us(w, start));
	cJSON_AddNumberToObject(ev, "dur", end_ns > start ?
				(double)(q1024(w, end_ns) - q1024(w, start)) / 1024.0 : 0);
	args = cJSON_AddObjectToObject(ev, "args");
	cJSON_AddNumberToObject(args, "span_id", (double)id);
	if (parent)
		cJSON_AddNumberToObject(args, "parent_id", (double)parent);
	if (cJSON_IsNumber(index))
		cJSON_AddNumberToObject(args, "index", index->valuedouble);
	cJSON_AddStringToObject(args, "status", status->valuestring);
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(js, "attrs")) {
		bool ours = false;

		for (size_t i = 0; i < sizeof(reserved_args) / sizeof(reserved_args[0]); i++)
			ours |= !strcmp(a->string, reserved_args[i]);
		if (!ours)
			cJSON_AddItemToObject(args, a->string, cJSON_Duplicate(a, true));
	}
	pf_exact__unquote(args);
	emit(w, ev);
	emit_marks(w, cJSON_GetObjectItemCaseSensitive(js, "marks"));
}

void pf_writer__emit_hang(struct pf_writer *w, const cJSON *h)
{
	cJSON *ev, *args;
	uint64_t ts;

	if (!cJSON_IsObject(h) || !pf_exact__get(h, "detected_ns", &ts))
		return;
	ev = event(w, "i", "hang");
	cJSON_AddStringToObject(ev, "s", "p");
	cJSON_AddNumberToObject(ev, "ts", us(w, ts));
	args = cJSON_Duplicate(h, true);
	pf_exact__unquote(args);
	cJSON_AddItemToObject(ev, "args", args);
	emit(w, ev);
}

static void counter(struct pf_writer *w, const char *name, uint64_t ts, const char *k1,
		    double v1, const char *k2, double v2)
{
	cJSON *ev = event(w, "C", name), *args;

	cJSON_AddNumberToObject(ev, "ts", us(w, ts));
	args = cJSON_AddObjectToObject(ev, "args");
	cJSON_AddNumberToObject(args, k1, v1);
	if (k2)
		cJSON_AddNumberToObject(args, k2, v2);
	emit(w, ev);
}

static double delta(const cJSON *a, const cJSON *b, const char *key)
{
	uint64_t x = 0, y = 0;

	pf_exact__get(a, key, &x);
	pf_exact__get(b, key, &y);
	return y > x ? (double)(y - x) : 0;
}

/* A --sys-interval sample as counter tracks: memory and threads as they are; CPU as a share
 * of one core, bytes and context switches per second, since the previous sample. */
void pf_writer__emit_sys(struct pf_writer *w, const cJSON *js)
{
	uint64_t ts, prev_ts = 0, v;
	double dt;

	if (!cJSON_IsObject(js) || !pf_exact__get(js, "ts_ns", &ts))
		return;
	if (pf_exact__get(js, "rss_bytes", &v))
		counter(w, "sys: rss (bytes)", ts, "rss", (double)v, NULL, 0);
	if (pf_exact__get(js, "threads", &v))
		counter(w, "sys: threads", ts, "threads", (double)v, NULL, 0);
	if (w->sys_prev && pf_exact__get(w->sys_prev, "ts_ns", &prev_ts) && ts > prev_ts) {
		const cJSON *p = w->sys_prev;

		dt = (double)(ts - prev_ts) / 1e9;
		counter(w, "sys: cpu (% of a core)", ts, "user",
			delta(p, js, "cpu_user_ns") / 1e7 / dt, "system",
			delta(p, js, "cpu_system_ns") / 1e7 / dt);
		counter(w, "sys: io (bytes/s)", ts, "read", delta(p, js, "read_bytes") / dt,
			"write", delta(p, js, "write_bytes") / dt);
		counter(w, "sys: context switches (/s)", ts, "voluntary",
			delta(p, js, "ctx_voluntary") / dt, "involuntary",
			delta(p, js, "ctx_involuntary") / dt);
		counter(w, "node: network (bytes/s)", ts, "rx", delta(p, js, "net_rx_bytes") / dt,
			"tx", delta(p, js, "net_tx_bytes") / dt);
		counter(w, "node: disk (bytes/s)", ts, "read",
			delta(p, js, "disk_read_bytes") / dt, "write",
			delta(p, js, "disk_write_bytes") / dt);
	}
	cJSON_Delete(w->sys_prev);
	w->sys_prev = cJSON_Duplicate(js, true);
}
