// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Reads a torch tensor from another process: the C++ fields that describe it (offsets per
// torch build from probes/torch_layouts.json) and its elements (process_vm_readv). The
// target runs on: every value is checked before it is trusted, and a read may race with
// the training step that writes the same memory.
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "proc/procfs.h"
#include "pyobj/torch_tensor.h"

/* The probes/torch_layouts.json text, built in (Makefile: probe_files.S). */
extern const char embedded_torch_layouts[];

#define IOV_BATCH	1024
#define CHUNK		(64ull << 20)

static bool get_int(const cJSON *o, const char *key, int64_t *v)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(it) || it->valuedouble < -4096 || it->valuedouble > 4096)
		return false;
	*v = (int64_t)it->valuedouble;
	return true;
}

/* "dtypes": TypeMeta index -> name, into l->dtypes. */
static void dtypes_fill(const cJSON *dtypes, struct torch_layout *l)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, dtypes) {
		char *end;
		long idx = strtol(it->string, &end, 10);

		if (*end || idx < 0 || idx >= 64 || !cJSON_IsString(it))
			continue;
		snprintf(l->dtypes[idx], sizeof(l->dtypes[idx]), "%s", it->valuestring);
	}
}

int torch_layout__parse(const char *json, const char *version, struct torch_layout *l,
			char *why, size_t size)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *layouts, *one, *dtypes, *it;
	int err = -EINVAL;

	memset(l, 0, sizeof(*l));
	layouts = cJSON_GetObjectItemCaseSensitive(root, "layouts");
	dtypes = cJSON_GetObjectItemCaseSensitive(root, "dtypes");
	if (!cJSON_IsObject(layouts) || !cJSON_IsObject(dtypes)) {
		snprintf(why, size, "torch_layouts.json: needs \"layouts\" and \"dtypes\" objects");
		goto out;
	}
	one = cJSON_GetObjectItemCaseSensitive(layouts, version);
	if (!one)	/* the version as the library's file name gives it */
		cJSON_ArrayForEach(it, layouts) {
			const cJSON *a, *aliases = cJSON_GetObjectItemCaseSensitive(it, "aliases");

			cJSON_ArrayForEach(a, aliases)
				if (cJSON_IsString(a) && !strcmp(a->valuestring, version))
					one = it;
		}
	if (!one || !cJSON_IsObject(one)) {
		snprintf(why, size, "no layout for torch %s in probes/torch_layouts.json", version);
		err = -ENOENT;
		goto out;
	}
	if (!get_int(one, "thp_cdata", &l->thp_cdata) || !get_int(one, "storage", &l->storage) ||
	    !get_int(one, "storage_data", &l->storage_data) ||
	    !get_int(one, "storage_nbytes", &l->storage_nbytes) ||
	    !get_int(one, "autograd_meta", &l->autograd_meta) || !get_int(one, "grad", &l->grad) ||
	    !get_int(one, "sizes_and_strides", &l->sizes_and_strides) ||
	    !get_int(one, "inline_dims", &l->inline_dims) ||
	    !get_int(one, "storage_offset", &l->storage_offset) ||
	    !get_int(one, "numel", &l->numel) || !get_int(one, "data_type", &l->data_type) ||
	    !get_int(one, "device", &l->device) ||
	    !get_int(one, "device_has_value", &l->device_has_value) ||
	    l->inline_dims < 1 || l->inline_dims > TENSOR_MAX_DIM) {
		snprintf(why, size, "torch_layouts.json: torch %s: a field is missing or out of range",
			 version);
		goto out;
	}
	dtypes_fill(dtypes, l);
	snprintf(l->version, sizeof(l->version), "%s", one->string);
	err = 0;
out:
	cJSON_Delete(root);
	return err;
}

static const char *layouts_json;	/* probes/torch_layouts.json read from disk, or NULL */

void torch_layout__use(const char *json)
{
	layouts_json = json;
}

int torch_layout__find(const char *version, struct torch_layout *l, char *why, size_t size)
{
	return torch_layout__parse(layouts_json ? layouts_json : embedded_torch_layouts, version, l,
				   why, size);
}

void torch_layout__dtypes(struct torch_layout *l)
{
	cJSON *root = cJSON_Parse(layouts_json ? layouts_json : embedded_torch_layouts);

	memset(l->dtypes, 0, sizeof(l->dtypes));
	dtypes_fill(cJSON_GetObjectItemCaseSensitive(root, "dtypes"), l);
	cJSON_Delete(root);
}

