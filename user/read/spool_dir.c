// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The spool directory read back (spool_view__load_dir): every batch file whole, one at a
// time, into spool_view__add_batch (spool_reader.c); files being written are passed over,
// bad ones reported.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "read/spool_reader.h"

#define BATCH_MAX_BYTES (512u << 20)	/* a batch is a second of spans; more is not ours */

/* Whole file, NUL-terminated (a NUL inside makes it invalid JSON, as it should). *gone
 * says it no longer exists: removed since the listing, by --max-spool-mb. */
static char *read_file(const char *path, char *why, size_t why_size, bool *gone)
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
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		goto out;
	}
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

int spool_view__load_dir(struct spool_view *v, const char *dir)
{
	struct dirent **list;
	char why[256], *path, *text;
	int n, err = 0;
	bool gone;

	/* Sorted, so reports come in a stable order; merging does not depend on it. */
	n = scandir(dir, &list, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (!strcmp(name, ".") || !strcmp(name, "..") || in_progress(name) || err)
			goto next;
		if (asprintf(&path, "%s/%s", dir, name) < 0) {
			err = -ENOMEM;
			goto next;
		}
		gone = false;
		text = read_file(path, why, sizeof(why), &gone);
		if (!text && gone) {
			v->removed++;
		} else if (!text || spool_view__add_batch(v, name, text, why, sizeof(why))) {
			elog("skipping %s: %s", path, why);
			v->skipped++;
		}
		free(text);
		free(path);
next:
		free(list[i]);
	}
	free(list);
	return err;
}
