// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A shipper's state (ship_log.h): which of the spool's batches a destination already took.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sink/batch_name.h"
#include "ship/ship_log.h"

char *ship_log__line(const char *key_prefix, const char *name, uint64_t bytes)
{
	char *line;

	if (asprintf(&line, "%s%s %llu", key_prefix, name, (unsigned long long)bytes) < 0)
		return NULL;
	return line;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The state log's lines, sorted (for bsearch). */
static char **read_log(int rootfd, const char *log_name, size_t *n)
{
	char **lines = NULL, **l, *line = NULL;
	size_t cap = 0, lcap = 0;
	int fd = openat(rootfd, log_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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

void ship_log__scan(int rootfd, int dirfd, const char *log_name, const char *key_prefix,
		    void (*unsent)(void *ctx, const char *name, uint64_t bytes), void *ctx)
{
	size_t nlog, nf;
	char **log = read_log(rootfd, log_name, &nlog);
	char tmp_name[256];
	struct batch_file *fs;
	int tmp;

	/* On an error, what it found; a directory it could not read leaves the log as it is. */
	if (batch_name__list(dirfd, &fs, &nf) && !fs)
		goto out;
	snprintf(tmp_name, sizeof(tmp_name), "%s.tmp", log_name);
	tmp = openat(rootfd, tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		     O_CLOEXEC, 0640);
	for (size_t i = 0; i < nf; i++) {
		char *line = ship_log__line(key_prefix, fs[i].name, fs[i].bytes);

		if (line && log && bsearch(&line, log, nlog, sizeof(*log), by_str)) {
			if (tmp >= 0)
				dprintf(tmp, "%s\n", line);
		} else {
			unsent(ctx, fs[i].name, fs[i].bytes);
		}
		free(line);
	}
	if (tmp >= 0 && !close(tmp))
		renameat(rootfd, tmp_name, rootfd, log_name);
	batch_name__free_files(fs, nf);
out:
	for (size_t i = 0; log && i < nlog; i++)
		free(log[i]);
	free(log);
}

