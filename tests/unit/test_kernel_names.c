// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include "traced/kernel_names.h"
#include "unit.h"

/* A name, handles standing for it (a CUDA 13 handle for its stub, a CUfunction for its
 * CUkernel), a key renamed, unknown keys. */
static void names_and_aliases(void)
{
	struct kernel_names k = {};

	ASSERT_OK(kernel_names__name(&k, 0x1000, "_Z8kernel_aPf"), "name");
	ASSERT_OK(kernel_names__alias(&k, 0x7f00, 0x1000), "handle for the stub");
	ASSERT_OK(kernel_names__alias(&k, 0x8f00, 0x7f00), "a function for the handle");
	ASSERT_STREQ(kernel_names__get(&k, 0x1000), "kernel_a(float*)", "demangled");
	ASSERT_STREQ(kernel_names__get(&k, 0x8f00), "kernel_a(float*)", "through two aliases");
	ASSERT_EQ(kernel_names__end(&k, 0x8f00), 0x1000, "the chain's end");
	ASSERT_EQ(kernel_names__end(&k, 0x4242), 0x4242, "an unknown key is its own end");
	ASSERT_TRUE(kernel_names__get(&k, 0x4242) == NULL, "unknown");
	ASSERT_OK(kernel_names__name(&k, 0x7f00, "plain_c_name"), "a handle named itself");
	ASSERT_STREQ(kernel_names__get(&k, 0x8f00), "plain_c_name", "the newer name wins");
	ASSERT_EQ(kernel_names__alias(&k, 0x5, 0x5), -EINVAL, "no alias of itself");
	ASSERT_EQ(kernel_names__name(&k, 0, "x"), -EINVAL, "no key 0");
	/* a loop of aliases ends */
	ASSERT_OK(kernel_names__alias(&k, 0xa, 0xb), "a -> b");
	ASSERT_OK(kernel_names__alias(&k, 0xb, 0xa), "b -> a");
	ASSERT_TRUE(kernel_names__get(&k, 0xa) == NULL, "a loop names nothing");
	kernel_names__free(&k);
}

/* Many keys (the table grows), then the bound. */
static void bounded(void)
{
	struct kernel_names k = {};
	char name[32];

	for (uint64_t i = 1; i <= KERNEL_NAMES_MAX; i++) {
		snprintf(name, sizeof(name), "k%llu", (unsigned long long)i);
		if (kernel_names__name(&k, i << 4, name)) {
			UNIT_FAIL("key %llu not kept", (unsigned long long)i);
			break;
		}
	}
	ASSERT_STREQ(kernel_names__get(&k, 12345 << 4), "k12345", "found among many");
	ASSERT_EQ(kernel_names__name(&k, (uint64_t)(KERNEL_NAMES_MAX + 5) << 4, "one more"), -ENOSPC,
		  "full");
	ASSERT_EQ(k.dropped, 1, "dropped counted");
	ASSERT_OK(kernel_names__name(&k, 7 << 4, "renamed"), "a known key can be renamed");
	ASSERT_STREQ(kernel_names__get(&k, 7 << 4), "renamed", "renamed");
	kernel_names__free(&k);
}

int main(void)
{
	RUN_TEST(names_and_aliases);
	RUN_TEST(bounded);
	return unit__done();
}
