// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The upload's state (s3_sent.h): which of the spool's batches the store already took.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sink/batch_name.h"
#include "sink/s3_sent.h"

char *s3_sent__line(const char *key_prefix, const char *name, uint64_t bytes)
{
	char *line;

	if (asprintf(&line, "%s%s %llu", key_prefix, name, (unsigned long long)bytes) < 0)
		return NULL;
	return line;
}

struct found {
	char *name;
	uint64_t bytes;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The state log's lines, sorted (for bsearch). */
static char **read_log(int rootfd, size_t *n)
{
	char **lines = NULL, **l, *line = NULL;
	size_t cap = 0, lcap = 0;
	int fd = openat(rootfd, S3_SENT_LOG, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	ssize_t len;

	*n = 0;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			l = reallocarray(lines, cap, sizeof(*l));
			if (!l)
				break;
			lines = l;
		}
		if ((lines[*n] = strdup(line)))
			(*n)++;
	}
	free(line);
	fclose(f);
	if (*n)
		qsort(lines, *n, sizeof(*lines), by_str);
	return lines;
}

void s3_sent__scan(int rootfd, int dirfd, const char *key_prefix,
		   void (*unsent)(void *ctx, const char *name, uint64_t bytes), void *ctx)
{
	size_t nlog, nf = 0, cap = 0;
	char **log = read_log(rootfd, &nlog);
	struct found *fs = NULL, *f;
	int fd = dup(dirfd), tmp;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (!batch_name__id_len(e->d_name) ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (nf == cap) {
			cap = cap ? cap * 2 : 256;
			f = reallocarray(fs, cap, sizeof(*f));
			if (!f)
				break;
			fs = f;
		}
		fs[nf] = (struct found){ .name = strdup(e->d_name), .bytes = (uint64_t)st.st_size,
					 .mtime = st.st_mtim };
		if (fs[nf].name)
			nf++;
	}
	closedir(d);
	if (nf)
		qsort(fs, nf, sizeof(*fs), older_first);
	tmp = openat(rootfd, S3_SENT_LOG ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		     O_CLOEXEC, 0640);
	for (size_t i = 0; i < nf; i++) {
		char *line = s3_sent__line(key_prefix, fs[i].name, fs[i].bytes);

		if (line && log && bsearch(&line, log, nlog, sizeof(*log), by_str)) {
			if (tmp >= 0)
				dprintf(tmp, "%s\n", line);
		} else {
			unsent(ctx, fs[i].name, fs[i].bytes);
		}
		free(line);
		free(fs[i].name);
	}
	if (tmp >= 0 && !close(tmp))
		renameat(rootfd, S3_SENT_LOG ".tmp", rootfd, S3_SENT_LOG);
	free(fs);
out:
	for (size_t i = 0; log && i < nlog; i++)
		free(log[i]);
	free(log);
}

