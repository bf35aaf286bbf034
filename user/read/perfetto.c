// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `trace --format perfetto`: the spool as Chrome Trace Event JSON, one process track per
// session, the span tree as complete ("X") events on its thread, marks as counters, hang
// records as instant events. Streams (perfetto.h).
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/outfile.h"
#include "read/perfetto.h"
#include "read/spool_reader.h"
#include "tree/session.h"

#define EXACT_MARK '\x01'		/* a long integer token, quoted to keep its digits */
#define EXACT_MIN_DIGITS 16		/* shorter integers are exact as doubles */
#define FILE_MAX_BYTES (512u << 20)	/* as the spool reader: more is not ours */
#define SYNTH_PID_BASE 0x40000000	/* above any pid_max: for a pid seen twice */

struct pending {
	uint64_t id;
	cJSON *span;		/* the newest copy of a span still open; NULL: free slot */
};

struct pf_writer {
	FILE *f;
	uint64_t base_ns;
	bool first;		/* no event written yet */
	bool in_session;
	long pid;		/* the session's process track */
	uint64_t last_ns;	/* the session's newest batch: where open spans are drawn to */
	struct pending *tab;	/* open addressing by span id, at most half full */
	size_t cap, n;
	long *pids;		/* used by earlier sessions */
	size_t npids;
	cJSON *sys_prev;	/* the session's previous --sys-interval sample: rates */
};

/* Copies text with every integer token of EXACT_MIN_DIGITS digits or more, outside strings,
 * turned into a string "\x01DIGITS", so the digits survive cJSON (see exact_u64). */
static char *quote_long_ints(const char *text)
{
	size_t len = strlen(text), o = 0;
	char *out = malloc(len + len / 4 + 16);
	bool in_str = false;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		char c = text[i];

		if (in_str) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = text[++i];
			else if (c == '"')
				in_str = false;
			i++;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if ((c >= '0' && c <= '9') || c == '-') {
			/* a whole number token: only a non-negative integer is quoted (the digits
			 * of a fraction or an exponent are not an integer of their own) */
			size_t n = strspn(text + i, "-+0123456789.eE");
			size_t digits = strspn(text + i, "0123456789");

			if (digits == n && n >= EXACT_MIN_DIGITS) {
				out[o++] = '"';
				out[o++] = EXACT_MARK;
				memcpy(out + o, text + i, n);
				o += n;
				out[o++] = '"';
				i += n;
				continue;
			}
			memcpy(out + o, text + i, n);
			o += n;
			i += n;
			continue;
		}
		out[o++] = c;
		i++;
	}
	out[o] = 0;
	return out;
}

/* A non-negative integer, exact: a quoted long token or a number a double holds exactly. */
static bool exact_u64(const cJSON *v, uint64_t *out)
{
	if (cJSON_IsString(v) && v->valuestring[0] == EXACT_MARK) {
		const char *d = v->valuestring + 1;
		char *end;

		if (!*d || strspn(d, "0123456789") != strlen(d))
			return false;
		errno = 0;
		*out = strtoull(d, &end, 10);
		return !errno;
	}
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9007199254740992.0) ||
	    (double)(uint64_t)v->valuedouble != v->valuedouble)
		return false;
	*out = (uint64_t)v->valuedouble;
	return true;
}

static bool get_exact(const cJSON *o, const char *key, uint64_t *out)
{
	return exact_u64(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

/* Turns quoted long integers back into numbers (for args; doubles are fine there). */
static void unquote_numbers(cJSON *o)
{
	cJSON *v;

	cJSON_ArrayForEach(v, o) {
		uint64_t n;

		if (cJSON_IsString(v) && v->valuestring[0] == EXACT_MARK && exact_u64(v, &n)) {
			cJSON *num = cJSON_CreateNumber((double)n);

			if (num)
				cJSON_ReplaceItemViaPointer(o, v, num);
			v = num;
			if (!v)
				return;
		} else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
			unquote_numbers(v);
		}
	}
}

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

static void emit_meta(struct pf_writer *w, const char *what, const char *key, cJSON *value)
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

		if (!cJSON_IsString(name) || !get_exact(m, "ts_ns", &ts))
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
			unquote_numbers(args);
		}
		emit(w, ev);
	}
}