const char *torch_tensor__not_read(const struct tensor_desc *d)
{
	/* a CUDA allocation's address is the GPU's: process_vm_readv cannot reach it */
	return d->device_type != 0 ? "device memory" : NULL;
}

static int dtype_of(const char *name, enum tensor_dtype *td)
{
	static const struct { const char *name; enum tensor_dtype td; int size; } known[] = {
		{ "float32", TD_FLOAT32, 4 }, { "float64", TD_FLOAT64, 8 },
		{ "bfloat16", TD_BFLOAT16, 2 }, { "float16", TD_FLOAT16, 2 },
		{ "int64", TD_OTHER, 8 },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i].name)) {
			*td = known[i].td;
			return known[i].size;
		}
	return 0;
}

static bool rd(int pid, uint64_t addr, void *buf, size_t len)
{
	return procfs__read_mem(pid, addr, buf, len);
}

uint64_t torch_tensor__span_bytes(const struct tensor_desc *d)
{
	uint64_t last = 0;

	if (!d->numel)
		return 0;
	for (int i = 0; i < d->dim; i++)
		last += (uint64_t)(d->sizes[i] - 1) * (uint64_t)d->strides[i];
	return (last + 1) * (uint64_t)d->elem_size;
}

/* A TensorImpl's fields lie in its first ~180 bytes (probes/torch_layouts.json): read at
 * once, one system call instead of one per field (a snapshot is read in a quiet moment of
 * the job, and the sooner it is done the likelier it is exact). */
#define IMPL_BLOCK 256

struct block {
	uint64_t base;
	size_t len;
	uint8_t b[IMPL_BLOCK];
};

static size_t impl_block_len(const struct torch_layout *l)
{
	int64_t end = l->sizes_and_strides + 8 + 16 * l->inline_dims;
	const int64_t f[][2] = { { l->storage, 8 }, { l->storage_offset, 8 }, { l->numel, 8 },
				 { l->data_type, 2 }, { l->device, 2 }, { l->device_has_value, 1 },
				 { l->autograd_meta, 8 } };

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i][0] + f[i][1] > end)
			end = f[i][0] + f[i][1];
	return end > 0 && end <= IMPL_BLOCK ? (size_t)end : 0;
}

/* A field at addr: from the block when it lies there, else from the target. */
static bool field(int pid, const struct block *k, uint64_t addr, void *out, size_t n)
{
	if (k->len && addr >= k->base && addr + n <= k->base + k->len) {
		memcpy(out, k->b + (addr - k->base), n);
		return true;
	}
	return rd(pid, addr, out, n);
}

int torch_tensor__read_impl(int pid, const struct torch_layout *l, uint64_t impl,
			    struct tensor_desc *d, char *why, size_t size)
{
	uint64_t storage = 0, dim = 0, meta = 0, sas = impl + (uint64_t)l->sizes_and_strides;
	uint16_t type = 0;
	int8_t dev[2] = {};
	uint8_t has_value = 0;
	int64_t prod = 1;
	struct block k = { .base = impl, .len = impl_block_len(l) };
	uint64_t sblk[16];

