// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// pyobj/tensor_layout_find.c on crafted memory images in this process (read back through
// process_vm_readv, as from a target): Parameter objects, TensorImpls, StorageImpls and
// AutogradMetas laid out as torch 2.13 and 1.13 lay them out (probes/torch_layouts.json),
// with a gradient or without; the search must find exactly the table's offsets, refuse what
// it cannot tell apart, and a CUDA parameter must be listed with its device and labelled
// `device memory` (its data pointer is not readable from here, as on a GPU node).
// pyobj/tensor_layout_cache.c: what it keeps reads back, a file that is not one is refused.
#include <stdint.h>
#include <sys/mman.h>
#include "unit.h"
#include "pyobj/tensor_layout_cache.h"
#include "pyobj/tensor_layout_find.h"
#include "pyobj/torch_tensor.h"

struct fake {
	uint64_t obj[8];
	uint64_t impl[32], storage[16], meta[16], version[4];
	uint64_t gimpl[32], gstorage[16];
	float data[256], gdata[256];
};

static uint64_t vtable[4], undef_impl[32];	/* UndefinedTensorImpl: no storage */

static void put_dev(uint8_t *b, const struct torch_layout *l, int type, int index)
{
	b[l->device] = (uint8_t)type;	/* {type, index} in 1.x and 2.x, the flag apart */
	b[l->device + 1] = (uint8_t)index;
	b[l->device_has_value] = 1;
}

static void put_impl(uint64_t *impl, uint64_t *storage, const struct torch_layout *l, int dim,
		     const int64_t *sizes, const int64_t *strides, int64_t numel, uint64_t data,
		     int dev)
{
	uint8_t *b = (uint8_t *)impl, *s = (uint8_t *)storage;
	uint64_t nbytes = (uint64_t)numel * 4, one = 1, sp = (uint64_t)(uintptr_t)storage;
	uint64_t vt = (uint64_t)(uintptr_t)vtable;
	uint16_t type = 6;	/* float32 */

	memset(impl, 0, 256);
	memset(storage, 0, 128);
	memcpy(b, &vt, 8);
	memcpy(b + 8, &one, 8);
	memcpy(b + l->storage, &sp, 8);
	memcpy(b + l->sizes_and_strides, &(uint64_t){ (uint64_t)dim }, 8);
	for (int k = 0; k < dim; k++) {
		memcpy(b + l->sizes_and_strides + 8 + 8 * k, &sizes[k], 8);
		memcpy(b + l->sizes_and_strides + 8 + 8 * (l->inline_dims + k), &strides[k], 8);
	}
	memcpy(b + l->numel, &numel, 8);
	memcpy(b + l->data_type, &type, 2);
	put_dev(b, l, dev, dev ? 0 : -1);
	memcpy(s, &vt, 8);
	memcpy(s + 8, &one, 8);
	memcpy(s + l->storage_data, &data, 8);
	memcpy(s + l->storage_data + 8, &data, 8);	/* the DataPtr's context */
	memcpy(s + l->storage_nbytes, &nbytes, 8);
}

/* One parameter: sizes (strides row-major unless given), a .grad when grad. */
static void make(struct fake *f, const struct torch_layout *l, int dim, const int64_t *sizes,
		 const int64_t *strides, bool grad, uint64_t device_data)
{
	int64_t st[TENSOR_MAX_DIM], numel = 1;
	uint64_t impl = (uint64_t)(uintptr_t)f->impl, meta = (uint64_t)(uintptr_t)f->meta;
	uint64_t g = grad ? (uint64_t)(uintptr_t)f->gimpl : (uint64_t)(uintptr_t)undef_impl;
	uint64_t ver = (uint64_t)(uintptr_t)f->version, self = (uint64_t)(uintptr_t)f->obj;

	memset(f, 0, sizeof(*f));
	for (int k = dim - 1; k >= 0; k--) {
		st[k] = strides ? strides[k] : numel;
		numel *= sizes[k];
	}
	for (int i = 0; i < numel; i++)
		f->data[i] = (float)i * 0.5f, f->gdata[i] = -(float)i;
	f->obj[0] = 1;
	f->obj[1] = (uint64_t)(uintptr_t)vtable;	/* its class */
	memcpy((uint8_t *)f->obj + l->thp_cdata, &impl, 8);
	put_impl(f->impl, f->storage, l, dim, sizes, st, numel,
		 device_data ? device_data : (uint64_t)(uintptr_t)f->data, device_data ? 1 : 0);
	memcpy((uint8_t *)f->impl + l->autograd_meta, &meta, 8);
	/* other pointers a TensorImpl holds: its version counter, its PyObject */
	memcpy((uint8_t *)f->impl + l->autograd_meta + 16, &ver, 8);
	memcpy((uint8_t *)f->impl + l->autograd_meta + 24, &self, 8);
	f->meta[0] = (uint64_t)(uintptr_t)vtable;
	memcpy((uint8_t *)f->meta + l->grad, &g, 8);
	if (grad)
		put_impl(f->gimpl, f->gstorage, l, dim, sizes, st, numel,
			 device_data ? device_data + 4096 : (uint64_t)(uintptr_t)f->gdata,
			 device_data ? 1 : 0);
}

