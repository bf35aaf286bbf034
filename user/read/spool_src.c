// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The spool directory listed and its batch files read (spool_src.h).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "read/spool_src.h"

#define BATCH_MAX_BYTES (512u << 20)	/* a batch is a second of spans; more is not ours */

/* Whole file, NUL-terminated (a NUL inside makes it invalid JSON, as it should), into the
 * source's buffer (kept for the next file: its pages are already there). *gone says it no
 * longer exists: removed since the listing, by --max-spool-mb. */
static char *read_file(struct spool_src *s, const char *path, char *why, size_t why_size,
		       bool *gone)
{
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*gone = errno == ENOENT;
		snprintf(why, why_size, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file");
		goto out;
	}
	if ((uint64_t)st.st_size > BATCH_MAX_BYTES) {
		snprintf(why, why_size, "larger than %u MiB", BATCH_MAX_BYTES >> 20);
		goto out;
	}
	if ((size_t)st.st_size + 1 > s->buf_cap) {
		char *b = realloc(s->buf, (size_t)st.st_size + 1);

		if (!b) {
			snprintf(why, why_size, "%s", strerror(ENOMEM));
			goto out;
		}
		s->buf = b;
		s->buf_cap = (size_t)st.st_size + 1;
	}
	text = s->buf;
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* shrank while we read: what we have is judged as is */
		got += (size_t)n;
	}
	text[got] = 0;
out:
	close(fd);
	return text;
}

/* Batches being written (spool__write's temp files, spool__open's write test). */
static bool in_progress(const char *name)
{
	size_t len = strlen(name);

	return name[0] == '.' && ((len > 4 && !strcmp(name + len - 4, ".tmp")) ||
				  !strncmp(name, ".write-test.", 12));
}

static struct ssession *session_of(struct spool_src *s, const char *name, size_t id_len)
{
	struct ssession *a;

	/* names come sorted from a listing: the session is most often the last one */
	for (size_t i = s->nsessions; i-- > 0;)
		if (strlen(s->sessions[i].id) == id_len &&
		    !strncmp(s->sessions[i].id, name, id_len))
			return &s->sessions[i];
	a = reallocarray(s->sessions, s->nsessions + 1, sizeof(*a));
	if (!a)
		return NULL;
	s->sessions = a;
	a = &s->sessions[s->nsessions];
	*a = (struct ssession){ .id = strndup(name, id_len) };
	if (!a->id)
		return NULL;
	s->nsessions++;
	return a;
}

static int add_file(struct spool_src *s, const char *name, const char *text)
{
	struct ssession *ss;
	struct sfile *f;
	size_t id_len;
	uint64_t seq;

	if (!batch__name(name, &id_len, &seq)) {
		elog("skipping %s%s%s: not a batch name (<session_id>.<8-digit seq>.json)",
		     s->dir ? s->dir : "", s->dir ? "/" : "", name);
		s->skipped++;
		return -EINVAL;
	}
	ss = session_of(s, name, id_len);
	if (!ss)
		return -ENOMEM;
	f = reallocarray(ss->files, ss->nfiles + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ss->files = f;
	f = &ss->files[ss->nfiles];
	*f = (struct sfile){ .name = strdup(name), .seq = seq };
	if (text && !(f->text = strdup(text))) {
		free(f->name);
		return -ENOMEM;
	}
	if (!f->name) {
		free((char *)f->text);
		return -ENOMEM;
	}
	ss->nfiles++;
	s->sorted = false;
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct sfile *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_files(struct spool_src *s)
{
	if (s->sorted)
		return;
	for (size_t i = 0; i < s->nsessions; i++)
		qsort(s->sessions[i].files, s->sessions[i].nfiles, sizeof(struct sfile), by_seq);
	s->sorted = true;
}

int spool_src__open_dir(struct spool_src *s, const char *dir)
{
	struct dirent **list;
	int n, err = 0;

	*s = (struct spool_src){ .dir = strdup(dir) };
	if (!s->dir)
		return -ENOMEM;
	/* Sorted, so reports come in a stable order. */
	n = scandir(dir, &list, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (!err && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !in_progress(name) &&
		    add_file(s, name, NULL) == -ENOMEM)
			err = -ENOMEM;
		free(list[i]);
	}
	free(list);
	sort_files(s);
	return err;
}

int spool_src__add_text(struct spool_src *s, const char *name, const char *text)
{
	return add_file(s, name, text);
}

int spool_src__read(struct spool_src *s, struct ssession *ss, size_t k, struct batch *b)
{
	struct sfile *f;
	char why[256], *path = NULL, *text;
	bool gone = false;
	int err;

	sort_files(s);
	f = &ss->files[k];
	*b = (struct batch){};
	if (f->state == SFILE_BAD || f->state == SFILE_GONE)
		return f->state == SFILE_BAD ? -EINVAL : -ENOENT;
	if (f->text) {
		text = (char *)f->text;
	} else {
		if (asprintf(&path, "%s/%s", s->dir, f->name) < 0)
			return -ENOMEM;
		text = read_file(s, path, why, sizeof(why), &gone);
	}
	if (!text && gone) {
		f->state = SFILE_GONE;
		s->removed++;
		err = -ENOENT;
	} else if (!text || batch__parse(b, f->name, text, why, sizeof(why))) {
		elog("skipping %s%s%s: %s", s->dir ? s->dir : "", s->dir ? "/" : "", f->name, why);
		f->state = SFILE_BAD;
		s->skipped++;
		err = -EINVAL;
	} else {
		f->state = SFILE_OK;
		err = 0;
	}
	free(path);
	return err;
}

void spool_src__free(struct spool_src *s)
{
	for (size_t i = 0; i < s->nsessions; i++) {
		for (size_t k = 0; k < s->sessions[i].nfiles; k++) {
			free(s->sessions[i].files[k].name);
			free((char *)s->sessions[i].files[k].text);
		}
		free(s->sessions[i].files);
		free(s->sessions[i].id);
	}
	free(s->sessions);
	free(s->dir);
	free(s->buf);
	*s = (struct spool_src){};
}
