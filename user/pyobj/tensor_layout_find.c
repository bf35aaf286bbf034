// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Finds where a torch build keeps a tensor's description, in the target itself, from the
// model's own parameters: each torch release moves TensorImpl's fields, and a table
// (probes/torch_layouts.json) only knows the builds someone derived. Nothing Python-level
// states a parameter's shape, so the parameters check each other: an offset is taken only
// when it fits all of them (3 of different shapes at least) and no other offset does.
// Fields whose values cannot be told apart from a parameter alone (storage_offset, 0 for
// parameters; the dtype and device right after numel) are taken where c10 has kept them
// next to numel since 1.x, and checked (a known dtype index, a CPU/CUDA device).
// Reads only: process_vm_readv of the objects, their TensorImpls, StorageImpls and
// AutogradMetas, a few hundred bytes each.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/tensor_layout_find.h"

#define OBJ_BLOCK	64	/* the THPVariable: PyObject header, then the tensor */
#define IMPL_BLOCK	256	/* TensorImpl's fields (about 180 bytes in 1.13 to 2.13) */
#define SUB_BLOCK	128	/* StorageImpl's / AutogradMeta's first fields */
#define GRAD_DEFAULT	40	/* AutogradMeta: vtable, std::string name_, then grad_ */

struct pm {			/* one parameter as found so far */
	uint64_t obj, impl;
	uint8_t b[IMPL_BLOCK];
	size_t blen;
	int dim;		/* -1: beyond the inline dims (not used to decide) */
	int64_t sizes[TENSOR_MAX_DIM], strides[TENSOR_MAX_DIM], numel;
	int esize;
	bool cpu;
};

static uint64_t w64(const uint8_t *b, size_t len, int64_t off)
{
	uint64_t v = 0;

	if (off >= 0 && (size_t)off + 8 <= len)
		memcpy(&v, b + off, 8);
	return v;
}

static bool ptr_like(uint64_t p)
{
	return p >= 4096 && p < (1ull << 56) && !(p & 7);
}

static int esize_of(const char *dtype)
{
	static const struct { const char *n; int s; } k[] = {
		{ "float32", 4 }, { "float64", 8 }, { "bfloat16", 2 }, { "float16", 2 },
		{ "int64", 8 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!strcmp(dtype, k[i].n))
			return k[i].s;
	return 0;
}

/* Dense (no gaps, no overlap) in some order of its dims: a parameter, or a transposed one. */
static bool dense(const int64_t *sizes, const int64_t *strides, int dim)
{
	bool used[TENSOR_MAX_DIM] = {};
	int64_t expect = 1;

	for (int k = 0; k < dim; k++) {
		int best = -1;

		for (int i = 0; i < dim; i++)
			if (!used[i] && (best < 0 || strides[i] < strides[best] ||
					 (strides[i] == strides[best] && sizes[i] < sizes[best])))
				best = i;
		if (best < 0)
			return false;
		used[best] = true;
		if (sizes[best] < 1 || sizes[best] > (1ll << 40))
			return false;
		if (sizes[best] != 1 && strides[best] != expect)
			return false;
		expect *= sizes[best];
	}
	return true;
}

static bool same_shape(const struct pm *a, const struct pm *b)
{
	return a->dim == b->dim && !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->dim);
}

static size_t distinct_shapes(const struct pm *p, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		if (p[i].dim < 0)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = p[j].dim >= 0 && same_shape(&p[i], &p[j]);
		d += !seen;
	}
	return d;
}

/* The device bytes after data_type: std::optional<Device> {type, index, has_value} in 2.x,
 * c10::optional {has_value, type, index} in 1.x. Sets *newer, or returns false. */
static bool device_fits(const struct pm *p, size_t n, int64_t at, bool *newer)
{
	bool nw = true, old = true;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = p[i].b + at;

		if ((size_t)at + 3 > p[i].blen)
			return false;
		nw = nw && d[2] == 1 && d[0] <= 1;
		old = old && d[0] == 1 && d[1] <= 1;
	}
	*newer = nw;	/* both fit only for cuda:1 everywhere: the same meaning either way */
	return nw || old;
}

