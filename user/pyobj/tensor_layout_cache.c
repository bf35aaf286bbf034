// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The tensor layouts found in targets, kept per libtorch build-id so the search
// (tensor_layout_find.c) runs once per build. The file is a torch_layouts.json with one
// entry: it can be copied into probes/ as it is.
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "pyobj/tensor_layout_cache.h"

#define CACHE_MAX_BYTES (64 << 10)

static bool path_of(const char *dir, const char *build_id, char *buf, size_t size)
{
	for (const char *c = build_id; *c; c++)	/* hex only: it names a file */
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return *build_id && (size_t)snprintf(buf, size, "%s/torch-layout-%s.json", dir,
					     build_id) < size;
}

int tensor_layout_cache__load(const char *dir, const char *build_id, const char *version,
			      struct torch_layout *l, char *why, size_t size)
{
	char path[4096], *text;
	ssize_t n;
	int fd, err;

	if (!dir || !path_of(dir, build_id, path, sizeof(path)))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -ENOENT;
	text = malloc(CACHE_MAX_BYTES + 1);
	n = text ? read(fd, text, CACHE_MAX_BYTES) : -1;
	close(fd);
	if (n <= 0 || n == CACHE_MAX_BYTES) {
		snprintf(why, size, "%s: unreadable or too large", path);
		free(text);
		return -EINVAL;
	}
	text[n] = 0;
	err = torch_layout__parse(text, version, l, why, size);
	free(text);
	if (err) {
		char r[200];

		snprintf(r, sizeof(r), "%s", why);
		snprintf(why, size, "%s: %s", path, r);
		return -EINVAL;	/* another version under this build-id is not ours either */
	}
	return 0;
}

static cJSON *to_json(const struct torch_layout *l, const char *build_id)
{
	cJSON *root = cJSON_CreateObject(), *dt = cJSON_AddObjectToObject(root, "dtypes");
	cJSON *one = cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "layouts"), l->version);
	const struct { const char *k; int64_t v; } f[] = {
		{ "thp_cdata", l->thp_cdata }, { "storage", l->storage },
		{ "storage_data", l->storage_data }, { "storage_nbytes", l->storage_nbytes },
		{ "autograd_meta", l->autograd_meta }, { "grad", l->grad },
		{ "sizes_and_strides", l->sizes_and_strides }, { "inline_dims", l->inline_dims },
		{ "storage_offset", l->storage_offset }, { "numel", l->numel },
		{ "data_type", l->data_type }, { "device", l->device },
		{ "device_has_value", l->device_has_value },
	};
	char src[160];

	cJSON_AddStringToObject(root, "name", "torch_layouts");
	for (int i = 0; i < 64; i++)
		if (l->dtypes[i][0]) {
			char k[16];

			snprintf(k, sizeof(k), "%d", i);
			cJSON_AddStringToObject(dt, k, l->dtypes[i]);
		}
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		cJSON_AddNumberToObject(one, f[i].k, (double)f[i].v);
	snprintf(src, sizeof(src), "found by cirron-probe in a target, libtorch build-id %s",
		 build_id);
	cJSON_AddStringToObject(one, "source", src);
	cJSON_AddArrayToObject(one, "aliases");
	return root;
}

int tensor_layout_cache__store(const char *dir, const char *build_id, const struct torch_layout *l)
{
	char path[4096], tmp[4096 + 64];
	cJSON *j;
	char *text;
	int fd, err = 0;
	size_t len;

	if (!dir || !path_of(dir, build_id, path, sizeof(path)))
		return -EINVAL;
	if (fs__mkdir_p(dir, 0700))
		return -EACCES;
	j = to_json(l, build_id);
	text = cJSON_Print(j);
	cJSON_Delete(j);
	if (!text)
		return -ENOMEM;
	fd = fs__create_temp(dir, "torch-layout", 0644, tmp, sizeof(tmp));
	if (fd < 0) {
		free(text);
		return fd;
	}
	len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		err = -EIO;
	if (close(fd) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	free(text);
	return err;
}
