// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libFuzzer harness for the spool reader: what `trace` and `health` do with the files of a
// spool directory, minus the directory. An input is one or more files, each "NAME\nTEXT",
// separated by 0x1e (a byte JSON text cannot hold unescaped); see tests/fuzz/README.md. The
// same files also go through the streaming Perfetto exporter (trace --format perfetto).
// Beyond crashes, leaks and UB, it aborts when the tree built is not a tree or the JSON
// export does not parse.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/health.h"
#include "read/perfetto.h"
#include "read/report.h"
#include "read/spool_reader.h"
#include "read/trace.h"
#include "read/trace_ranks.h"

#define RECORD_SEP 0x1e

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

static void fail(const char *what, const struct rsession *s)
{
	fprintf(stderr, "fuzz_spool_reader: %s (session %s)\n", what, s->id);
	abort();
}

/* Every merged span is reached exactly once from the tops, through consistent links. */
static void check_tree(const struct rsession *s)
{
	const struct rspan **stack = malloc((s->nspans + 1) * sizeof(void *));
	size_t n = 0, seen = 0;

	if (!stack)
		abort();
	for (size_t i = 0; i < s->ntops; i++) {
		if (s->tops[i]->parent)
			fail("a top span has a parent", s);
		stack[n++] = s->tops[i];
		while (n) {
			const struct rspan *r = stack[--n];

			if (++seen > s->nspans)
				fail("a span is reached twice", s);
			for (size_t k = 0; k < r->nkids; k++) {
				if (r->kids[k]->parent != r)
					fail("a child's parent link is wrong", s);
				stack[n++] = r->kids[k];
			}
		}
	}
	if (seen != s->nspans)
		fail("spans unreachable from the tops", s);
	free(stack);
}

/* Prints through open_memstream and checks the text parses as one JSON value. */
static void check_json(const struct spool_view *v, const struct options *o)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	cJSON *j;

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
	cJSON_Delete(j);
	free(buf);
}

static void print_all(const struct spool_view *v)
{
	struct options o = { .path = ".", .rank = -1 };

	trace__print(devnull, v, &o);
	o.all = true;
	trace__print(devnull, v, &o);
	o.all = false;
	o.format = FORMAT_CSV;
	trace__print(devnull, v, &o);
	o.format = FORMAT_JSON;
	check_json(v, &o);
	o.name = "step";
	check_json(v, &o);
	o.name = NULL;
	o.last = 3;
	trace__print(devnull, v, &o);
	o.format = FORMAT_TEXT;
	trace__print(devnull, v, &o);
	o.last = 0;
	o.rank = 0;
	health__print(devnull, v, &o);
	o.rank = -1;
	trace_ranks__print(devnull, v, &o);
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
	struct spool_view v = {};
	const uint8_t *p = data, *end = data + size;
	char why[256];

	while (p < end) {
		const uint8_t *sep = memchr(p, RECORD_SEP, (size_t)(end - p));
		size_t len = (size_t)((sep ? sep : end) - p);
		/* its own allocation, so ASan sees a read past the NUL */
		char *rec = malloc(len + 1), *nl;

		if (!rec)
			abort();
		memcpy(rec, p, len);
		rec[len] = 0;
		nl = strchr(rec, '\n');
		if (nl)
			*nl = 0;
		spool_view__add_batch(&v, rec, nl ? nl + 1 : rec + strlen(rec), why, sizeof(why));
		pf_writer__batch(pf, nl ? nl + 1 : rec + strlen(rec), why, sizeof(why));
		free(rec);
		p += len + (sep != NULL);
	}
	perfetto_end(pf, &pf_buf, pf_file);
	if (spool_view__build(&v))
		abort();	/* out of memory: libFuzzer's -rss_limit_mb reports it first */
	for (size_t i = 0; i < v.nsessions; i++)
		check_tree(v.sessions[i]);
	print_all(&v);
	spool_view__free(&v);
	return 0;
}
