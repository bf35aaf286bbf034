// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sink/batch_name.h"

size_t batch_name__id_len(const char *name)
{
	size_t len = strlen(name), d = 0;

	if (name[0] == '.' || len < 5 || strcmp(name + len - 5, ".json") != 0)
		return 0;
	while (d + 6 < len && isdigit((unsigned char)name[len - 6 - d]))
		d++;
	if (d < 8 || d + 7 > len || name[len - 6 - d] != '.')
		return 0;
	return len - 6 - d;
}

static int older_first(const void *a, const void *b)
{
	const struct batch_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);	/* same tick: by seq within a session */
}

int batch_name__list(int dirfd, struct batch_file **out, size_t *n)
{
	struct batch_file *a = NULL, *b;
	size_t cap = 0;
	struct dirent *e;
	struct stat st;
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	int err = 0;

	*n = 0;
	*out = NULL;
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	rewinddir(d);	/* the dup shares its offset with dirfd */
	while (!err && (e = readdir(d))) {
		if (!batch_name__id_len(e->d_name) ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			b = reallocarray(a, cap, sizeof(*a));
			if (!b) {
				err = -ENOMEM;
				break;
			}
			a = b;
		}
		a[*n] = (struct batch_file){ .name = strdup(e->d_name),
					     .bytes = (uint64_t)st.st_size, .mtime = st.st_mtim };
		if (!a[*n].name)
			err = -ENOMEM;
		else
			(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(a, *n, sizeof(*a), older_first);
	*out = a;
	return err;
}

void batch_name__free_files(struct batch_file *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].name);
	free(a);
}
