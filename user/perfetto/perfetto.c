// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `trace --format perfetto`: the spool as Chrome Trace Event JSON, one process track per
// session, the span tree as complete ("X") events on its thread, marks as counters, hang
// records as instant events. Streams (perfetto.h). This file walks the spool directory:
// batch files grouped by session, sessions chosen by --session, --rank, --ranks and ordered
// by rank, each file read whole and handed to the writer (perfetto_writer.c).
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/outfile.h"
#include "perfetto/perfetto_internal.h"
#include "read/batch.h"

#define FILE_MAX_BYTES (512u << 20)	/* as the spool reader: more is not ours */

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
		b = text ? pf_exact__parse(text, why, sizeof(why)) : NULL;
		free(text);
		host = cJSON_GetObjectItemCaseSensitive(b, "host");
		sp = cJSON_GetObjectItemCaseSensitive(b, "spans");
		if (b && cJSON_IsString(host) && pf_exact__get(b, "pid", &pid) && pid <= INT_MAX &&
		    pf_exact__get(b, "rank", &rank) && rank <= INT_MAX &&
		    pf_exact__get(b, "written_ns", &w)) {
			s->host = strdup(host->valuestring);
			s->pid = (long)pid;
			s->rank = (long)rank;
			s->start_ns = w;
			cJSON_ArrayForEach(js, sp) {
				if (pf_exact__get(js, "start_ns", &start) && start < s->start_ns)
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

		if (files && name[0] != '.' && batch__name(name, &bf.id_len, &bf.seq) &&
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
			elog("cannot write %s: %s", o->out_file, outfile__strerror(&of, err));
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
	if (of.f)
		outfile__abort(&of);
	free_listing(files, nfiles, ss, ns);
	free(dir);
	return EXIT_FAILURE_RUNTIME;
}