/* sizes_and_strides at s (inline_dims nd), numel at m: fits every parameter? Fills p. */
static bool sizes_fit(struct pm *p, size_t n, int64_t s, int nd, int64_t m,
		      const struct torch_layout *l)
{
	size_t decided = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t dim = w64(p[i].b, p[i].blen, s);
		int64_t numel = (int64_t)w64(p[i].b, p[i].blen, m), prod = 1;
		int64_t off = (int64_t)w64(p[i].b, p[i].blen, m - 8);
		uint16_t type;

		if (m + 10 > (int64_t)p[i].blen || dim > TENSOR_MAX_DIM || numel < 0 ||
		    off < 0 || off > (1ll << 40))
			return false;
		memcpy(&type, p[i].b + m + 8, 2);
		if (type >= 64 || !l->dtypes[type][0] || !(p[i].esize = esize_of(l->dtypes[type])))
			return false;
		p[i].numel = numel;
		if ((int)dim > nd) {	/* sizes on the heap: not read here */
			p[i].dim = -1;
			continue;
		}
		p[i].dim = (int)dim;
		for (int k = 0; k < (int)dim; k++) {
			p[i].sizes[k] = (int64_t)w64(p[i].b, p[i].blen, s + 8 + 8 * k);
			p[i].strides[k] = (int64_t)w64(p[i].b, p[i].blen, s + 8 + 8 * (nd + k));
			prod *= p[i].sizes[k];
		}
		if (!dense(p[i].sizes, p[i].strides, (int)dim) || prod != numel)
			return false;
		decided++;
	}
	return decided >= 3 && distinct_shapes(p, n) >= 3;
}

/* The storage pointer at ps in the TensorImpl, its data at sd and nbytes at sn: the
 * storage holds every parameter (exactly, for 3 or more: a parameter owns its storage), the
 * data pointers differ, a CPU one is readable at both ends. */
static bool storage_fits(int pid, const struct pm *p, size_t n, int64_t ps, int64_t *sd,
			 int64_t *sn)
{
	uint8_t (*sb)[SUB_BLOCK] = calloc(n, SUB_BLOCK);	/* a worker per target: no static */
	bool found = false;

	if (!sb)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint64_t st = w64(p[i].b, p[i].blen, ps);

		if (!ptr_like(st) || st == p[i].impl || !procfs__read_mem(pid, st, sb[i], SUB_BLOCK))
			goto out;
	}
	for (int64_t b = 8; b + 8 <= SUB_BLOCK && !found; b += 8) {
		size_t exact = 0;
		bool ok = true;

		for (size_t i = 0; i < n && ok; i++) {
			uint64_t nb = w64(sb[i], SUB_BLOCK, b), need;

			need = (uint64_t)p[i].numel * (uint64_t)p[i].esize;
			ok = nb >= need && nb < (1ull << 48);
			exact += nb == need && need;
		}
		if (!ok || exact < (n < 3 ? n : 3))
			continue;
		for (int64_t d = 8; d < b; d += 8) {
			ok = true;
			for (size_t i = 0; i < n && ok; i++) {
				uint64_t data = w64(sb[i], SUB_BLOCK, d), nb = w64(sb[i], SUB_BLOCK, b);
				uint8_t c;

				ok = ptr_like(data) || (!data && !nb);
				for (size_t j = 0; j < i && ok; j++)
					ok = !data || data != w64(sb[j], SUB_BLOCK, d);
				if (ok && data && p[i].cpu)
					ok = procfs__read_mem(pid, data, &c, 1) &&
					     procfs__read_mem(pid, data + nb - 1, &c, 1);
			}
			if (ok) {
				*sd = d;
				*sn = b;
				found = true;
				break;
			}
		}
	}
out:
	free(sb);
	return found;
}

/* Whether g is the TensorImpl of a gradient of p (its shape), read with l. */
static bool grad_of(int pid, const struct torch_layout *l, const struct pm *p, uint64_t g)
{
	struct tensor_desc d;
	char why[200];

	if (!ptr_like(g) || g == p->impl || p->dim < 0)
		return false;
	if (torch_tensor__read_impl(pid, l, g, &d, why, sizeof(why)))
		return false;
	return d.dim == p->dim && !memcmp(d.sizes, p->sizes, sizeof(int64_t) * (size_t)p->dim);
}