static const char *const reserved_args[] = { "span_id", "parent_id", "index", "status" };

/* A span as a complete event from its start to end_ns; marks with it. */
static void emit_span(struct pf_writer *w, const cJSON *js, uint64_t end_ns)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(js, "status");
	const cJSON *index = cJSON_GetObjectItemCaseSensitive(js, "index");
	const cJSON *a;
	uint64_t id, parent = 0, start;
	cJSON *ev, *args;

	get_exact(js, "span_id", &id);
	get_exact(js, "parent_id", &parent);
	get_exact(js, "start_ns", &start);
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
	unquote_numbers(args);
	emit(w, ev);
	emit_marks(w, cJSON_GetObjectItemCaseSensitive(js, "marks"));
}

static void emit_hang(struct pf_writer *w, const cJSON *h)
{
	cJSON *ev, *args;
	uint64_t ts;

	if (!cJSON_IsObject(h) || !get_exact(h, "detected_ns", &ts))
		return;
	ev = event(w, "i", "hang");
	cJSON_AddStringToObject(ev, "s", "p");
	cJSON_AddNumberToObject(ev, "ts", us(w, ts));
	args = cJSON_Duplicate(h, true);
	unquote_numbers(args);
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

	get_exact(a, key, &x);
	get_exact(b, key, &y);
	return y > x ? (double)(y - x) : 0;
}

/* A --sys-interval sample as counter tracks: memory and threads as they are; CPU as a share
 * of one core, bytes and context switches per second, since the previous sample. */
static void emit_sys(struct pf_writer *w, const cJSON *js)
{
	uint64_t ts, prev_ts = 0, v;
	double dt;

	if (!cJSON_IsObject(js) || !get_exact(js, "ts_ns", &ts))
		return;
	if (get_exact(js, "rss_bytes", &v))
		counter(w, "sys: rss (bytes)", ts, "rss", (double)v, NULL, 0);
	if (get_exact(js, "threads", &v))
		counter(w, "sys: threads", ts, "threads", (double)v, NULL, 0);
	if (w->sys_prev && get_exact(w->sys_prev, "ts_ns", &prev_ts) && ts > prev_ts) {
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

static size_t slot(const struct pf_writer *w, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (w->cap - 1);

	while (w->tab[i].span && w->tab[i].id != id)
		i = (i + 1) & (w->cap - 1);
	return i;
}

static int pending_put(struct pf_writer *w, uint64_t id, cJSON *span)
{
	size_t i;

	if ((w->n + 1) * 2 > w->cap) {
		struct pending *old = w->tab;
		size_t old_cap = w->cap;

		w->cap = w->cap ? w->cap * 2 : 64;
		w->tab = calloc(w->cap, sizeof(*w->tab));
		if (!w->tab) {
			w->tab = old;
			w->cap = old_cap;
			return -ENOMEM;
		}
		for (size_t k = 0; k < old_cap; k++)
			if (old[k].span)
				w->tab[slot(w, old[k].id)] = old[k];
		free(old);
	}
	i = slot(w, id);
	if (w->tab[i].span)
		cJSON_Delete(w->tab[i].span);
	else
		w->n++;
	w->tab[i] = (struct pending){ id, span };
	return 0;
}

/* Removes id (a closed copy arrived); backward-shift deletion keeps the probe chains. */
static void pending_drop(struct pf_writer *w, uint64_t id)
{
	size_t i, j, home;

	if (!w->cap)
		return;
	i = slot(w, id);
	if (!w->tab[i].span)
		return;
	cJSON_Delete(w->tab[i].span);
	w->tab[i].span = NULL;
	w->n--;
	for (j = (i + 1) & (w->cap - 1); w->tab[j].span; j = (j + 1) & (w->cap - 1)) {
		home = (size_t)((w->tab[j].id * 0x9e3779b97f4a7c15ull) >> 17) & (w->cap - 1);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			w->tab[i] = w->tab[j];
			w->tab[j].span = NULL;
			i = j;
		}
	}
}

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
		emit_span(w, w->tab[i].span, w->last_ns);
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
	emit_meta(w, "process_name", "name", cJSON_CreateString(name));
	emit_meta(w, "process_sort_index", "sort_index", cJSON_CreateNumber((double)rank));
	emit_meta(w, "process_labels", "labels", cJSON_CreateString(id));
	emit_meta(w, "thread_name", "name", cJSON_CreateString("training"));
}

