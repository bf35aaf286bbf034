// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libFuzzer harness for the spool reader: what `trace`, `health` and `report` do with the
// files of a spool directory, minus the directory. An input is one or more files, each
// "NAME\nTEXT", separated by 0x1e (a byte JSON text cannot hold unescaped); see
// tests/fuzz/README.md. The same files also go through the streaming Perfetto exporter
// (trace --format perfetto). Beyond crashes, leaks and UB, it aborts when the JSON export
// does not parse, or leaves out a span of a batch it took (nothing is dropped silently), or
// when the batch parser (read/batch_json.c) takes a text cJSON would not, or makes another
// tree of it.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/batch.h"
#include "read/batch_json.h"
#include "trace/health.h"
#include "perfetto/perfetto.h"
#include "report/report.h"
#include "read/spool_view.h"
#include "trace/trace.h"
#include "read/view.h"

#define RECORD_SEP 0x1e

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

/* (session, span id) of every span of a batch the reader takes */
struct ids {
	char (*sid)[160];
	uint64_t *id;
	size_t n, cap;
};

static void ids_add(struct ids *x, const char *sid, uint64_t id)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 64;
		x->sid = realloc(x->sid, x->cap * sizeof(*x->sid));
		x->id = realloc(x->id, x->cap * sizeof(*x->id));
		if (!x->sid || !x->id)
			abort();
	}
	snprintf(x->sid[x->n], sizeof(x->sid[0]), "%s", sid);
	x->id[x->n++] = id;
}

static bool in_json(const cJSON *nodes, uint64_t id)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, nodes) {
		const cJSON *v = cJSON_GetObjectItem(n, "span_id");

		if ((cJSON_IsNumber(v) && (uint64_t)v->valuedouble == id) ||
		    in_json(cJSON_GetObjectItem(n, "children"), id))
			return true;
	}
	return false;
}

/* Prints through open_memstream; --format json must parse, and hold every span taken. */
static void check_json(struct spool_view *v, const struct options *o, const struct ids *taken)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	cJSON *j, *s;

	if (!f)
		abort();
	trace__print(f, v, o);
	if (fclose(f))
		abort();
	j = cJSON_Parse(buf);
	if (!j) {
		fprintf(stderr, "fuzz_spool_reader: --format json output does not parse\n");
		abort();
	}
	for (size_t i = 0; taken && !o->name && i < taken->n; i++) {
		bool found = false;

		cJSON_ArrayForEach(s, j) {
			const cJSON *sid = cJSON_GetObjectItem(s, "session_id");

			if (cJSON_IsString(sid) && !strcmp(sid->valuestring, taken->sid[i]) &&
			    in_json(cJSON_GetObjectItem(s, "spans"), taken->id[i]))
				found = true;
		}
		if (!found && taken->id[i] < (1ull << 53)) {
			fprintf(stderr, "fuzz_spool_reader: span %llu of %s not in the JSON\n",
				(unsigned long long)taken->id[i], taken->sid[i]);
			abort();
		}
	}
	cJSON_Delete(j);
	free(buf);
}

/* batch_json's allocations, dropped together (as the arena's) */
static void *bump[65536];
static size_t nbump;

static void *bump_alloc(size_t size)
{
	void *p = nbump < sizeof(bump) / sizeof(bump[0]) ? malloc(size) : NULL;

	if (p)
		bump[nbump++] = p;
	return p;
}

/* The same tree, member by member in order (cJSON_Compare finds an object's members by key:
 * a repeated key compares against its first), each list's first member's prev its last. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
	for (; a && b; a = a->next, b = b->next) {
		if ((a->type & 0xFF) != (b->type & 0xFF) || !a->string != !b->string ||
		    (a->string && strcmp(a->string, b->string) != 0) ||
		    !a->valuestring != !b->valuestring ||
		    (a->valuestring && strcmp(a->valuestring, b->valuestring) != 0) ||
		    a->valueint != b->valueint ||
		    a->valuedouble != b->valuedouble ||
		    signbit(a->valuedouble) != signbit(b->valuedouble) ||
		    !a->child != !b->child || (a->child && a->child->prev != NULL) !=
		    (b->child && b->child->prev != NULL) || !same_tree(a->child, b->child))
			return false;
		if (a->child) {
			const cJSON *la = a->child, *lb = b->child;

			while (la->next)
				la = la->next;
			while (lb->next)
				lb = lb->next;
			if ((a->child->prev == la) != (b->child->prev == lb))
				return false;
		}
	}
	return !a && !b;
}

/* Whatever batch_json takes, cJSON takes, to the same tree and the same end. */
static void check_parser(const char *text)
{
	const char *end = NULL, *cend = NULL;
	bool gave_up;
	cJSON *fast = batch_json__parse(text, &end, bump_alloc, &gave_up);
	cJSON *slow = cJSON_ParseWithOpts(text, &cend, 0);

	if (!gave_up && (!slow || !same_tree(fast, slow) || end != cend)) {
		fprintf(stderr, "fuzz_spool_reader: batch_json and cJSON differ\n");
		abort();
	}
	cJSON_Delete(slow);
	while (nbump)
		free(bump[--nbump]);
}

