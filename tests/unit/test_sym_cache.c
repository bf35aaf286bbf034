// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include "proc/elf_syms.h"
#include "proc/sym_cache.h"
#include "unit.h"

__attribute__((noinline, used)) int cirron_unit_cached_fn(int x)
{
	return x * 7 + 2;
}

__attribute__((noinline, used)) int cirron_unit_cached_other(int x)
{
	return x * 11 - 5;
}

#define NQ 4
static const char *const queries[NQ] = {
	"cirron_unit_cached_fn", "cirron_unit_cached_o*", "@load", "cirron_unit_not_defined",
};

struct fixture {
	char tmp[PATH_MAX];
	char dir[PATH_MAX + 16];	/* the cache */
	char elf[PATH_MAX + 16];	/* a copy of this binary */
	struct sym_query want[NQ];	/* straight from the ELF file */
};

static void queries_init(struct sym_query *q)
{
	memset(q, 0, NQ * sizeof(*q));
	for (int i = 0; i < NQ; i++)
		q[i].name = queries[i];
}

static void queries_free(struct sym_query *q)
{
	for (int i = 0; i < NQ; i++) {
		free(q[i].found);
		q[i].found = NULL;
	}
}

static bool fixture_init(struct fixture *f)
{
	struct sym_query q[2] = { { .name = queries[0] }, { .name = queries[1] } };
	size_t len;
	char *data;
	bool ok;

	memset(f, 0, sizeof(*f));
	if (!unit__mkdtemp(f->tmp, sizeof(f->tmp)))
		return false;
	snprintf(f->dir, sizeof(f->dir), "%s/cache/syms", f->tmp);
	snprintf(f->elf, sizeof(f->elf), "%s/target", f->tmp);
	data = unit__read_file("/proc/self/exe", &len);
	ok = ASSERT_OK_PTR(data, "read /proc/self/exe") &&
	     ASSERT_OK(unit__write_file(f->elf, data, len), "copy it");
	free(data);
	if (!ok)
		return false;

	/* what a correct answer is */
	queries_init(f->want);
	if (!ASSERT_EQ(elf_syms__resolve(f->elf, q, 2), 2, "direct resolve"))
		return false;
	f->want[0] = q[0];
	f->want[1] = q[1];
	f->want[2].found = strdup("@load");
	ASSERT_OK(elf_syms__first_load_vaddr(f->elf, &f->want[2].vaddr), "first load");
	ASSERT_STREQ(f->want[1].found, "cirron_unit_cached_other", "prefix resolves");
	return true;
}

static void fixture_free(struct fixture *f)
{
	queries_free(f->want);
	if (f->tmp[0])
		unit__rm_rf(f->tmp);
}

/* Checks answers against the ELF file's own. */
static bool same_answers(const struct fixture *f, const struct sym_query *q, const char *what)
{
	bool ok = true;

	for (int i = 0; i < NQ; i++) {
		ok &= ASSERT_STREQ(q[i].found, f->want[i].found, what);
		if (q[i].found && f->want[i].found) {
			ok &= ASSERT_U64_EQ(q[i].vaddr, f->want[i].vaddr, what);
			ok &= ASSERT_U64_EQ(q[i].file_offset, f->want[i].file_offset, what);
		}
	}
	return ok;
}

static int resolve(struct sym_cache *c, const char *path, struct sym_query *q, bool *cached)
{
	queries_init(q);
	return sym_cache__resolve(c, path, q, NQ, cached);
}

/* Paths of the cache's files, counted; the first one is copied to first. */
static int cache_files(const char *dir, char *first, size_t size)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!n++)
			snprintf(first, size, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n;
}

static void cached_in_memory_and_on_disk(void)
{
	struct sym_query q[NQ];
	struct sym_cache *c, *c2;
	char file[PATH_MAX * 2];
	bool cached = true;
	struct fixture f;

	if (!fixture_init(&f))
		goto out;
	c = sym_cache__new(f.dir);
	if (!ASSERT_OK_PTR(c, "sym_cache__new"))
		goto out;
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "first resolve");
	ASSERT_FALSE(cached, "first: from the ELF file");
	same_answers(&f, q, "first answers");
	queries_free(q);
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "second resolve");
	ASSERT_TRUE(cached, "second: cached");
	same_answers(&f, q, "cached answers");
	queries_free(q);
	ASSERT_EQ(cache_files(f.dir, file, sizeof(file)), 1, "one cache file on disk");
	sym_cache__free(c);

	/* a new cache on the same directory reads it */
	c2 = sym_cache__new(f.dir);
	if (!ASSERT_OK_PTR(c2, "sym_cache__new again"))
		goto out;
	ASSERT_EQ(resolve(c2, f.elf, q, &cached), 3, "resolve from disk");
	ASSERT_TRUE(cached, "from the disk cache at the first call");
	same_answers(&f, q, "disk answers");
	queries_free(q);
	sym_cache__free(c2);