/* AutogradMeta * at am, grad_ at gr in it: every parameter's is its .grad (same shape, not
 * itself) or one shared value with no storage (UndefinedTensorImpl's singleton); *grads:
 * how many had a real one. */
static bool meta_fits(int pid, const struct pm *p, size_t n, struct torch_layout *l, int64_t am,
		      int64_t gr, size_t *grads)
{
	uint64_t undef = 0;
	size_t with_meta = 0;

	*grads = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t m = w64(p[i].b, p[i].blen, am), g = 0, st = 1;

		if (!m)
			continue;	/* requires_grad=False */
		if (!ptr_like(m) || m == p[i].obj || !procfs__read_mem(pid, m + (uint64_t)gr, &g, 8))
			return false;
		with_meta++;
		l->autograd_meta = am;
		l->grad = gr;
		if (grad_of(pid, l, &p[i], g)) {
			(*grads)++;
			continue;
		}
		if (!ptr_like(g) || (undef && g != undef) ||
		    !procfs__read_mem(pid, g + (uint64_t)l->storage, &st, 8) || st)
			return false;
		undef = g;
	}
	return with_meta > 0;
}

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "layout not found: %s", msg);
	return -ENOENT;
}

/* Reads the parameters' TensorImpls through the object offset thp. */
static bool load(int pid, struct pm *p, size_t n, int64_t thp)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t o[OBJ_BLOCK];

		if (!procfs__read_mem(pid, p[i].obj, o, sizeof(o)))
			return false;
		p[i].impl = w64(o, sizeof(o), thp);
		if (!ptr_like(p[i].impl))
			return false;
		p[i].blen = IMPL_BLOCK;	/* a TensorImpl near a mapping's end: less */
		while (p[i].blen >= 128 && !procfs__read_mem(pid, p[i].impl, p[i].b, p[i].blen))
			p[i].blen -= 32;
		if (p[i].blen < 128)
			return false;
	}
	return true;
}

