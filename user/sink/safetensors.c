// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Writes weight and gradient snapshots as safetensors files (see safetensors.h).
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "sink/safetensors.h"

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *safetensors__dtype(const char *torch_dtype)
{
	static const char *const map[][2] = {
		{ "float32", "F32" }, { "float64", "F64" }, { "bfloat16", "BF16" },
		{ "float16", "F16" }, { "int64", "I64" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(torch_dtype, map[i][0]))
			return map[i][1];
	return NULL;
}

static char *header_json(const struct st_entry *e, size_t n, const char *const *metadata,
			 uint64_t *total)
{
	cJSON *root = cJSON_CreateObject(), *meta;
	char *text = NULL;
	uint64_t off = 0;

	if (!root)
		return NULL;
	if (metadata && metadata[0]) {
		meta = cJSON_AddObjectToObject(root, "__metadata__");
		for (size_t i = 0; meta && metadata[i] && metadata[i + 1]; i += 2)
			cJSON_AddStringToObject(meta, metadata[i], metadata[i + 1]);
	}
	for (size_t i = 0; i < n; i++) {
		cJSON *t = cJSON_AddObjectToObject(root, e[i].name), *shape, *offs;

		if (!t)		/* a duplicate name: cJSON adds it anyway; never here */
			goto out;
		cJSON_AddStringToObject(t, "dtype", e[i].dtype);
		shape = cJSON_AddArrayToObject(t, "shape");
		for (int k = 0; shape && k < e[i].dim; k++)
			cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)e[i].shape[k]));
		offs = cJSON_AddArrayToObject(t, "data_offsets");
		cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
		off += e[i].nbytes;
		cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
	}
	*total = off;
	text = cJSON_PrintUnformatted(root);
out:
	cJSON_Delete(root);
	return text;
}

int safetensors__begin(struct st_writer *w, const char *dir, const char *name,
		       const struct st_entry *e, size_t n, const char *const *metadata)
{
	char *json, *padded;
	uint64_t len, hlen;
	unsigned char le[8];
	int err;

	memset(w, 0, sizeof(*w));
	w->fd = w->dirfd = -1;
	if (strlen(name) >= sizeof(w->name))
		return -ENAMETOOLONG;
	w->dirfd = fs__open_dir(dir, FS_DIR_CREATE | FS_DIR_OWNED, 0750, NULL, 0);
	if (w->dirfd < 0)
		return w->dirfd;
	strcpy(w->name, name);
	json = header_json(e, n, metadata, &w->expect);
	if (!json) {
		safetensors__abort(w);
		return -ENOMEM;
	}
	len = strlen(json);
	hlen = (len + 8 + 7) / 8 * 8 - 8;	/* data starts 8-aligned */
	padded = malloc(hlen);
	if (!padded) {
		cJSON_free(json);
		safetensors__abort(w);
		return -ENOMEM;
	}
	memcpy(padded, json, len);
	memset(padded + len, ' ', hlen - len);
	cJSON_free(json);
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(hlen >> (8 * i));
	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	w->fd = fs__create_temp_at(w->dirfd, name, 0640, w->tmp, sizeof(w->tmp));
	if (w->fd < 0) {
		err = w->fd;
		w->fd = -1;
		free(padded);
		safetensors__abort(w);
		return err;
	}
	err = write_all(w->fd, le, 8);
	if (!err)
		err = write_all(w->fd, padded, hlen);
	free(padded);
	if (err)
		safetensors__abort(w);
	return err;
}

int safetensors__append(struct st_writer *w, const void *data, size_t len)
{
	int err = write_all(w->fd, data, len);

	if (!err)
		w->written += len;
	return err;
}

int safetensors__finish(struct st_writer *w)
{
	int err = w->written == w->expect ? 0 : -EIO;

	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	if (!err && renameat(w->dirfd, w->tmp, w->dirfd, w->name))
		err = -errno;
	if (err)
		unlinkat(w->dirfd, w->tmp, 0);
	close(w->dirfd);
	w->dirfd = -1;
	return err;
}

void safetensors__abort(struct st_writer *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		unlinkat(w->dirfd, w->tmp, 0);
	}
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->fd = w->dirfd = -1;
}
