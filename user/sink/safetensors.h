/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SAFETENSORS_H
#define __CIRRON_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

/* A safetensors file (huggingface/safetensors' format: an 8-byte little-endian header
 * length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}
 * padded with spaces to 8 bytes, then the tensors' bytes back to back, row-major), written
 * under a temp name and renamed when whole, tensor by tensor: a snapshot need not fit in
 * memory. */
struct st_entry {
	const char *name;
	const char *dtype;	/* "F32", "F64", "BF16", "F16" */
	int dim;
	const int64_t *shape;
	uint64_t nbytes;	/* product of shape x element size */
};

struct st_writer {
	int fd, dirfd;		/* the file; its directory, opened level by level */
	char tmp[256], name[256];	/* in dirfd: the temporary file, the file */
	char path[4096];	/* dir/name, as the batch names it */
	uint64_t expect, written;	/* data bytes */
};

/* Creates dir (mkdir -p, each level checked: fs__open_dir) and dir/name's temp file, and writes the header. metadata: NULL or
 * pairs key, value, ..., NULL. Returns 0 or -errno. */
int safetensors__begin(struct st_writer *w, const char *dir, const char *name,
		       const struct st_entry *e, size_t n, const char *const *metadata);
/* The next bytes of data, in the entries' order. */
int safetensors__append(struct st_writer *w, const void *data, size_t len);
/* Renames the file into place if every byte came; else removes it (-EIO). */
int safetensors__finish(struct st_writer *w);
void safetensors__abort(struct st_writer *w);
/* Safetensors' dtype name for "float32", "bfloat16", ... or NULL. */
const char *safetensors__dtype(const char *torch_dtype);

#endif
