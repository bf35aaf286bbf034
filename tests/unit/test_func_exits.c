// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exits of a function (issue 24): rets, tail calls, a split-off part with its own exit, found
// by disassembling the body and reading the unwind table, in a whole and a stripped library
// (tests/targets/exit_shapes.S, built by make as .output/tests/libexit_shapes*.so).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/elf_syms.h"
#include "proc/func_exits.h"
#include "unit.h"

#define LIB ".output/tests/libexit_shapes.so"
#define STRIPPED ".output/tests/libexit_shapes_stripped.so"
/* the aarch64 shapes (tests/targets/exit_shapes_arm64.S), where a cross assembler built them */
#define LIB_ARM64 ".output/tests/libexit_shapes_arm64.so"

/* the file offset (= vaddr in these little libraries) of each name, from the whole library */
static uint64_t where_in(const char *lib, const char *name)
{
	struct sym_query q = { .name = name };
	uint64_t v = 0;

	if (elf_syms__resolve(lib, &q, 1) == 1)
		v = q.file_offset;
	free(q.found);
	return v;
}

static uint64_t where(const char *name)
{
	return where_in(LIB, name);
}

static bool has(const struct func_exits *e, uint64_t off)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->offsets[i] == off)
			return true;
	return false;
}

static void check_in(const char *lib, const char *names, const char *fn,
		     const char *const *exits, size_t n, size_t parts)
{
	struct func_exits e;
	char why[256];

	if (!ASSERT_OK(func_exits__find(lib, where_in(names, fn), &e, why, sizeof(why)), fn))
		return;
	ASSERT_EQ(e.n, n, fn);
	ASSERT_EQ(e.parts, parts, "split-off parts");
	ASSERT_EQ(e.no_cfi, 0, "every jump out has unwind info");
	for (size_t i = 0; i < n; i++)
		ASSERT_TRUE(has(&e, where_in(names, exits[i])), exits[i]);
}

static void check(const char *lib, const char *fn, const char *const *exits, size_t n,
		  size_t parts)
{
	check_in(lib, LIB, fn, exits, n, parts);
}

static void shapes(const char *lib)
{
	static const char *const one[] = { "one_ret_exit" };
	static const char *const tail[] = { "tail_exit_a", "tail_exit_b", "tail_exit_c" };
	static const char *const cold[] = { "with_cold_exit", "cold_exit" };

	check(lib, "one_ret", one, 1, 0);
	check(lib, "two_rets_and_tail", tail, 3, 0);
	/* the jump into with_cold.cold has the frame set up: not an exit, but its part is
	 * decoded (in the stripped library found by its unwind entry alone), and its jump back
	 * into the body is no exit either */
	check(lib, "with_cold", cold, 2, 1);
}

static void whole_library(void)
{
	shapes(LIB);
}

static void stripped_library(void)
{
	shapes(STRIPPED);
}

static void refusals(void)
{
	struct func_exits e;
	char why[256];

	ASSERT_EQ(func_exits__find("/nonexistent/lib.so", 0x1000, &e, why, sizeof(why)), -ENOENT,
		  "no file");
	ASSERT_HAS_SUBSTR(why, "cannot open", "says so");
	ASSERT_EQ(func_exits__find("tests/unit/unit.h", 0x1000, &e, why, sizeof(why)), -ENOEXEC,
		  "not ELF");
	ASSERT_EQ(func_exits__find(LIB, where("one_ret") + 1, &e, why, sizeof(why)), -ENOENT,
		  "no function there");
	ASSERT_HAS_SUBSTR(why, "no function symbol", "says why");
}

/* aarch64 code, read on any machine: rets after autiasp, a tail b with the frame torn down
 * (CFA sp+0), a b.cond inside the body; an authenticated return refused, saying where. */
static void arm64_library(void)
{
	static const char *const one[] = { "one_ret_exit" };
	static const char *const tail[] = { "tail_exit_a", "tail_exit_b", "tail_exit_c" };
	struct func_exits e;
	char why[256], at[32];

	if (access(LIB_ARM64, R_OK)) {
		/* made where the cross assembler is (tests/kernels/install-deps.sh arm64, which
		 * CI runs) */
		ASSERT_FALSE(getenv("CI") && !strcmp(getenv("CI"), "true"),
			     LIB_ARM64 " is built in CI");
		fprintf(stderr, "test_func_exits: no %s (no aarch64-linux-gnu-gcc): "
			"the aarch64 shapes are not checked\n", LIB_ARM64);
		return;
	}
	check_in(LIB_ARM64, LIB_ARM64, "one_ret", one, 1, 0);
	check_in(LIB_ARM64, LIB_ARM64, "two_rets_and_tail", tail, 3, 0);
	ASSERT_LT(func_exits__find(LIB_ARM64, where_in(LIB_ARM64, "auth_ret"), &e, why,
				   sizeof(why)), 0, "retaa: refused");
	snprintf(at, sizeof(at), "0x%llx",
		 (unsigned long long)where_in(LIB_ARM64, "auth_ret_exit"));
	ASSERT_HAS_SUBSTR(why, at, "says where");
}

int main(void)
{
	RUN_TEST(whole_library);
	RUN_TEST(stripped_library);
	RUN_TEST(refusals);
	RUN_TEST(arm64_library);
	return unit__done();
}
