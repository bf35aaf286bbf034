// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exits of a function (issue 24): rets, tail calls, a split-off part with its own exit, found
// by disassembling the body and reading the unwind table, in a whole and a stripped library
// (tests/targets/exit_shapes.S, built by make as .output/tests/libexit_shapes*.so).
#include <string.h>
#include "target/elf_syms.h"
#include "target/func_exits.h"
#include "unit.h"

#define LIB ".output/tests/libexit_shapes.so"
#define STRIPPED ".output/tests/libexit_shapes_stripped.so"

/* the file offset (= vaddr in this little library) of each name, from the whole library */
static uint64_t where(const char *name)
{
	struct sym_query q = { .name = name };
	uint64_t v = 0;

	if (elf_syms__resolve(LIB, &q, 1) == 1)
		v = q.file_offset;
	free(q.found);
	return v;
}

static bool has(const struct func_exits *e, uint64_t off)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->offsets[i] == off)
			return true;
	return false;
}

static void check(const char *lib, const char *fn, const char *const *exits, size_t n,
		  size_t parts)
{
	struct func_exits e;
	char why[256];

	if (!ASSERT_OK(func_exits__find(lib, where(fn), &e, why, sizeof(why)), fn))
		return;
	ASSERT_EQ(e.n, n, fn);
	ASSERT_EQ(e.parts, parts, "split-off parts");
	ASSERT_EQ(e.no_cfi, 0, "every jump out has unwind info");
	for (size_t i = 0; i < n; i++)
		ASSERT_TRUE(has(&e, where(exits[i])), exits[i]);
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

int main(void)
{
	RUN_TEST(whole_library);
	RUN_TEST(stripped_library);
	RUN_TEST(refusals);
	return unit__done();
}