	memset(d, 0, sizeof(*d));
	d->impl = impl;
	if (k.len && !rd(pid, impl, k.b, k.len))
		k.len = 0;	/* field by field, as far as they can be read */
	if (!field(pid, &k, impl + (uint64_t)l->storage, &storage, 8) ||
	    !field(pid, &k, sas, &dim, 8) ||
	    !field(pid, &k, impl + (uint64_t)l->storage_offset, &d->storage_offset, 8) ||
	    !field(pid, &k, impl + (uint64_t)l->numel, &d->numel, 8) ||
	    !field(pid, &k, impl + (uint64_t)l->data_type, &type, 2) ||
	    !field(pid, &k, impl + (uint64_t)l->device, dev, 2) ||
	    !field(pid, &k, impl + (uint64_t)l->device_has_value, &has_value, 1) ||
	    !field(pid, &k, impl + (uint64_t)l->autograd_meta, &meta, 8)) {
		snprintf(why, size, "TensorImpl at 0x%llx is not readable", (unsigned long long)impl);
		return -EIO;
	}
	if (!storage) {
		snprintf(why, size, "no storage (an undefined tensor)");
		return -ENODATA;
	}
	if (dim > TENSOR_MAX_DIM) {
		snprintf(why, size, "dim %llu: not a tensor of this layout (torch %s)",
			 (unsigned long long)dim, l->version);
		return -EINVAL;
	}
	d->dim = (int)dim;
	if ((int64_t)dim <= l->inline_dims) {
		if (!field(pid, &k, sas + 8, d->sizes, dim * 8) ||
		    !field(pid, &k, sas + 8 + 8 * (uint64_t)l->inline_dims, d->strides, dim * 8))
			goto unreadable;
	} else {	/* out of line: one heap block, sizes then strides */
		uint64_t heap = 0;

		if (!rd(pid, sas + 8, &heap, 8) || !rd(pid, heap, d->sizes, dim * 8) ||
		    !rd(pid, heap + dim * 8, d->strides, dim * 8))
			goto unreadable;
	}
	for (int i = 0; i < d->dim; i++) {
		if (d->sizes[i] < 0 || d->strides[i] < 0 || d->sizes[i] > (1ll << 40)) {
			snprintf(why, size, "size %lld / stride %lld of dim %d out of range (torch %s)",
				 (long long)d->sizes[i], (long long)d->strides[i], i, l->version);
			return -EINVAL;
		}
		prod *= d->sizes[i];
	}
	if (prod != d->numel) {
		snprintf(why, size, "numel %lld is not the product of the sizes (%lld): the layout "
			 "for torch %s does not fit this build", (long long)d->numel,
			 (long long)prod, l->version);
		return -EINVAL;
	}
	if (type >= 64 || !l->dtypes[type][0]) {
		snprintf(why, size, "dtype index %u is not one torch_layouts.json knows", type);
		return -EINVAL;
	}
	snprintf(d->dtype, sizeof(d->dtype), "%s", l->dtypes[type]);
	d->elem_size = dtype_of(d->dtype, &d->td);
	if (!d->elem_size) {
		snprintf(why, size, "dtype %s has no element size here", d->dtype);
		return -EINVAL;
	}
	if (has_value != 1 || (dev[0] != 0 && dev[0] != 1)) {
		snprintf(why, size, "device type %d (has_value %u): not CPU or CUDA", (int)dev[0],
			 has_value);
		return -EINVAL;
	}
	d->device_type = (int)dev[0];
	d->device_index = (int)dev[1];	/* -1: none */
	/* the storage's data pointer and size: one read where they lie close */
	k.base = storage;
	k.len = 0;
	if (l->storage_data >= 0 && l->storage_nbytes >= 0 &&
	    (size_t)(l->storage_data > l->storage_nbytes ? l->storage_data : l->storage_nbytes) + 8
	    <= sizeof(sblk)) {
		k.len = (size_t)(l->storage_data > l->storage_nbytes ? l->storage_data
				 : l->storage_nbytes) + 8;
		if (!rd(pid, storage, sblk, k.len))
			k.len = 0;
		memcpy(k.b, sblk, k.len);
	}
	if (!field(pid, &k, storage + (uint64_t)l->storage_data, &d->data, 8) ||
	    !field(pid, &k, storage + (uint64_t)l->storage_nbytes, &d->storage_nbytes, 8))
		goto unreadable;
	if (d->storage_offset < 0 || d->storage_nbytes < 0 ||
	    (uint64_t)d->storage_offset * (uint64_t)d->elem_size + torch_tensor__span_bytes(d) >
	    (uint64_t)d->storage_nbytes || (d->numel && !d->data)) {
		snprintf(why, size, "the storage (%lld bytes) does not cover the view (offset %lld, "
			 "%llu bytes): the layout for torch %s does not fit this build",
			 (long long)d->storage_nbytes, (long long)d->storage_offset,
			 (unsigned long long)torch_tensor__span_bytes(d), l->version);
		return -EINVAL;
	}
	if (meta) {
		uint64_t g = 0, gstorage = 0;

		/* an undefined .grad is UndefinedTensorImpl's singleton: no storage */
		if (rd(pid, meta + (uint64_t)l->grad, &g, 8) && g &&
		    rd(pid, g + (uint64_t)l->storage, &gstorage, 8) && gstorage)
			d->grad_impl = g;
	}
	return 0;
unreadable:
	snprintf(why, size, "TensorImpl at 0x%llx: sizes or storage not readable",
		 (unsigned long long)impl);
	return -EIO;
}

int torch_tensor__read_object(int pid, const struct torch_layout *l, uint64_t obj,
			      struct tensor_desc *d, char *why, size_t size)
{
	uint64_t impl = 0;

	if (!rd(pid, obj + (uint64_t)l->thp_cdata, &impl, 8) || !impl) {
		snprintf(why, size, "Python tensor object at 0x%llx has no TensorImpl",
			 (unsigned long long)obj);
		return -EIO;
	}
	return torch_tensor__read_impl(pid, l, impl, d, why, size);
}

