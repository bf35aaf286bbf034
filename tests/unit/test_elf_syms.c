// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <cjson/cJSON.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <sys/stat.h>
#include "proc/elf_syms.h"
#include "proc/procfs.h"
#include "unit.h"

/* Symbols to find in this very binary. Not static: they must be in .symtab by name. */
__attribute__((noinline, used)) int cirron_unit_target_fn(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int cirron_unit_prefix_target_alpha(int x)
{
	return x ^ 0x5a5a;
}

int cirron_unit_data[64] = { 1 };

struct object {
	const char *want;	/* substring of the file name; "" for the main program */
	char path[PATH_MAX];
	uint64_t bias;		/* dlpi_addr: runtime address = bias + ELF vaddr */
	uint64_t first_load;	/* first PT_LOAD's p_vaddr, page-aligned */
	bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct object *o = ctx;
	const char *name = info->dlpi_name ? info->dlpi_name : "";

	if (*o->want ? !strstr(name, o->want) : *name != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			o->first_load = info->dlpi_phdr[i].p_vaddr & ~(uint64_t)0xfff;
			break;
		}
	}
	o->bias = info->dlpi_addr;
	snprintf(o->path, sizeof(o->path), "%s", name);
	o->found = true;
	return 1;
}

static bool exe_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (!ASSERT_GT(n, 0, "readlink /proc/self/exe"))
		return false;
	buf[n] = 0;
	return true;
}

/* The load bias of path as /proc/self/maps shows it: where offset 0 is mapped, less the
 * first PT_LOAD's vaddr. Also finds the mapping that holds addr. */
static bool bias_from_maps(const char *path, uint64_t first_load, uintptr_t addr, uint64_t *bias,
			   struct proc_map *holder)
{
	bool have_base = false, have_holder = false;
	char real[PATH_MAX];
	struct proc_maps maps;

	/* maps shows the file's real path (dl_iterate_phdr may name it by a symlink) */
	if (!ASSERT_OK_PTR(realpath(path, real), "realpath") ||
	    !ASSERT_OK(procfs__read_maps(getpid(), &maps), "read maps"))
		return false;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];

		if (strcmp(m->path, real))
			continue;
		if (m->offset == 0 && !have_base) {
			*bias = m->start - first_load;
			have_base = true;
		}
		if (addr >= m->start && addr < m->end) {
			*holder = *m;
			holder->path = NULL;
			have_holder = true;
		}
	}
	procfs__free_maps(&maps);
	return ASSERT_TRUE(have_base, "offset 0 mapped") && ASSERT_TRUE(have_holder, "holder");
}

static void resolve_own_function(void)
{
	struct object main_prog = { .want = "" };
	uintptr_t fn = (uintptr_t)&cirron_unit_target_fn;
	struct sym_query q[3] = {
		{ .name = "cirron_unit_target_fn" },
		{ .name = "cirron_unit_prefix_target_*" },
		{ .name = "cirron_unit_no_such_symbol" },
	};
	char exe[PATH_MAX];
	struct proc_map holder;
	uint64_t first_load = 1, bias;
	struct stat st;

	if (!exe_path(exe, sizeof(exe)) || !ASSERT_OK(stat(exe, &st) ? -errno : 0, "stat exe"))
		return;
	dl_iterate_phdr(find_object, &main_prog);
	if (!ASSERT_TRUE(main_prog.found, "main program in dl_iterate_phdr"))
		return;
	if (!ASSERT_OK(elf_syms__first_load_vaddr(exe, &first_load), "first_load_vaddr"))
		return;
	ASSERT_U64_EQ(first_load, main_prog.first_load, "first PT_LOAD vaddr");
	if (!bias_from_maps(exe, first_load, fn, &bias, &holder))
		return;
	ASSERT_U64_EQ(bias, main_prog.bias, "bias from maps = dlpi_addr");

	q[2].found = (char *)q;	/* must be reset to NULL */
	ASSERT_EQ(elf_syms__resolve("/proc/self/exe", q, 3), 2, "resolved");
	if (ASSERT_STREQ(q[0].found, "cirron_unit_target_fn", "exact name")) {
		ASSERT_U64_EQ(q[0].vaddr, fn - bias, "vaddr = runtime address - bias");
		ASSERT_U64_EQ(q[0].file_offset, fn - holder.start + holder.offset,
			      "file offset of the code");
		ASSERT_LT(q[0].file_offset, st.st_size, "file offset within the file");
	}
	if (ASSERT_STREQ(q[1].found, "cirron_unit_prefix_target_alpha", "prefix match"))
		ASSERT_U64_EQ(q[1].vaddr, (uintptr_t)&cirron_unit_prefix_target_alpha - bias,
			      "prefix vaddr");
	ASSERT_NULL(q[2].found, "missing symbol");
	for (int i = 0; i < 3; i++)
		free(q[i].found);
	ASSERT_EQ(elf_syms__resolve(exe, q, 0), 0, "no queries");
}

