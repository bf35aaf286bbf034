// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the writer writes, as Chrome Trace Event JSON on the session's track: spans as
// complete ("X") events, marks as counters (or instants), hangs as instant events, and
// --sys-interval samples as counter tracks.
#include <string.h>
#include "common/sbuf.h"
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

/* Digits of v, no allocation: the spans' ids and times are most of what is written. */
static void put_u64(struct sbuf *b, uint64_t v)
{
	char d[24];
	int n = sizeof(d);

	do
		d[--n] = (char)('0' + v % 10);
	while (v /= 10);
	sbuf__add(b, d + n, sizeof(d) - (size_t)n);
}

/* q/1024 us in decimal, exact (1/1024 = 0.0009765625: ten digits at most), as a double
 * reads it back. */
static void put_us(struct sbuf *b, uint64_t q)
{
	uint64_t frac = (q & 1023) * 9765625ull;	/* 10^10 / 1024 */
	char d[11];
	int n = 10;

	put_u64(b, q >> 10);
	if (!frac)
		return;
	d[0] = '.';
	for (int i = 10; i > 0; i--, frac /= 10)
		d[i] = (char)('0' + frac % 10);
	while (d[n] == '0')
		n--;
	sbuf__add(b, d, (size_t)n + 1);
}

/* An attribute's value as JSON: long integers kept exact (pf_exact), numbers as cJSON
 * writes them, the rest printed by cJSON. */
static void put_value(struct sbuf *b, const cJSON *v)
{
	uint64_t n;
	char *text;

	if (pf_exact__u64(v, &n)) {
		put_u64(b, n);
	} else if (cJSON_IsString(v)) {
		sbuf__json_str(b, v->valuestring);
	} else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		cJSON *copy = cJSON_Duplicate(v, true);

		pf_exact__unquote(copy);
		text = copy ? cJSON_PrintUnformatted(copy) : NULL;
		sbuf__puts(b, text ? text : "null");
		cJSON_free(text);
		cJSON_Delete(copy);
	} else {
		text = cJSON_PrintUnformatted(v);
		sbuf__puts(b, text ? text : "null");
		cJSON_free(text);
	}
}

/* A span as a complete event from its start to end_ns, written straight out (no cJSON
 * tree per event: most of the export's time was building and printing them); marks with
 * it. */
void pf_writer__emit_span(struct pf_writer *w, const cJSON *js, uint64_t end_ns)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(js, "status");
	const cJSON *index = cJSON_GetObjectItemCaseSensitive(js, "index");
	const cJSON *a;
	uint64_t id = 0, parent = 0, start = 0, q0;
	struct sbuf *b = &w->line;

	pf_exact__get(js, "span_id", &id);
	pf_exact__get(js, "parent_id", &parent);
	pf_exact__get(js, "start_ns", &start);
	q0 = q1024(w, start);
	b->n = 0;
	if (b->p)
		b->p[0] = 0;
	sbuf__puts(b, w->first ? "\n{\"name\":" : ",\n{\"name\":");
	sbuf__json_str(b, cJSON_GetObjectItemCaseSensitive(js, "name")->valuestring);
	sbuf__puts(b, ",\"ph\":\"X\",\"pid\":");
	put_u64(b, (uint64_t)w->pid);
	sbuf__puts(b, ",\"tid\":");
	put_u64(b, (uint64_t)w->pid);
	sbuf__puts(b, ",\"cat\":\"cirron\",\"ts\":");
	put_us(b, q0);
	sbuf__puts(b, ",\"dur\":");
	put_us(b, end_ns > start ? q1024(w, end_ns) - q0 : 0);
	sbuf__puts(b, ",\"args\":{\"span_id\":");
	put_u64(b, id);
	if (parent) {
		sbuf__puts(b, ",\"parent_id\":");
		put_u64(b, parent);
	}
	if (cJSON_IsNumber(index)) {
		sbuf__puts(b, ",\"index\":");
		put_value(b, index);
	}
	sbuf__puts(b, ",\"status\":");
	sbuf__json_str(b, status->valuestring);
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(js, "attrs")) {
		bool ours = false;

		for (size_t i = 0; i < sizeof(reserved_args) / sizeof(reserved_args[0]); i++)
			ours |= !strcmp(a->string, reserved_args[i]);
		if (ours)
			continue;
		sbuf__add(b, ",", 1);
		sbuf__json_str(b, a->string);
		sbuf__add(b, ":", 1);
		put_value(b, a);
	}
	sbuf__puts(b, "}}");
	if (!b->oom) {
		fwrite(b->p, 1, b->n, w->f);
		w->first = false;
	}
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