int tensor_layout__search(int pid, const uint64_t *objs, size_t n, struct torch_layout *l,
			  bool *grad_checked, char *why, size_t size)
{
	static const int64_t thps[] = { 16, 24, 32 };	/* after ob_refcnt, ob_type (+ a flag) */
	struct pm *p;
	struct torch_layout found = *l;
	int fits = 0;
	bool loaded_any = false;
	char msg[200] = "no offsets fit the parameters' sizes and numel";

	if (n > LAYOUT_FIND_MAX_PARAMS)
		n = LAYOUT_FIND_MAX_PARAMS;
	if (n < 3)
		return fail(why, size, "fewer than 3 parameters to check offsets against");
	p = calloc(n, sizeof(*p));
	if (!p)
		return fail(why, size, "out of memory");
	for (size_t i = 0; i < n; i++)
		p[i].obj = objs[i];
	for (size_t t = 0; t < sizeof(thps) / sizeof(thps[0]); t++) {
		if (!load(pid, p, n, thps[t]))
			continue;
		loaded_any = true;
		for (int nd = 5; nd >= 4; nd--)	/* c10's inline dims: 5 since torch 1.x */
			for (int64_t s = 24; s + 8 + 16 * nd + 24 <= IMPL_BLOCK; s += 8)
				for (int64_t m = s + 8 + 16 * nd + 8; m + 16 <= IMPL_BLOCK; m += 8) {
					struct torch_layout c = *l;
					bool newer;

					if (!sizes_fit(p, n, s, nd, m, &c) || !device_fits(p, n, m + 10, &newer))
						continue;
					c.thp_cdata = thps[t];
					c.sizes_and_strides = s;
					c.inline_dims = nd;
					c.numel = m;
					c.storage_offset = m - 8;
					c.data_type = m + 8;
					c.device = newer ? m + 10 : m + 11;
					c.device_has_value = newer ? m + 12 : m + 10;
					for (size_t i = 0; i < n; i++)
						p[i].cpu = p[i].b[c.device] == 0;
					if (fits++ == 0)
						found = c;
					break;	/* numel: the first offset past sizes that fits */
				}
	}
	if (!loaded_any) {
		free(p);
		return fail(why, size, "the parameters' objects hold no readable TensorImpl pointer "
			    "at +16, +24 or +32 (not torch tensors of a known kind?)");
	}
	if (fits != 1) {
		if (fits > 1)
			snprintf(msg, sizeof(msg), "%d layouts fit the parameters' sizes (too few "
				 "different shapes to tell them apart)", fits);
		else if (distinct_shapes(p, n) < 3)
			snprintf(msg, sizeof(msg), "no offsets fit: 3 parameters of different shapes "
				 "are needed");
		free(p);
		return fail(why, size, msg);
	}
	/* p holds the last thp's reads: read again with the one that fit */
	load(pid, p, n, found.thp_cdata);
	sizes_fit(p, n, found.sizes_and_strides, (int)found.inline_dims, found.numel, &found);
	for (size_t i = 0; i < n; i++)
		p[i].cpu = p[i].b[found.device] == 0;
	fits = 0;
	for (int64_t ps = 8; ps < found.sizes_and_strides; ps += 8) {
		int64_t sd, sn;

		if (!storage_fits(pid, p, n, ps, &sd, &sn))
			continue;
		if (fits++ == 0) {
			found.storage = ps;
			found.storage_data = sd;
			found.storage_nbytes = sn;
		}
	}
	if (fits != 1) {
		free(p);
		return fail(why, size, fits ? "several TensorImpl fields point at what could be the "
			    "storage" : "no TensorImpl field points at a storage that holds the "
			    "parameters' bytes");
	}
	*grad_checked = false;
	for (int64_t am = 8; am < found.sizes_and_strides && !*grad_checked; am += 8) {
		struct torch_layout c = found;
		size_t grads;

		if (am == found.storage)
			continue;
		for (int64_t gr = 8; gr + 8 <= SUB_BLOCK; gr += 8)
			if (meta_fits(pid, p, n, &c, am, gr, &grads) && grads) {
				found.autograd_meta = am;
				found.grad = gr;
				*grad_checked = true;
				break;
			}
	}
	if (!*grad_checked) {	/* no .grad yet: where every torch since 1.x keeps it */
		for (int64_t am = 8; am < found.sizes_and_strides; am += 8) {
			struct torch_layout c = found;
			size_t grads;

			if (am != found.storage && meta_fits(pid, p, n, &c, am, GRAD_DEFAULT, &grads)) {
				found.autograd_meta = am;
				found.grad = GRAD_DEFAULT;
				break;
			}
		}
		if (!found.grad) {
			free(p);
			return fail(why, size, "no TensorImpl field points at an AutogradMeta "
				    "(do the parameters require grad?)");
		}
	}
	free(p);
	*l = found;
	return tensor_layout__verify(pid, objs, n, l, why, size) ? fail(why, size,
		"the offsets found do not read every parameter") : 0;
}

int tensor_layout__verify(int pid, const uint64_t *objs, size_t n, const struct torch_layout *l,
			  char *why, size_t size)
{
	struct pm *p;
	size_t shapes, want = n < 3 ? n : 3;

	if (n > LAYOUT_FIND_MAX_PARAMS)
		n = LAYOUT_FIND_MAX_PARAMS;
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p) {
		snprintf(why, size, "out of memory");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		struct tensor_desc d = {}, g = {};
		char r[200];
		int err = torch_tensor__read_object(pid, l, objs[i], &d, r, sizeof(r));

		if (!err && d.grad_impl)
			err = torch_tensor__read_impl(pid, l, d.grad_impl, &g, r, sizeof(r));
		if (!err && d.grad_impl && (g.dim != d.dim ||
		    memcmp(g.sizes, d.sizes, sizeof(int64_t) * (size_t)d.dim) != 0))
			snprintf(r, sizeof(r), "its .grad has another shape"), err = -EINVAL;
		if (err && err != -ENODATA) {
			snprintf(why, size, "parameter %zu of %zu: %s", i + 1, n, r);
			free(p);
			return -EINVAL;
		}
		p[i].dim = d.dim;
		memcpy(p[i].sizes, d.sizes, sizeof(d.sizes));
	}
	shapes = distinct_shapes(p, n);
	free(p);
	if (shapes < want) {
		snprintf(why, size, "only %zu parameter shapes to check the layout on", shapes);
		return -EINVAL;
	}
	return 0;
}