static void print_all(struct spool_view *v, const struct ids *taken)
{
	struct options o = { .path = ".", .rank = -1 };

	trace__print(devnull, v, &o);
	o.all = true;
	trace__print(devnull, v, &o);
	o.all = false;
	o.format = FORMAT_CSV;
	trace__print(devnull, v, &o);
	o.format = FORMAT_JSON;
	check_json(v, &o, taken);
	o.name = "step";
	check_json(v, &o, NULL);
	o.name = NULL;
	o.last = 3;
	trace__print(devnull, v, &o);
	check_json(v, &o, NULL);
	o.format = FORMAT_TEXT;
	trace__print(devnull, v, &o);
	o.last = 0;
	o.rank = 0;
	health__print(devnull, v, &o);
	o.rank = -1;
	o.ranks = true;
	trace__print(devnull, v, &o);
	o.ranks = false;
	report__write(devnull, v, &o);
}

/* The streaming Perfetto exporter, fed the same files as one session: its output must parse
 * as one JSON object whatever the input. */
static struct pf_writer *perfetto_begin(char **buf, size_t *len, FILE **f)
{
	struct pf_writer *w;

	*f = open_memstream(buf, len);
	if (!*f)
		abort();
	w = pf_writer__new(*f, 1);
	if (!w)
		abort();
	pf_writer__session(w, "fuzz-1-1", "fuzz", 1, 0);
	return w;
}

static void perfetto_end(struct pf_writer *w, char **buf, FILE *f)
{
	cJSON *j;

	pf_writer__finish(w);
	if (fclose(f))	/* sets *buf */
		abort();
	j = cJSON_Parse(*buf);
	if (!cJSON_IsObject(j) || !cJSON_IsArray(cJSON_GetObjectItem(j, "traceEvents"))) {
		fprintf(stderr, "fuzz_spool_reader: --format perfetto output does not parse\n");
		abort();
	}
	cJSON_Delete(j);
	free(*buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *pf_buf = NULL;
	size_t pf_len;
	FILE *pf_file;
	struct pf_writer *pf = perfetto_begin(&pf_buf, &pf_len, &pf_file);
	struct spool_src src = {};
	struct spool_view v = {};
	struct ids taken = {};
	const uint8_t *p = data, *end = data + size;
	char why[256];

	while (p < end) {
		const uint8_t *sep = memchr(p, RECORD_SEP, (size_t)(end - p));
		size_t len = (size_t)((sep ? sep : end) - p);
		/* its own allocation, so ASan sees a read past the NUL */
		char *rec = malloc(len + 1), *nl, *text;
		struct batch b;

		if (!rec)
			abort();
		memcpy(rec, p, len);
		rec[len] = 0;
		nl = strchr(rec, '\n');
		if (nl)
			*nl = 0;
		text = nl ? nl + 1 : rec + strlen(rec);
		check_parser(text);
		if (!batch__parse(&b, rec, text, why, sizeof(why))) {
			for (size_t i = 0; i < b.nsp; i++)
				ids_add(&taken, b.id, b.sp[i].id);
			batch__free(&b);
		}
		spool_src__add_text(&src, rec, text);
		pf_writer__batch(pf, text, why, sizeof(why));
		free(rec);
		p += len + (sep != NULL);
	}
	perfetto_end(pf, &pf_buf, pf_file);
	/* the same name twice: the reader takes one of them; the check allows for either */
	for (size_t i = 0; i < src.nsessions; i++)
		for (size_t k = 1; k < src.sessions[i].nfiles; k++)
			if (src.sessions[i].files[k].seq == src.sessions[i].files[k - 1].seq)
				taken.n = 0;
	if (view__load_src(&v, &src))
		abort();	/* out of memory: libFuzzer's -rss_limit_mb reports it first */
	print_all(&v, &taken);
	spool_view__free(&v);
	free(taken.sid);
	free(taken.id);
	return 0;
}