/* A span object of the spool format, exact ids and times; the first bad field or NULL. */
static const char *check_span(const cJSON *js, uint64_t *id, uint64_t *end)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(js, "name");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(js, "status");
	const cJSON *endv = cJSON_GetObjectItemCaseSensitive(js, "end_ns");
	uint64_t start, dur, parent;

	if (!cJSON_IsObject(js))
		return "span";
	if (!get_exact(js, "span_id", id) || !*id)
		return "span_id";
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(js, "parent_id")) &&
	    !get_exact(js, "parent_id", &parent))
		return "parent_id";
	if (!cJSON_IsString(name) || !*name->valuestring)
		return "name";
	if (!get_exact(js, "start_ns", &start))
		return "start_ns";
	*end = 0;
	if (!cJSON_IsNull(endv) && !exact_u64(endv, end))
		return "end_ns";
	if (*end && get_exact(js, "duration_ns", &dur) && dur <= UINT64_MAX - start)
		*end = start + dur;
	if (!cJSON_IsString(status) || (strcmp(status->valuestring, "ok") != 0 &&
					strcmp(status->valuestring, "open") != 0 &&
					strcmp(status->valuestring, "incomplete") != 0))
		return "status";
	if (!strcmp(status->valuestring, "open"))
		*end = 0;
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(js, "attrs")))
		return "attrs";
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(js, "marks")))
		return "marks";
	return NULL;
}

static cJSON *parse_exact(const char *text, char *why, size_t why_size)
{
	char *q = quote_long_ints(text);
	const char *end = NULL;
	cJSON *b;

	if (!q) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		return NULL;
	}
	b = cJSON_ParseWithOpts(q, &end, 0);
	if (!b)
		snprintf(why, why_size, "not valid JSON");
	else if (end[strspn(end, " \t\r\n")] || !cJSON_IsObject(b))
		snprintf(why, why_size, "not one JSON object");
	if (b && (end[strspn(end, " \t\r\n")] || !cJSON_IsObject(b))) {
		cJSON_Delete(b);
		b = NULL;
	}
	free(q);
	return b;
}

int pf_writer__batch(struct pf_writer *w, const char *text, char *why, size_t why_size)
{
	const cJSON *format, *spans, *js;
	cJSON *b = parse_exact(text, why, why_size), *next;
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
	if (!get_exact(b, "written_ns", &written)) {
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
			pending_drop(w, id);
			emit_span(w, s, end);
		} else if (pending_put(w, id, cJSON_DetachItemViaPointer((cJSON *)spans, s))) {
			snprintf(why, why_size, "%s", strerror(ENOMEM));
			cJSON_Delete(b);
			return -ENOMEM;
		}
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "hangs")) {
		emit_hang(w, js);
	}
	cJSON_ArrayForEach(js, cJSON_GetObjectItemCaseSensitive(b, "sys")) {
		emit_sys(w, js);
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
	free(w);
	return err;
}

/* ---- the spool directory ----------------------------------------------------------- */

struct bfile {
	char *name;
	size_t id_len;
	uint64_t seq;
};

