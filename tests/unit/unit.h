/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * A tiny assertion framework in the style of the kernel's BPF selftests (test_progs.h).
 * Each ASSERT_*() logs a failure with file:line and the subtest name, marks the running
 * subtest failed and evaluates to true when the check held, so callers can guard cleanup:
 *
 *	if (!ASSERT_OK_PTR(s, "session__new"))
 *		return;
 *
 * Subtests are functions run with RUN_TEST(fn); main ends with `return unit__done();`, which
 * prints "unit test_<name>: N passed, M failed" (subtests) and returns 1 if any failed.
 */
#ifndef __CIRRON_UNIT_H
#define __CIRRON_UNIT_H

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int unit__passed, unit__failed;
static const char *unit__subtest = "main";
static bool unit__subtest_ok = true;

#define UNIT_FAIL(fmt, ...) ({							\
	fprintf(stderr, "%s:%d: %s: " fmt "\n", __FILE__, __LINE__, unit__subtest,	\
		##__VA_ARGS__);							\
	unit__subtest_ok = false;						\
})

#define ASSERT_TRUE(actual, name) ({						\
	bool ___ok = (actual);							\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: got false", (name));			\
	___ok;									\
})

#define ASSERT_FALSE(actual, name) ({						\
	bool ___ok = !(actual);							\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: got true", (name));			\
	___ok;									\
})

/* Integer comparisons, done as long long (ns timestamps and sizes fit). */
#define ASSERT_CMP(actual, expected, op, name) ({				\
	long long ___a = (long long)(actual), ___e = (long long)(expected);	\
	bool ___ok = ___a op ___e;						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: actual %lld, wanted %s %lld", (name),	\
			  ___a, #op, ___e);					\
	___ok;									\
})
#define ASSERT_EQ(a, e, name)	ASSERT_CMP(a, e, ==, name)
#define ASSERT_NEQ(a, e, name)	ASSERT_CMP(a, e, !=, name)
#define ASSERT_LT(a, e, name)	ASSERT_CMP(a, e, <, name)
#define ASSERT_LE(a, e, name)	ASSERT_CMP(a, e, <=, name)
#define ASSERT_GT(a, e, name)	ASSERT_CMP(a, e, >, name)
#define ASSERT_GE(a, e, name)	ASSERT_CMP(a, e, >=, name)

/* Exact 64-bit unsigned equality (wall-clock ns near 2^61, sizes, addresses). */
#define ASSERT_U64_EQ(actual, expected, name) ({				\
	unsigned long long ___a = (actual), ___e = (expected);			\
	bool ___ok = ___a == ___e;						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: actual %llu (0x%llx) != expected %llu (0x%llx)", \
			  (name), ___a, ___a, ___e, ___e);			\
	___ok;									\
})

#define ASSERT_DBL_EQ(actual, expected, name) ({				\
	double ___a = (actual), ___e = (expected);				\
	bool ___ok = ___a == ___e;						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: actual %g != expected %g", (name), ___a, ___e); \
	___ok;									\
})

#define ASSERT_STREQ(actual, expected, name) ({					\
	const char *___a = (actual), *___e = (expected);			\
	bool ___ok = ___a && ___e ? !strcmp(___a, ___e) : ___a == ___e;		\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: actual '%s' != expected '%s'", (name),	\
			  ___a ? ___a : "(null)", ___e ? ___e : "(null)");	\
	___ok;									\
})

#define ASSERT_HAS_SUBSTR(str, substr, name) ({					\
	const char *___s = (str), *___sub = (substr);				\
	bool ___ok = ___s && strstr(___s, ___sub);				\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: '%s' lacks '%s'", (name),		\
			  ___s ? ___s : "(null)", ___sub);			\
	___ok;									\
})

/* 0 is success; anything else is printed (with its errno name when negative). */
#define ASSERT_OK(res, name) ({							\
	long long ___r = (long long)(res);					\
	bool ___ok = ___r == 0;							\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: error %lld (%s)", (name), ___r,	\
			  ___r < 0 ? strerror((int)-___r) : "not an errno");	\
	___ok;									\
})

#define ASSERT_ERR(res, name) ({						\
	long long ___r = (long long)(res);					\
	bool ___ok = ___r < 0;							\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: success %lld, wanted an error", (name), ___r); \
	___ok;									\
})

#define ASSERT_OK_PTR(ptr, name) ({						\
	const void *___p = (ptr);						\
	bool ___ok = ___p != NULL;						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: NULL", (name));			\
	___ok;									\
})

#define ASSERT_NULL(ptr, name) ({						\
	const void *___p = (ptr);						\
	bool ___ok = ___p == NULL;						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: %p, wanted NULL", (name), ___p);	\
	___ok;									\
})

static inline void unit__run(const char *name, void (*fn)(void))
{
	unit__subtest = name;
	unit__subtest_ok = true;
	fn();
	if (unit__subtest_ok) {
		unit__passed++;
	} else {
		unit__failed++;
		fprintf(stderr, "FAIL %s\n", name);
	}
	unit__subtest = "main";
	unit__subtest_ok = true;
	fflush(NULL);	/* forked children of the next subtest must not repeat our output */
}

#define RUN_TEST(fn) unit__run(#fn, fn)

/* Prints the summary line and returns main's exit code. */
static inline int unit__done_file(const char *file)
{
	const char *base = strrchr(file, '/');
	int len;

	base = base ? base + 1 : file;
	len = (int)strcspn(base, ".");
	if (!unit__subtest_ok)	/* an assertion in main itself */
		unit__failed++;
	printf("unit %.*s: %d passed, %d failed\n", len, base, unit__passed, unit__failed);
	return unit__failed ? 1 : 0;
}

#define unit__done() unit__done_file(__FILE__)

/* Scratch space: a fresh directory under $TMPDIR (or /tmp), removed by unit__rm_rf(). */
static inline bool unit__mkdtemp(char *buf, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, size, "%s/cirron-unit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return ASSERT_OK_PTR(mkdtemp(buf), "mkdtemp");
}

static inline int unit__rm_one(const char *path, const struct stat *st, int flag,
			       struct FTW *ftw)
{
	return remove(path) ? -errno : 0;
}

static inline int unit__rm_rf(const char *path)
{
	return nftw(path, unit__rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes len bytes of data to path (created or truncated). Returns 0 or -errno. */
static inline int unit__write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "we");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Reads a whole file; returns a NUL-terminated malloc'd copy (free it) or NULL. */
static inline char *unit__read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = cap * 2 + 4096 + 1);

			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

#endif /* __CIRRON_UNIT_H */
