// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --max-spool-mb: which batch files count against the cap, and which go first.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sink/batch_name.h"
#include "sink/spool_cap.h"

static struct spool_newest *find_newest(struct spool_cap *sp, const char *session_id)
{
	for (size_t i = 0; i < sp->nnewest; i++)
		if (!strcmp(sp->newest[i].session_id, session_id))
			return &sp->newest[i];
	return NULL;
}

static struct spool_newest *add_newest(struct spool_cap *sp, const char *session_id)
{
	struct spool_newest *n;

	if (sp->nnewest == sp->newest_cap) {
		size_t cap = sp->newest_cap ? sp->newest_cap * 2 : 8;

		n = reallocarray(sp->newest, cap, sizeof(*n));
		if (!n)
			return NULL;
		sp->newest = n;
		sp->newest_cap = cap;
	}
	n = &sp->newest[sp->nnewest];
	*n = (struct spool_newest){ .session_id = strdup(session_id) };
	if (!n->session_id)
		return NULL;
	sp->nnewest++;
	return n;
}

/* Room for one more removable file: the removed ones at the front go first. */
static int reserve_old(struct spool_cap *sp)
{
	struct spool_file *a;
	size_t cap;

	if (sp->nold < sp->old_cap)
		return 0;
	if (sp->head >= sp->nold / 2 && sp->head) {
		sp->nold -= sp->head;
		memmove(sp->old, sp->old + sp->head, sp->nold * sizeof(*sp->old));
		sp->head = 0;
		return 0;
	}
	cap = sp->old_cap ? sp->old_cap * 2 : 64;
	a = reallocarray(sp->old, cap, sizeof(*a));
	if (!a)
		return -ENOMEM;
	sp->old = a;
	sp->old_cap = cap;
	return 0;
}

/* Kept in order: a session's newest batch becomes removable only once a newer one is
 * written, by which time other sessions may have written theirs. */
static int add_old(struct spool_cap *sp, struct spool_file f)
{
	size_t i;

	if (reserve_old(sp))
		return -ENOMEM;
	for (i = sp->nold; i > sp->head && sp->old[i - 1].order > f.order; i--)
		;
	memmove(sp->old + i + 1, sp->old + i, (sp->nold - i) * sizeof(*sp->old));
	sp->old[i] = f;
	sp->nold++;
	return 0;
}

/* Stops counting f (it is gone, or out of memory to track it). */
static void drop(struct spool_cap *sp, struct spool_file *f)
{
	sp->bytes -= f->bytes < sp->bytes ? f->bytes : sp->bytes;
	free(f->name);
	f->name = NULL;
}

void spool_cap__add(struct spool_cap *sp, const char *session_id, const char *name, uint64_t bytes)
{
	struct spool_file f = { .name = strdup(name), .bytes = bytes, .order = sp->next_order++ };
	struct spool_newest *n;

	if (!f.name)
		return;
	sp->bytes += bytes;
	n = find_newest(sp, session_id);
	if (!n) {
		n = add_newest(sp, session_id);
		if (!n) {
			drop(sp, &f);
			return;
		}
	} else if (add_old(sp, n->file)) {
		drop(sp, &n->file);
	}
	n->file = f;
}

void spool_cap__make_room(struct spool_cap *sp, uint64_t bytes)
{
	char path[PATH_MAX];

	while (sp->bytes + bytes > sp->max_bytes && sp->head < sp->nold) {
		struct spool_file *f = &sp->old[sp->head++];

		snprintf(path, sizeof(path), "%s/%s", sp->dir, f->name);
		if (!(sp->dirfd >= 0 ? unlinkat(sp->dirfd, f->name, 0) : unlink(path))) {
			sp->removed_files++;
			sp->removed_bytes += f->bytes;
			drop(sp, f);
		} else if (errno == ENOENT) {
			drop(sp, f);	/* removed by someone else */
		} else {
			free(f->name);	/* it stays, and counts; we do not try again */
		}
	}
	if (sp->head == sp->nold)
		sp->head = sp->nold = 0;
}

void spool_cap__forget(struct spool_cap *sp, const char *name)
{
	for (size_t i = 0; i < sp->nnewest; i++) {
		struct spool_newest *n = &sp->newest[i];

		if (strcmp(n->file.name, name) != 0)
			continue;
		drop(sp, &n->file);
		free(n->session_id);
		*n = sp->newest[--sp->nnewest];
		return;
	}
	for (size_t i = sp->head; i < sp->nold; i++) {
		if (strcmp(sp->old[i].name, name) != 0)
			continue;
		drop(sp, &sp->old[i]);
		memmove(sp->old + i, sp->old + i + 1, (sp->nold - i - 1) * sizeof(*sp->old));
		sp->nold--;
		return;
	}
}

int spool_cap__scan(struct spool_cap *sp)
{
	struct batch_file *a;
	size_t n;
	int fd = sp->dirfd >= 0 ? sp->dirfd : open(sp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = batch_name__list(fd, &a, &n);
	if (fd != sp->dirfd)
		close(fd);
	for (size_t i = 0; i < n && !err; i++) {
		char *id = strndup(a[i].name, batch_name__id_len(a[i].name));

		if (id)
			spool_cap__add(sp, id, a[i].name, a[i].bytes);
		else
			err = -ENOMEM;
		free(id);
	}
	batch_name__free_files(a, n);
	return err;
}

void spool_cap__free(struct spool_cap *sp)
{
	for (size_t i = sp->head; i < sp->nold; i++)
		free(sp->old[i].name);
	for (size_t i = 0; i < sp->nnewest; i++) {
		free(sp->newest[i].file.name);
		free(sp->newest[i].session_id);
	}
	free(sp->old);
	free(sp->newest);
	sp->old = NULL;
	sp->newest = NULL;
	sp->head = sp->nold = sp->old_cap = sp->nnewest = sp->newest_cap = 0;
}