struct psession {
	struct bfile *files;	/* into the listing, by seq */
	size_t nfiles;
	char *id, *host;
	long pid, rank;
	uint64_t start_ns;
	bool ok, chosen;
};

static int by_session_seq(const void *a, const void *b)
{
	const struct bfile *x = a, *y = b;
	size_t n = x->id_len < y->id_len ? x->id_len : y->id_len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->id_len != y->id_len)
		return x->id_len < y->id_len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_rank_start(const void *a, const void *b)
{
	const struct psession *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Whole file; NULL with why (and *gone when it no longer exists). */
static char *slurp(const char *path, char *why, size_t why_size, bool *gone)
{
	struct stat st;
	char *text = NULL;
	size_t got;
	FILE *f = fopen(path, "re");

	*gone = false;
	if (!f) {
		*gone = errno == ENOENT;
		snprintf(why, why_size, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file");
	} else if ((uint64_t)st.st_size > FILE_MAX_BYTES) {
		snprintf(why, why_size, "larger than %u MiB", FILE_MAX_BYTES >> 20);
	} else if ((text = malloc((size_t)st.st_size + 1))) {
		got = fread(text, 1, (size_t)st.st_size, f);
		text[got] = 0;
	} else {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
	}
	fclose(f);
	return text;
}

/* The session's metadata from its first readable batch; start_ns from its spans. */
static void read_meta(struct psession *s, const char *dir)
{
	char why[256], *path, *text;
	bool gone;

	for (size_t i = 0; i < s->nfiles && !s->ok; i++) {
		const cJSON *host, *sp, *js;
		uint64_t pid, rank, start, w;
		cJSON *b;

		if (asprintf(&path, "%s/%s", dir, s->files[i].name) < 0)
			return;
		text = slurp(path, why, sizeof(why), &gone);
		free(path);
		b = text ? parse_exact(text, why, sizeof(why)) : NULL;
		free(text);
		host = cJSON_GetObjectItemCaseSensitive(b, "host");
		sp = cJSON_GetObjectItemCaseSensitive(b, "spans");
		if (b && cJSON_IsString(host) && get_exact(b, "pid", &pid) && pid <= INT_MAX &&
		    get_exact(b, "rank", &rank) && rank <= INT_MAX &&
		    get_exact(b, "written_ns", &w)) {
			s->host = strdup(host->valuestring);
			s->pid = (long)pid;
			s->rank = (long)rank;
			s->start_ns = w;
			cJSON_ArrayForEach(js, sp) {
				if (get_exact(js, "start_ns", &start) && start < s->start_ns)
					s->start_ns = start;
			}
			s->ok = s->host != NULL;
		}
		cJSON_Delete(b);
	}
}

static void free_listing(struct bfile *files, size_t n, struct psession *ss, size_t ns)
{
	for (size_t i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	for (size_t i = 0; i < ns; i++)
		free(ss[i].host);
	free(ss);
}

int perfetto__main(const struct options *o)
{
	struct bfile *files = NULL;
	struct psession *ss = NULL;
	size_t nfiles = 0, ns = 0, skipped = 0;
	struct dirent **list;
	struct outfile of = {};
	char *dir, why[256];
	uint64_t base = UINT64_MAX;
	struct pf_writer *w;
	FILE *out = stdout;
	int n, err, rc = EXIT_OK;

	if (asprintf(&dir, "%s/spool", o->path) < 0)
		return EXIT_FAILURE_RUNTIME;
	n = scandir(dir, &list, NULL, alphasort);
	if (n < 0) {
		elog("no spool to read at %s: %s", dir, strerror(errno));
		free(dir);
		return EXIT_NO_SPOOL;
	}
	files = calloc((size_t)n + 1, sizeof(*files));
	for (int i = 0; i < n; i++) {
		struct bfile bf = {};
		const char *name = list[i]->d_name;

		if (files && name[0] != '.' && spool_view__batch_name(name, &bf.id_len, &bf.seq) &&
		    (bf.name = strdup(name)))
			files[nfiles++] = bf;
		else if (files && name[0] != '.')
			elog("skipping %s/%s: not a batch name (<session_id>.<8-digit seq>.json)",
			     dir, name), skipped++;
		free(list[i]);
	}
	free(list);
	if (!files)
		goto oom;
	qsort(files, nfiles, sizeof(*files), by_session_seq);
	ss = calloc(nfiles + 1, sizeof(*ss));
	if (!ss)
		goto oom;
	for (size_t i = 0; i < nfiles; i++) {
		if (!ns || files[i].id_len != ss[ns - 1].files->id_len ||
		    memcmp(files[i].name, ss[ns - 1].files->name, files[i].id_len) != 0)
			ss[ns++] = (struct psession){ .files = &files[i] };
		ss[ns - 1].nfiles++;
	}
	for (size_t i = 0; i < ns; i++) {
		struct psession *s = &ss[i];
		char id[256];

		read_meta(s, dir);
		snprintf(id, sizeof(id), "%.*s", (int)s->files->id_len, s->files->name);
		s->chosen = s->ok && (!o->session || !strcmp(o->session, id)) &&
			    (o->rank < 0 || o->rank == s->rank);
	}
	for (size_t i = 0; o->ranks && i < ns; i++) {	/* the newest session of each rank */
		const struct psession *a = &ss[i];

		for (size_t j = 0; j < ns; j++) {
			const struct psession *b = &ss[j];

			if (j != i && a->chosen && b->chosen && b->rank == a->rank &&
			    (b->start_ns > a->start_ns || (b->start_ns == a->start_ns && j > i)))
				ss[i].chosen = false;
		}
	}
	qsort(ss, ns, sizeof(*ss), by_rank_start);
	for (size_t i = 0; i < ns; i++)
		if (ss[i].chosen && ss[i].start_ns < base)
			base = ss[i].start_ns;
	if (base == UINT64_MAX) {
		elog("no sessions in %s", dir);
		base = 0;
	}
	if (o->out_file) {
		err = outfile__open(&of, o->out_file);
		out = of.f;
		if (err) {
			elog("cannot write %s: %s", o->out_file, strerror(-err));
			free_listing(files, nfiles, ss, ns);
			free(dir);
			return EXIT_OUTPUT_UNWRITABLE;
		}
	}
	w = pf_writer__new(out, base);
	if (!w)
		goto oom;
	for (size_t i = 0; i < ns; i++) {
		struct psession *s = &ss[i];
		char id[256];

		if (!s->chosen)
			continue;
		snprintf(id, sizeof(id), "%.*s", (int)s->files->id_len, s->files->name);
		pf_writer__session(w, id, s->host, s->pid, s->rank);
		for (size_t k = 0; k < s->nfiles; k++) {
			char *path, *text;
			bool gone;

			if (asprintf(&path, "%s/%s", dir, s->files[k].name) < 0)
				continue;
			text = slurp(path, why, sizeof(why), &gone);
			if (text ? pf_writer__batch(w, text, why, sizeof(why)) != 0 : !gone) {
				elog("skipping %s: %s", path, why);
				skipped++;
			}
			free(text);
			free(path);
		}
	}
	err = pf_writer__finish(w);
	if (out != stdout) {
		int cerr = outfile__commit(&of);

		err = err ? err : cerr;
	}
	if (err) {
		elog("cannot write %s: %s", o->out_file ? o->out_file : "stdout", strerror(-err));
		rc = EXIT_OUTPUT_UNWRITABLE;
	} else if (skipped) {
		rc = EXIT_CORRUPT_INPUT;
	}
	free_listing(files, nfiles, ss, ns);
	free(dir);
	return rc;
oom:
	elog("out of memory reading %s", dir);
	if (of.f) {
		fclose(of.f);
		unlink(of.tmp);
		free(of.tmp);
	}
	free_listing(files, nfiles, ss, ns);
	free(dir);
	return EXIT_FAILURE_RUNTIME;
}
