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
#include "common/log.h"
#include "sink/batch_name.h"
#include "sink/spool.h"
#include "tree/clock.h"

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
	int fd = sp->dirfd >= 0 ? dup(sp->dirfd) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
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
	char probe[NAME_MAX + 1];
	int err, fd;

	memset(sp, 0, sizeof(*sp));
	sp->dirfd = -1;
	if (asprintf(&sp->dir, "%s/spool", root) < 0) {
		sp->dir = NULL;
		return -ENOMEM;
	}
	/* Root writes here: no one else may rename the spool or plant names in it, nor a link
	 * on the way to it. */
	sp->dirfd = fs__open_dir(sp->dir, FS_DIR_CREATE | FS_DIR_OWNED, 0750, sp->refused,
				 sizeof(sp->refused));
	if (sp->dirfd < 0) {
		err = sp->dirfd;
		goto fail;
	}
	fd = openat(sp->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* root, as walked */
	err = fd < 0 ? -errno : fs__check_fd(fd, true);
	if (fd >= 0)
		close(fd);
	if (err) {
		snprintf(sp->refused, sizeof(sp->refused), "%s", root);
		goto fail;
	}
	/* Fail now, before anything is attached, rather than at the first flush. */
	fd = fs__create_temp_at(sp->dirfd, "write-test", 0640, probe, sizeof(probe));
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	close(fd);
	unlinkat(sp->dirfd, probe, 0);
	sp->cap.dir = sp->dir;
	sp->cap.dirfd = sp->dirfd;
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
static void forget_replaced(struct spool *sp, const char *name)
{
	struct stat st;

	if (!fstatat(sp->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		spool_cap__forget(&sp->cap, name);
}

/* Writes that went well this long end an outage of the disk under the spool. */
#define SPOOL_RECOVERED_NS	(60 * 1000000000ull)

/* The session's list of batches with hang records, this one's seq added if it has some; NULL
 * while it has none. Out of memory, a list is shorter. */
static struct spool_hangs *hang_batches(struct spool *sp, const char *session_id, uint64_t seq,
					const cJSON *batch)
{
	bool has = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(batch, "hangs")) > 0;
	struct spool_hangs *h = NULL, *a;

	for (size_t i = 0; i < sp->nhangs && !h; i++)
		if (!strcmp(sp->hangs[i].session_id, session_id))
			h = &sp->hangs[i];
	if (!h && has && (a = reallocarray(sp->hangs, sp->nhangs + 1, sizeof(*a)))) {
		sp->hangs = a;
		h = &a[sp->nhangs];
		*h = (struct spool_hangs){ .session_id = strdup(session_id) };
		if (h->session_id)
			sp->nhangs++;
		else
			h = NULL;
	}
	if (h && has) {
		if (h->n == SPOOL_HANG_BATCHES)
			memmove(h->seqs, h->seqs + 1, --h->n * sizeof(h->seqs[0]));
		h->seqs[h->n++] = seq;
	}
	return h;
}

/* The session is over: its list goes. */
static void hang_batches_end(struct spool *sp, struct spool_hangs *h)
{
	free(h->session_id);
	*h = sp->hangs[--sp->nhangs];
}

/* The batch's text with hang_batches before its closing brace. */
static char *with_hang_batches(char *text, const struct spool_hangs *h)
{
	size_t len = strlen(text), room = len + 32 + h->n * 21, off;
	char *out = malloc(room);

	if (!out || len < 2) {
		free(out);
		return text;	/* out of memory: the batch goes without the list */
	}
	memcpy(out, text, len - 1);
	off = len - 1;
	off += (size_t)snprintf(out + off, room - off, ",\"hang_batches\":[");
	for (size_t i = 0; i < h->n; i++)
		off += (size_t)snprintf(out + off, room - off, "%s%" PRIu64, i ? "," : "",
					h->seqs[i]);
	snprintf(out + off, room - off, "]}");
	cJSON_free(text);
	return out;
}

int spool__write(struct spool *sp, const char *session_id, uint64_t seq, const cJSON *batch)
{
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1], prefix[NAME_MAX];
	char *text = cJSON_PrintUnformatted(batch);
	struct spool_hangs *hangs;
	size_t len;
	int fd, err;

	if (!text)
		return -ENOMEM;
	hangs = hang_batches(sp, session_id, seq, batch);
	if (hangs && hangs->n)
		text = with_hang_batches(text, hangs);
	if (hangs && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(batch, "final")))
		hang_batches_end(sp, hangs);
	len = strlen(text);
	text[len] = '\n';	/* replaces the NUL; len + 1 bytes are written */
	snprintf(name, sizeof(name), "%s.%08" PRIu64 ".json", session_id, seq);
	snprintf(prefix, sizeof(prefix), "%s.%08" PRIu64, session_id, seq);
	if (sp->cap.max_bytes) {
		forget_replaced(sp, name);
		spool_cap__make_room(&sp->cap, len + 1);
	}
	/* an unguessable name, created here: a link planted in the spool is never followed */
	fd = fs__create_temp_at(sp->dirfd, prefix, 0640, tmp, sizeof(tmp));
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = write_all(fd, text, len + 1);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(sp->dirfd, tmp, sp->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(sp->dirfd, tmp, 0);
	} else {
		/* an outage ends once writes went well for a while (a full disk that takes a
		 * small batch now and then is one outage, said once) */
		if (sp->lost_err && clock__mono_ns() - sp->lost_last_ns >= SPOOL_RECOVERED_NS) {
			elog("spool writes to %s work again (%llu batches lost so far)", sp->dir,
			     (unsigned long long)sp->lost_files);
			sp->lost_err = 0;
		}
		sp->bytes_written += len + 1;
		sp->files_written++;
		if (sp->cap.max_bytes)
			spool_cap__add(&sp->cap, session_id, name, len + 1);
		if (sp->on_written)
			sp->on_written(sp->on_written_ctx, name, len + 1);
	}
out:
	if (err) {
		sp->lost_last_ns = clock__mono_ns();
		sp->lost_files++;
		sp->lost_bytes += len + 1;
		sp->lost_spans += (uint64_t)cJSON_GetArraySize(
			cJSON_GetObjectItemCaseSensitive(batch, "spans"));
	}
	cJSON_free(text);
	return err;
}

void spool__close(struct spool *sp)
{
	for (size_t i = 0; i < sp->nhangs; i++)
		free(sp->hangs[i].session_id);
	free(sp->hangs);
	sp->hangs = NULL;
	sp->nhangs = 0;
	spool_cap__free(&sp->cap);
	free(sp->dir);
	sp->dir = NULL;
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	sp->dirfd = -1;
}