out:
	fixture_free(&f);
}

static void load_query(void)
{
	struct sym_cache *c = sym_cache__new(NULL);
	struct sym_query q = { .name = "@load" };
	uint64_t want = 1;
	bool cached = true;

	if (!ASSERT_OK_PTR(c, "sym_cache__new"))
		return;
	ASSERT_OK(elf_syms__first_load_vaddr("/proc/self/exe", &want), "first_load_vaddr");
	ASSERT_EQ(sym_cache__resolve(c, "/proc/self/exe", &q, 1, &cached), 1, "@load alone");
	ASSERT_FALSE(cached, "not cached yet");
	ASSERT_STREQ(q.found, "@load", "found");
	ASSERT_U64_EQ(q.vaddr, want, "@load vaddr");
	free(q.found);
	q.found = NULL;
	ASSERT_EQ(sym_cache__resolve(c, "/proc/self/exe", &q, 1, &cached), 1, "@load again");
	ASSERT_TRUE(cached, "cached");
	ASSERT_U64_EQ(q.vaddr, want, "cached @load vaddr");
	free(q.found);
	sym_cache__free(c);
}

static void file_change_invalidates(void)
{
	struct timespec times[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	struct sym_query q[NQ];
	struct sym_cache *c;
	bool cached = false;
	struct fixture f;

	if (!fixture_init(&f))
		goto out;
	c = sym_cache__new(f.dir);
	if (!ASSERT_OK_PTR(c, "sym_cache__new"))
		goto out;
	resolve(c, f.elf, q, &cached);
	queries_free(q);
	/* same file, new mtime: a rebuilt library must not get stale offsets */
	ASSERT_OK(utimensat(AT_FDCWD, f.elf, times, 0) ? -errno : 0, "utimensat");
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "after the change");
	ASSERT_FALSE(cached, "not from the cache");
	same_answers(&f, q, "answers");
	queries_free(q);
	sym_cache__free(c);
out:
	fixture_free(&f);
}

static void corrupted_cache_is_a_miss(void)
{
	static const char garbage[] =
		"\x7f" "ELF\x01\x02\xff\xfe binary noise\0with a NUL\n"
		"\n"
		"\t\t\t\n"
		"cirron_unit_cached_fn\n"
		"cirron_unit_cached_fn\tcirron_unit_cached_fn\n"
		"cirron_unit_cached_fn\tcirron_unit_cached_fn\t1234\n"
		"cirron_unit_cached_fn\tcirron_unit_cached_fn\tnot-hex\tzz\n"
		"cirron_unit_cached_o*\tcirron_unit_cached_other\t\t\n"
		"@load\t@load\t12junk\t0\n"
		"no newline at the end";
	struct sym_query q[NQ];
	char file[PATH_MAX * 2];
	struct sym_cache *c;
	bool cached = true;
	struct fixture f;

	if (!fixture_init(&f))
		goto out;
	c = sym_cache__new(f.dir);
	if (!ASSERT_OK_PTR(c, "sym_cache__new"))
		goto out;
	resolve(c, f.elf, q, &cached);
	queries_free(q);
	sym_cache__free(c);
	if (!ASSERT_EQ(cache_files(f.dir, file, sizeof(file)), 1, "cache file") ||
	    !ASSERT_OK(unit__write_file(file, garbage, sizeof(garbage) - 1), "corrupt it"))
		goto out;

	c = sym_cache__new(f.dir);
	if (!ASSERT_OK_PTR(c, "sym_cache__new"))
		goto out;
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "resolve over garbage");
	ASSERT_FALSE(cached, "garbage is a miss");
	same_answers(&f, q, "answers despite garbage");
	queries_free(q);
	sym_cache__free(c);

	/* and the file was rewritten whole */
	c = sym_cache__new(f.dir);
	if (ASSERT_OK_PTR(c, "sym_cache__new")) {
		ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "resolve after the rewrite");
		ASSERT_TRUE(cached, "cached again");
		same_answers(&f, q, "answers after the rewrite");
		queries_free(q);
		sym_cache__free(c);
	}
out:
	fixture_free(&f);
}

