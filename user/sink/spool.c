// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "sink/batch_name.h"
#include "sink/spool.h"

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int spool__sessions_like(const struct spool *sp, const char *id)
{
	size_t len = strlen(id);
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(sp->dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = batch_name__id_len(de->d_name);

		/* the id itself, or the id and ".N", N its observation number */
		if (l < len || strncmp(de->d_name, id, len) != 0 ||
		    (l > len && (de->d_name[len] != '.' ||
				 strspn(de->d_name + len + 1, "0123456789") != l - len - 1)))
			continue;
		int obs = l == len ? 1 : atoi(de->d_name + len + 1);

		if (obs > n)
			n = obs;
	}
	closedir(d);
	return n;
}

int spool__open(struct spool *sp, const char *root, uint64_t max_bytes)
{
	char probe[PATH_MAX];
	int err, fd;

	memset(sp, 0, sizeof(*sp));
	if (asprintf(&sp->dir, "%s/spool", root) < 0) {
		sp->dir = NULL;
		return -ENOMEM;
	}
	err = fs__mkdir_p(sp->dir, 0750);
	/* Root writes here: no one else may rename the spool or plant names in it. */
	if (!err)
		err = fs__check_dir(root);
	if (!err)
		err = fs__check_dir(sp->dir);
	if (err)
		goto fail;
	/* Fail now, before anything is attached, rather than at the first flush. */
	fd = fs__create_temp(sp->dir, "write-test", 0640, probe, sizeof(probe));
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	close(fd);
	unlink(probe);
	sp->cap.dir = sp->dir;
	sp->cap.max_bytes = max_bytes;
	if (max_bytes) {
		err = spool_cap__scan(&sp->cap);
		if (err)
			goto fail;
	}
	return 0;
fail:
	spool__close(sp);
	return err;
}

/* The file a batch replaces (seq numbers restart when the same process is traced again)
 * is no longer counted against the cap. */
static void forget_replaced(struct spool *sp, const char *path, const char *name)
{
	struct stat st;

	if (!stat(path, &st))
		spool_cap__forget(&sp->cap, name);
}

int spool__write(struct spool *sp, const char *session_id, uint64_t seq, const cJSON *batch)
{
	char path[PATH_MAX], tmp[PATH_MAX], prefix[NAME_MAX];
	char *text = cJSON_PrintUnformatted(batch);
	size_t len;
	int fd, err;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\n';	/* replaces the NUL; len + 1 bytes are written */
	snprintf(path, sizeof(path), "%s/%s.%08" PRIu64 ".json", sp->dir, session_id, seq);
	snprintf(prefix, sizeof(prefix), "%s.%08" PRIu64, session_id, seq);
	if (sp->cap.max_bytes) {
		forget_replaced(sp, path, strrchr(path, '/') + 1);
		spool_cap__make_room(&sp->cap, len + 1);
	}
	/* an unguessable name, created here: a link planted in the spool is never followed */
	fd = fs__create_temp(sp->dir, prefix, 0640, tmp, sizeof(tmp));
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = write_all(fd, text, len + 1);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	else {
		sp->bytes_written += len + 1;
		sp->files_written++;
		if (sp->cap.max_bytes)
			spool_cap__add(&sp->cap, session_id, strrchr(path, '/') + 1, len + 1);
	}
out:
	cJSON_free(text);
	return err;
}

void spool__close(struct spool *sp)
{
	spool_cap__free(&sp->cap);
	free(sp->dir);
	sp->dir = NULL;
}
