// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Finding torch._C._set_grad_enabled's binding without symbols (grad_caller.h), on this test
// binary: it holds a method table like libtorch_python's (a PyMethodDef named
// "_set_grad_enabled", in relocated read-only data), and its functions have FDEs.
#include <fcntl.h>
#include <link.h>
#include "pyobj/grad_caller.h"
#include "unit.h"

struct method_def {	/* CPython's PyMethodDef */
	const char *ml_name;
	void *ml_meth;
	int ml_flags;
	const char *ml_doc;
};

__attribute__((noinline)) static int binding(int v)
{
	asm volatile("" ::: "memory");
	return v + 1;
}

__attribute__((noinline)) static int after_binding(int v)
{
	asm volatile("" ::: "memory");
	return v * 3;
}

static const struct method_def methods[] = {
	{ "_set_grad_enabled", (void *)binding, 3, NULL },
	{ "_other", (void *)after_binding, 1, NULL },
};

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uint64_t *)data = info->dlpi_addr;	/* the first object: the program itself */
	return 1;
}

static void test_method_slot(void)
{
	uint64_t bias = 0, slot = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	ASSERT_OK(fd < 0 ? -errno : 0, "open self");
	dl_iterate_phdr(main_bias, &bias);
	ASSERT_OK(grad_caller__find_slot(fd, &slot), "the method is found");
	ASSERT_EQ(bias + slot, (uint64_t)(uintptr_t)&methods[0].ml_meth, "its ml_meth slot");
	ASSERT_EQ(*(void *const *)(uintptr_t)(bias + slot), (void *)binding, "holds the binding");
	close(fd);
}

static void test_function_bounds(void)
{
	uint64_t bias = 0, start = 0, end = 0, fn;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	dl_iterate_phdr(main_bias, &bias);
	fn = (uint64_t)(uintptr_t)binding - bias;
	ASSERT_OK(grad_caller__function_bounds(fd, fn + 4, &start, &end), "an FDE holds it");
	ASSERT_EQ(start, fn, "the function's start");
	ASSERT_GT(end, fn + 4, "its end after");
	ASSERT_LE(end, fn + 4096, "a small function");
	ASSERT_EQ(binding(1) + after_binding(1), 5, "both are real code");
	ASSERT_EQ(methods[1].ml_flags, 1, "the table is used");
	close(fd);
}

static void test_not_an_elf(void)
{
	uint64_t slot, a, b;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	ASSERT_LT(grad_caller__find_slot(fd, &slot), 0, "no ELF: an error");
	ASSERT_LT(grad_caller__function_bounds(fd, 0, &a, &b), 0, "no ELF: an error");
	close(fd);
}

int main(void)
{
	RUN_TEST(test_method_slot);
	RUN_TEST(test_function_bounds);
	RUN_TEST(test_not_an_elf);
	return unit__done();
}