static void memory_only(void)
{
	struct sym_cache *c = sym_cache__new(NULL), *c2 = sym_cache__new(NULL);
	struct sym_query q[NQ];
	bool cached = true;
	struct fixture f;

	if (!fixture_init(&f) || !ASSERT_OK_PTR(c, "new(NULL)") || !ASSERT_OK_PTR(c2, "again"))
		goto out;
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "first");
	ASSERT_FALSE(cached, "first not cached");
	same_answers(&f, q, "first answers");
	queries_free(q);
	ASSERT_EQ(resolve(c, f.elf, q, &cached), 3, "second");
	ASSERT_TRUE(cached, "second cached");
	same_answers(&f, q, "second answers");
	queries_free(q);
	/* nothing shared between caches without a directory */
	ASSERT_EQ(resolve(c2, f.elf, q, &cached), 3, "other cache");
	ASSERT_FALSE(cached, "other cache starts empty");
	queries_free(q);
	ASSERT_EQ(cache_files(f.tmp, f.dir, sizeof(f.dir)), 1, "nothing written (only the copy)");
out:
	sym_cache__free(c);
	sym_cache__free(c2);
	fixture_free(&f);
}

static void unusable_dir_falls_back_to_memory(void)
{
	char tmp[PATH_MAX], file[PATH_MAX + 16], dir[PATH_MAX + 32];
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
	struct sym_query q = { .name = "cirron_unit_cached_fn" };
	struct sym_cache *c = NULL;
	bool cached = true;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		goto out;
	snprintf(file, sizeof(file), "%s/file", tmp);
	snprintf(dir, sizeof(dir), "%s/file/cache", tmp);
	if (!ASSERT_OK(unit__write_file(file, "x", 1), "write file"))
		goto out;
	if (saved >= 0 && null >= 0)	/* its warning is expected */
		dup2(null, STDERR_FILENO);
	c = sym_cache__new(dir);
	if (saved >= 0)
		dup2(saved, STDERR_FILENO);
	if (!ASSERT_OK_PTR(c, "sym_cache__new under a file"))
		goto out;
	ASSERT_EQ(sym_cache__resolve(c, "/proc/self/exe", &q, 1, &cached), 1, "resolve");
	ASSERT_FALSE(cached, "first");
	free(q.found);
	q.found = NULL;
	ASSERT_EQ(sym_cache__resolve(c, "/proc/self/exe", &q, 1, &cached), 1, "resolve again");
	ASSERT_TRUE(cached, "cached in memory");
	free(q.found);
out:
	sym_cache__free(c);
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
	if (tmp[0])
		unit__rm_rf(tmp);
}

static void errors(void)
{
	struct sym_cache *c = sym_cache__new(NULL);
	struct sym_query q = { .name = "main" };
	char tmp[PATH_MAX], text[PATH_MAX + 16];
	bool cached = true;

	if (!ASSERT_OK_PTR(c, "sym_cache__new") || !unit__mkdtemp(tmp, sizeof(tmp)))
		goto out;
	ASSERT_EQ(sym_cache__resolve(c, "/nonexistent/lib.so", &q, 1, &cached), -ENOENT,
		  "missing file");
	ASSERT_FALSE(cached, "cached false on error");
	ASSERT_NULL(q.found, "nothing found");
	snprintf(text, sizeof(text), "%s/text", tmp);
	if (ASSERT_OK(unit__write_file(text, "not an ELF file\n", 16), "write")) {
		ASSERT_EQ(sym_cache__resolve(c, text, &q, 1, &cached), -ENOEXEC, "not ELF");
		/* the failure is not remembered as "main is not defined" */
		ASSERT_EQ(sym_cache__resolve(c, text, &q, 1, &cached), -ENOEXEC, "not ELF again");
		ASSERT_FALSE(cached, "errors are not cached");
	}
	unit__rm_rf(tmp);
out:
	sym_cache__free(c);
}

static void default_dir(void)
{
	char buf[PATH_MAX];

	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	ASSERT_STREQ(sym_cache__default_dir(buf, sizeof(buf)), "/xdg/cirron-probe", "XDG");
	setenv("XDG_CACHE_HOME", "", 1);
	ASSERT_STREQ(sym_cache__default_dir(buf, sizeof(buf)), "/home/u/.cache/cirron-probe",
		     "HOME");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	ASSERT_STREQ(sym_cache__default_dir(buf, sizeof(buf)), "/var/cache/cirron-probe",
		     "neither");
}

int main(void)
{
	RUN_TEST(cached_in_memory_and_on_disk);
	RUN_TEST(load_query);
	RUN_TEST(file_change_invalidates);
	RUN_TEST(corrupted_cache_is_a_miss);
	RUN_TEST(memory_only);
	RUN_TEST(unusable_dir_falls_back_to_memory);
	RUN_TEST(errors);
	RUN_TEST(default_dir);
	return unit__done();
}