static struct torch_layout table(const char *version)
{
	struct torch_layout l;
	char why[200];

	if (torch_layout__find(version, &l, why, sizeof(why)))
		UNIT_FAIL("%s", why);
	return l;
}

static const int64_t S1[] = { 16, 12 }, S2[] = { 16 }, S3[] = { 4, 16 }, S4[] = { 4 },
		     S5[] = { 8, 12 }, T5[] = { 1, 8 }, S6[] = { 5 };

/* The workload's model (tests/workloads/snapshots.py): six shapes, one transposed. */
static size_t model(struct fake *f, const struct torch_layout *l, bool grads, uint64_t dev,
		    uint64_t *objs)
{
	make(&f[0], l, 2, S1, NULL, grads, dev);
	make(&f[1], l, 1, S2, NULL, grads, dev ? dev + 8192 : 0);
	make(&f[2], l, 2, S3, NULL, grads, dev ? dev + 16384 : 0);
	make(&f[3], l, 1, S4, NULL, grads, dev ? dev + 24576 : 0);
	make(&f[4], l, 2, S5, T5, grads, dev ? dev + 32768 : 0);
	make(&f[5], l, 1, S6, NULL, false, dev ? dev + 40960 : 0);	/* never gets a grad */
	for (size_t i = 0; i < 6; i++)
		objs[i] = (uint64_t)(uintptr_t)f[i].obj;
	return 6;
}

static bool same(const struct torch_layout *a, const struct torch_layout *b)
{
	return a->thp_cdata == b->thp_cdata && a->storage == b->storage &&
	       a->storage_data == b->storage_data && a->storage_nbytes == b->storage_nbytes &&
	       a->autograd_meta == b->autograd_meta && a->grad == b->grad &&
	       a->sizes_and_strides == b->sizes_and_strides && a->inline_dims == b->inline_dims &&
	       a->storage_offset == b->storage_offset && a->numel == b->numel &&
	       a->data_type == b->data_type && a->device == b->device &&
	       a->device_has_value == b->device_has_value;
}

static struct fake F[6];

static void finds(const char *version, bool grads)
{
	struct torch_layout want = table(version), got = {};
	uint64_t objs[6];
	size_t n = model(F, &want, grads, 0, objs);
	bool checked = true;
	char why[320] = "";

	undef_impl[0] = (uint64_t)(uintptr_t)vtable;
	torch_layout__dtypes(&got);
	if (!ASSERT_OK(tensor_layout__search(getpid(), objs, n, &got, &checked, why, sizeof(why)),
		       why))
		return;
	ASSERT_TRUE(same(&got, &want), "the table's offsets");
	ASSERT_EQ(checked, grads, "grad offset confirmed only with a .grad");
	ASSERT_OK(tensor_layout__verify(getpid(), objs, n, &want, why, sizeof(why)), why);
}

static void found_213(void)
{
	finds("2.13.0+cpu", true);
	finds("2.13.0+cpu", false);
}

static void found_113(void)
{
	finds("1.13.0a0", true);	/* MaybeOwned at +24, c10::optional's flag first */
}

static void found_26(void)
{
	finds("2.6.0+debian", true);
}

