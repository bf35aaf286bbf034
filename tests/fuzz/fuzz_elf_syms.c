// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libFuzzer harness for what the loader reads from the ELF files its targets map (any
// container can craft them, the loader runs as root): elf_syms__resolve (exact and prefix
// names), elf_syms__first_load_vaddr, elf_syms__build_id, sym_table__load and lookups, and
// sym_cache__resolve with a cache file of the same input's tail. An input is an ELF file,
// optionally followed by 0x1e and the text of its symbol-cache file; see tests/fuzz/README.md.
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "proc/elf_syms.h"
#include "common/log.h"
#include "proc/sym_cache.h"

#define RECORD_SEP 0x1e

static char dir[64], cache_dir[96], elf_path[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	strcpy(dir, "/tmp/fuzz-elf-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
	snprintf(elf_path, sizeof(elf_path), "%s/lib.so", dir);
	log_verbosity = 0;
	return 0;
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

static void free_queries(struct sym_query *q, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(q[i].found);
		q[i].found = NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, RECORD_SEP, size);
	size_t elf_size = sep ? (size_t)(sep - data) : size;
	struct sym_query q[] = {
		{ .name = "cudaLaunchKernel" }, { .name = "_ZN5torch8autograd*" },
		{ .name = "_dl_debug_state" }, { .name = "*" }, { .name = "" },
	};
	const size_t nq = sizeof(q) / sizeof(q[0]);
	struct sym_table *t;
	struct sym_cache *c;
	char hex[128];
	uint64_t v;
	bool cached;
	int n;

	put(elf_path, data, elf_size);
	n = elf_syms__resolve(elf_path, q, nq);
	if (n > (int)nq)
		abort();
	for (size_t i = 0; i < nq; i++)
		if (q[i].found && !*q[i].found)
			abort();	/* empty names are never reported */
	free_queries(q, nq);
	elf_syms__first_load_vaddr(elf_path, &v);
	if (!elf_syms__build_id(elf_path, hex, sizeof(hex)) && strlen(hex) >= sizeof(hex))
		abort();
	t = sym_table__load(elf_path);
	for (uint64_t a = 0; t && a < 0x10000; a += 0x7ff)
		sym_table__lookup(t, a);
	sym_table__free(t);

	/* the cache file of this ELF, as a hostile or damaged one could read */
	if (sep) {
		char key[96], fn[256];
		struct stat st;

		if (stat(elf_path, &st))
			abort();
		/* keep in sync with get_file() in user/proc/sym_cache.c */
		snprintf(key, sizeof(key), "%jx-%jx-%jx-%jx.%09ld", (uintmax_t)st.st_dev,
			 (uintmax_t)st.st_ino, (uintmax_t)st.st_size,
			 (uintmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		mkdir(cache_dir, 0700);
		snprintf(fn, sizeof(fn), "%s/%s.syms", cache_dir, key);
		put(fn, sep + 1, size - elf_size - 1);
		c = sym_cache__new(cache_dir);
		if (!c)
			abort();
		sym_cache__resolve(c, elf_path, q, nq, &cached);
		free_queries(q, nq);
		sym_cache__free(c);
		unlink(fn);
	}
	return 0;
}