static void resolve_in_shared_library(void)
{
	struct object lib = { .want = "libcjson" };
	uintptr_t fn = (uintptr_t)&cJSON_Parse;
	struct sym_query q = { .name = "cJSON_Parse" };
	struct proc_map holder;
	uint64_t first_load, bias;

	dl_iterate_phdr(find_object, &lib);
	if (!ASSERT_TRUE(lib.found, "libcjson loaded") ||
	    !ASSERT_OK(elf_syms__first_load_vaddr(lib.path, &first_load), "first_load_vaddr"))
		return;
	ASSERT_U64_EQ(first_load, lib.first_load, "first PT_LOAD vaddr");
	if (!ASSERT_EQ(elf_syms__resolve(lib.path, &q, 1), 1, "resolve cJSON_Parse"))
		return;
	ASSERT_U64_EQ(q.vaddr, fn - lib.bias, "vaddr from .dynsym");
	if (bias_from_maps(lib.path, first_load, fn, &bias, &holder)) {
		ASSERT_U64_EQ(bias, lib.bias, "bias from maps");
		ASSERT_U64_EQ(q.file_offset, fn - holder.start + holder.offset, "file offset");
	}
	free(q.found);
}

static void not_elf(void)
{
	struct sym_query q = { .name = "main", .found = (char *)&q };
	char tmp[PATH_MAX], text[PATH_MAX + 16], empty[PATH_MAX + 16];
	uint64_t va = 77;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(text, sizeof(text), "%s/text", tmp);
	snprintf(empty, sizeof(empty), "%s/empty", tmp);
	if (ASSERT_OK(unit__write_file(text, "#!/bin/sh\necho hello, not an ELF file\n", 38),
		      "write text") &&
	    ASSERT_OK(unit__write_file(empty, "", 0), "write empty")) {
		ASSERT_EQ(elf_syms__resolve(text, &q, 1), -ENOEXEC, "text file");
		ASSERT_NULL(q.found, "found reset");
		ASSERT_EQ(elf_syms__resolve(empty, &q, 1), -ENOEXEC, "empty file");
		ASSERT_EQ(elf_syms__first_load_vaddr(text, &va), -ENOEXEC, "first_load of text");
		ASSERT_EQ(va, 77, "vaddr untouched");
		ASSERT_NULL(sym_table__load(text), "sym_table of text");
	}
	ASSERT_EQ(elf_syms__resolve("/nonexistent/lib.so", &q, 1), -ENOENT, "missing file");
	ASSERT_EQ(elf_syms__resolve(tmp, &q, 1) < 0, 1, "a directory");
	ASSERT_NULL(sym_table__load("/nonexistent/lib.so"), "sym_table of a missing file");
	unit__rm_rf(tmp);
}

static void table_lookup(void)
{
	struct object main_prog = { .want = "" };
	uintptr_t fn = (uintptr_t)&cirron_unit_target_fn;
	uintptr_t fn2 = (uintptr_t)&cirron_unit_prefix_target_alpha;
	struct sym_table *t;
	uint64_t va;

	dl_iterate_phdr(find_object, &main_prog);
	if (!ASSERT_TRUE(main_prog.found, "main program"))
		return;
	t = sym_table__load("/proc/self/exe");
	if (!ASSERT_OK_PTR(t, "sym_table__load"))
		return;
	va = fn - main_prog.bias;
	ASSERT_STREQ(sym_table__lookup(t, va), "cirron_unit_target_fn", "at the entry");
	ASSERT_STREQ(sym_table__lookup(t, va + 1), "cirron_unit_target_fn", "inside");
	ASSERT_STREQ(sym_table__lookup(t, fn2 - main_prog.bias), "cirron_unit_prefix_target_alpha",
		     "the other function");
	ASSERT_STREQ(sym_table__lookup(t, (uintptr_t)&table_lookup - main_prog.bias),
		     "table_lookup", "a static function");
	/* data is no function's */
	ASSERT_NULL(sym_table__lookup(t, (uintptr_t)&cirron_unit_data[10] - main_prog.bias),
		    "an address in .data");
	ASSERT_NULL(sym_table__lookup(t, 0), "address 0");
	ASSERT_NULL(sym_table__lookup(t, UINT64_MAX), "past everything");
	ASSERT_NULL(sym_table__lookup(NULL, va), "no table");
	sym_table__free(t);
	sym_table__free(NULL);
}

int main(void)
{
	RUN_TEST(resolve_own_function);
	RUN_TEST(resolve_in_shared_library);
	RUN_TEST(not_elf);
	RUN_TEST(table_lookup);
	return unit__done();
}