static void cuda_listed_not_read(void)
{
	struct torch_layout want = table("2.13.0+cpu"), got = {};
	/* a GPU allocation's address: not readable from here, as on a GPU node */
	void *gpu = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t objs[6];
	size_t n;
	bool checked;
	char why[320] = "";
	struct tensor_desc d = {};

	if (!ASSERT_TRUE(gpu != MAP_FAILED, "mmap"))
		return;
	n = model(F, &want, true, (uint64_t)(uintptr_t)gpu, objs);
	torch_layout__dtypes(&got);
	if (ASSERT_OK(tensor_layout__search(getpid(), objs, n, &got, &checked, why, sizeof(why)),
		      why))
		ASSERT_TRUE(same(&got, &want), "the table's offsets, from CUDA parameters");
	if (ASSERT_OK(torch_tensor__read_object(getpid(), &want, objs[0], &d, why, sizeof(why)),
		      why)) {
		ASSERT_EQ(d.device_type, 1, "CUDA");
		ASSERT_EQ(d.device_index, 0, "cuda:0");
		ASSERT_EQ(d.numel, 16 * 12, "numel");
		ASSERT_STREQ(d.dtype, "float32", "dtype");
		ASSERT_STREQ(torch_tensor__not_read(&d), "device memory", "labelled");
	}
	make(&F[1], &want, 1, S2, NULL, true, 0);	/* a CPU one beside them */
	if (ASSERT_OK(torch_tensor__read_object(getpid(), &want, objs[1], &d, why, sizeof(why)),
		      why))
		ASSERT_TRUE(torch_tensor__not_read(&d) == NULL, "a CPU tensor is read");
	munmap(gpu, 1 << 16);
}

static void refuses(void)
{
	struct torch_layout want = table("2.13.0+cpu"), got = {};
	uint64_t objs[6];
	bool checked;
	char why[320] = "";

	torch_layout__dtypes(&got);
	model(F, &want, true, 0, objs);
	ASSERT_ERR(tensor_layout__search(getpid(), objs, 2, &got, &checked, why, sizeof(why)),
		   "two parameters");
	ASSERT_HAS_SUBSTR(why, "layout not found: fewer than 3", "why");
	/* three of one shape: nothing tells the offsets apart */
	make(&F[1], &want, 2, S1, NULL, true, 0);
	make(&F[2], &want, 2, S1, NULL, true, 0);
	ASSERT_ERR(tensor_layout__search(getpid(), objs, 3, &got, &checked, why, sizeof(why)),
		   "one shape");
	ASSERT_HAS_SUBSTR(why, "layout not found:", "why");
	/* a build whose numel is not the product of its sizes anywhere: not a torch we know */
	model(F, &want, true, 0, objs);
	for (int i = 0; i < 6; i++)
		memset((uint8_t *)F[i].impl + want.numel, 0x7f, 8);
	ASSERT_ERR(tensor_layout__search(getpid(), objs, 6, &got, &checked, why, sizeof(why)),
		   "no numel");
	ASSERT_HAS_SUBSTR(why, "layout not found:", "why");
	/* the table's entry checked against a build it does not fit */
	ASSERT_ERR(tensor_layout__verify(getpid(), objs, 6, &want, why, sizeof(why)), "verify");
	ASSERT_HAS_SUBSTR(why, "numel", "why");
}

static void cache_round_trip(void)
{
	char dir[] = "/tmp/cirron-layout-XXXXXX", path[128], why[320];
	struct torch_layout l = table("2.13.0+cpu"), back;
	FILE *f;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	ASSERT_EQ(tensor_layout_cache__load(dir, "abc123", "2.13.0+cpu", &back, why, sizeof(why)),
		  -ENOENT, "none kept");
	ASSERT_OK(tensor_layout_cache__store(dir, "abc123", &l), "store");
	if (ASSERT_OK(tensor_layout_cache__load(dir, "abc123", "2.13.0+cpu", &back, why,
						sizeof(why)), why)) {
		ASSERT_TRUE(same(&back, &l), "read back");
		ASSERT_STREQ(back.dtypes[6], "float32", "dtypes kept");
	}
	ASSERT_EQ(tensor_layout_cache__store(dir, "../x", &l), -EINVAL, "not a build-id");
	snprintf(path, sizeof(path), "%s/torch-layout-abc123.json", dir);
	f = fopen(path, "w");
	if (ASSERT_OK_PTR(f, "fopen")) {
		fputs("{not json", f);
		fclose(f);
	}
	ASSERT_EQ(tensor_layout_cache__load(dir, "abc123", "2.13.0+cpu", &back, why, sizeof(why)),
		  -EINVAL, "garbage");
	ASSERT_HAS_SUBSTR(why, path, "names the file");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN_TEST(found_213);
	RUN_TEST(found_113);
	RUN_TEST(found_26);
	RUN_TEST(cuda_listed_not_read);
	RUN_TEST(refuses);
	RUN_TEST(cache_round_trip);
	return unit__done();
}
