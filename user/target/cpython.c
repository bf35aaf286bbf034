// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the CPython tier needs to know about a build it has no build-id entry for: its
// version (struct layouts follow the minor version) and, when the symbol table is stripped,
// where slot_tp_call lies.
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/cpython.h"
#include "target/procfs.h"
#include "target/sym_cache.h"
#include "target/target.h"

#define TP_CALL		128	/* offsetof(PyTypeObject, tp_call), 3.8 to 3.14 on 64-bit */
#define MAX_SEGS	16
#define MAX_NAMES	64
#define MAX_DATA	(64u << 20)

static int read_symbol(struct sym_cache *syms, int pid, const struct mapped_file *f,
		       const char *name, void *buf, size_t len)
{
	struct sym_query q = { .name = name };
	bool cached;
	int err = sym_cache__resolve(syms, f->host_path, &q, 1, &cached);

	free(q.found);
	if (err != 1)
		return -ENOENT;
	return procfs__read_mem(pid, f->bias + q.vaddr, buf, len) ? 0 : -EIO;
}

int cpython__version(struct sym_cache *syms, int pid, const struct mapped_file *f,
		     uint32_t *hex)
{
	const char *base = strrchr(f->path, '/'), *p;
	unsigned int major, minor;

	if (!read_symbol(syms, pid, f, "Py_Version", hex, sizeof(*hex)) && *hex >> 24 == 3)
		return 0;
	base = base ? base + 1 : f->path;
	p = strstr(base, "python");
	if (p && sscanf(p, "python%u.%u", &major, &minor) == 2 && major == 3 && minor < 100) {
		*hex = major << 24 | minor << 16;
		return 0;
	}
	return -ENOENT;
}

int cpython__check_debug_offsets(struct sym_cache *syms, int pid, const struct mapped_file *f,
				 uint32_t hex)
{
	struct {
		char cookie[8];
		uint64_t version;
	} d;
	int err = read_symbol(syms, pid, f, "_PyRuntime", &d, sizeof(d));

	if (err)
		return err == -ENOENT ? -ENOENT : -EINVAL;
	if (memcmp(d.cookie, "xdebugpy", 8) != 0 || (d.version >> 16) != (hex >> 16))
		return -EINVAL;
	return 0;
}

static bool in_exec(const struct elf_segment *s, int n, uint64_t vaddr)
{
	for (int i = 0; i < n; i++)
		if ((s[i].flags & PF_X) && vaddr >= s[i].vaddr && vaddr < s[i].vaddr + s[i].memsz)
			return true;
	return false;
}

/* Runtime addresses of every "__call__" string in the read-only segments (a linker may
 * merge it into the tail of a longer string: any occurrence counts). */
static int find_names(const struct mapped_file *f, const struct elf_segment *s, int n,
		      uint64_t *addrs)
{
	static const char name[] = "__call__";
	int found = 0;

	for (int i = 0; i < n && found < MAX_NAMES; i++) {
		char *buf, *p;

		if ((s[i].flags & (PF_W | PF_X)) || !s[i].filesz || s[i].filesz > MAX_DATA)
			continue;
		buf = malloc(s[i].filesz);
		if (!buf)
			return -ENOMEM;
		if (pread(f->fd, buf, s[i].filesz, (off_t)s[i].offset) != (ssize_t)s[i].filesz) {
			free(buf);
			continue;
		}
		for (p = buf; found < MAX_NAMES &&
		     (p = memmem(p, s[i].filesz - (size_t)(p - buf), name, sizeof(name)));
		     p += sizeof(name))
			addrs[found++] = f->bias + s[i].vaddr + (uint64_t)(p - buf);
		free(buf);
	}
	return found;
}

int cpython__find_slot_tp_call(int pid, const struct mapped_file *f, uint64_t *file_offset)
{
	struct elf_segment s[MAX_SEGS];
	uint64_t names[MAX_NAMES], func = 0;
	int n = elf_syms__segments(f->host_path, s, MAX_SEGS), nnames, matches = 0;

	if (n <= 0 || f->fd < 0)
		return -ENOENT;
	nnames = find_names(f, s, n, names);
	if (nnames <= 0)
		return -ENOENT;
	for (int i = 0; i < n; i++) {
		uint64_t *data, start = (s[i].vaddr + 7) & ~7ull, end = s[i].vaddr + s[i].filesz;
		size_t words;

		if (!(s[i].flags & PF_W) || !s[i].filesz || s[i].filesz > MAX_DATA)
			continue;
		data = malloc(s[i].filesz);
		if (!data)
			return -ENOMEM;
		/* relocated pointers: read the live copy, aligned to 8 */
		words = (size_t)(end - start) / 8;
		if (!procfs__read_mem(pid, f->bias + start, data, words * 8)) {
			free(data);
			continue;
		}
		/* struct wrapperbase { name; int offset; function; wrapper; doc; ... } */
		for (size_t w = 0; w + 3 < words; w++) {
			bool named = false;

			for (int k = 0; k < nnames && !named; k++)
				named = data[w] == names[k];
			if (!named || (uint32_t)data[w + 1] != TP_CALL ||
			    !in_exec(s, n, data[w + 2] - f->bias) ||
			    !in_exec(s, n, data[w + 3] - f->bias))
				continue;
			if (func != data[w + 2])
				matches++;
			func = data[w + 2];
		}
		free(data);
	}
	if (matches != 1)
		return -ENOENT;
	for (int i = 0; i < n; i++)
		if ((s[i].flags & PF_X) && func - f->bias >= s[i].vaddr &&
		    func - f->bias < s[i].vaddr + s[i].filesz) {
			*file_offset = func - f->bias - s[i].vaddr + s[i].offset;
			return 0;
		}
	return -ENOENT;
}