static bool row_major(const struct tensor_desc *d)
{
	int64_t expect = 1;

	for (int i = d->dim - 1; i >= 0; i--) {
		if (d->sizes[i] != 1 && d->strides[i] != expect)
			return false;
		expect *= d->sizes[i];
	}
	return true;
}

/* Flushes a batch of remote ranges into consecutive bytes of out. */
static bool read_batch(int pid, struct iovec *remote, int n, uint8_t *out, uint64_t *bytes)
{
	struct iovec local;
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += remote[i].iov_len;
	local.iov_base = out;
	local.iov_len = len;
	if (process_vm_readv(pid, &local, 1, remote, (unsigned long)n, 0) != (ssize_t)len)
		return false;
	*bytes += len;
	return true;
}

/* Byte offset of row-major element i from the view's first element. */
static uint64_t elem_offset(const struct tensor_desc *d, uint64_t i)
{
	uint64_t off = 0;

	for (int k = d->dim - 1; k >= 0; k--) {
		uint64_t s = (uint64_t)d->sizes[k];

		off += (i % s) * (uint64_t)d->strides[k];
		i /= s;
	}
	return off * (uint64_t)d->elem_size;
}

int torch_tensor__gather(int pid, const struct tensor_desc *d, uint64_t every, uint64_t block,
			 void *out, uint64_t *n, uint64_t *bytes_read)
{
	uint64_t base = d->data + (uint64_t)d->storage_offset * (uint64_t)d->elem_size;
	uint64_t es = (uint64_t)d->elem_size, numel = (uint64_t)d->numel;
	bool contiguous = row_major(d);
	struct iovec iov[IOV_BATCH];
	uint8_t *o = out, *batch_out = out;
	int k = 0;

	*n = 0;
	if (!every)
		every = 1;
	if (!block)
		block = 1;
	if (every == 1 && contiguous) {	/* the common case: big sequential reads */
		for (uint64_t off = 0; off < numel * es; off += CHUNK) {
			uint64_t len = numel * es - off < CHUNK ? numel * es - off : CHUNK;

			if (!procfs__read_mem(pid, base + off, o + off, len))
				return -EIO;
			*bytes_read += len;
		}
		*n = numel;
		return 0;
	}
	for (uint64_t start = 0; start < numel; start += block * every) {
		uint64_t end = start + block < numel ? start + block : numel;

		if (contiguous) {
			iov[k].iov_base = (void *)(uintptr_t)(base + start * es);
			iov[k].iov_len = (end - start) * es;
			k++;
			o += (end - start) * es;
		} else {
			for (uint64_t i = start; i < end; i++) {
				iov[k].iov_base = (void *)(uintptr_t)(base + elem_offset(d, i));
				iov[k].iov_len = es;
				k++;
				o += es;
				if (k == IOV_BATCH) {
					if (!read_batch(pid, iov, k, batch_out, bytes_read))
						return -EIO;
					batch_out = o;
					k = 0;
				}
			}
		}
		*n += end - start;
		if (k == IOV_BATCH) {
			if (!read_batch(pid, iov, k, batch_out, bytes_read))
				return -EIO;
			batch_out = o;
			k = 0;
		}
	}
	if (k && !read_batch(pid, iov, k, batch_out, bytes_read))
		return -EIO;
	return 0;
}

uint64_t torch_tensor__sampled_count(uint64_t numel, uint64_t every, uint64_t block)
{
	uint64_t stride, full, rest;

	every = every ? every : 1;
	block = block ? block : 1;
	stride = every * block;
	full = numel / stride;
	rest = numel % stride;
	return full * block + (rest < block ? rest : block);
}

int torch_tensor__gather_local(const struct tensor_desc *d, const uint8_t *span, uint64_t every,
			       uint64_t block, void *out, uint64_t *n)
{
	uint64_t es = (uint64_t)d->elem_size, numel = (uint64_t)d->numel;
	uint8_t *o = out;

	*n = 0;
	if (!every)
		every = 1;
	if (!block)
		block = 1;
	if (every == 1 && row_major(d)) {
		memcpy(o, span, numel * es);
		*n = numel;
		return 0;
	}
	for (uint64_t start = 0; start < numel; start += block * every) {
		uint64_t end = start + block < numel ? start + block : numel;

		for (uint64_t i = start; i < end; i++, o += es)
			memcpy(o, span + elem_offset(d, i), es);
		*n += end - start;
	}
	return 0;
}
