// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the CPython tier needs to know about a build it has no build-id entry for: its
// version (struct layouts follow the minor version) and, when the symbol table is stripped,
// where slot_tp_call lies.
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pyobj/cpython.h"
#include "proc/procfs.h"
#include "pyobj/py_dict.h"
#include "proc/sym_cache.h"
#include "proc/mapped_file.h"

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

int cpython__bools(struct sym_cache *syms, const struct mapped_file *f, uint64_t bools[2])
{
	struct sym_query q[2] = { { .name = "_Py_FalseStruct" }, { .name = "_Py_TrueStruct" } };
	bool cached;
	int n = sym_cache__resolve(syms, f->host_path, q, 2, &cached);

	free(q[0].found);
	free(q[1].found);
	if (n != 2 || !q[0].vaddr || !q[1].vaddr)
		return -ENOENT;
	bools[0] = f->bias + q[0].vaddr;
	bools[1] = f->bias + q[1].vaddr;
	return 0;
}

int cpython__check_debug_offsets(struct sym_cache *syms, int pid, const struct mapped_file *f,
				 uint32_t hex)
{
	struct {
		char cookie[8];
		uint64_t version;
	} d = {};
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

/* Runtime addresses of every "__call__" string in the segments that are not writable (a
 * linker may merge it into the tail of a longer string: any occurrence counts). The code
 * segment too: aarch64's linker keeps .rodata there (no -z separate-code by default). */
static int find_names(const struct mapped_file *f, const struct elf_segment *s, int n,
		      uint64_t *addrs)
{
	static const char name[] = "__call__";
	int found = 0;

	for (int i = 0; i < n && found < MAX_NAMES; i++) {
		char *buf, *p;

		if ((s[i].flags & PF_W) || !s[i].filesz || s[i].filesz > MAX_DATA)
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

/* Where sys.modules lies, per minor version (offsets from CPython's internal headers of
 * 3.11.7, 3.12.1 and 3.13.0, release builds): _PyRuntime.interpreters.head,
 * PyInterpreterState.modules (3.12+: imports.modules), compact ASCII data. */
struct runtime_layout {
	uint32_t minor;
	uint64_t interpreters_head, modules, ascii_data;
};

static const struct runtime_layout runtime_layouts[] = {
	{ 11, 40, 888, 48 },
	{ 12, 40, 944, 40 },
	{ 13, 632, 7656, 40 },
};

/* The main interpreter and sys.modules of the target (hex: its Py_Version), and the layout
 * they were found with. Returns 0, -ENOENT or -ENOTSUP. */
static int find_modules(struct sym_cache *syms, int pid, const struct mapped_file *f,
			uint32_t hex, const struct runtime_layout **layout, uint64_t *interp,
			uint64_t *modules)
{
	struct sym_query q = { .name = "_PyRuntime" };
	const struct runtime_layout *l = NULL;
	bool cached;
	int err;

	for (size_t i = 0; i < sizeof(runtime_layouts) / sizeof(runtime_layouts[0]); i++)
		if (runtime_layouts[i].minor == (hex >> 16 & 0xff))
			l = &runtime_layouts[i];
	if (!l)
		return -ENOTSUP;
	*layout = l;
	err = sym_cache__resolve(syms, f->host_path, &q, 1, &cached);
	free(q.found);
	if (err != 1)
		return -ENOENT;
	if (!procfs__read_mem(pid, f->bias + q.vaddr + l->interpreters_head, interp,
			      sizeof(*interp)) || !*interp ||
	    !procfs__read_mem(pid, *interp + l->modules, modules, sizeof(*modules)) || !*modules)
		return -ENOENT;
	return 0;
}

#define DICT_USED	16	/* PyDictObject.ma_used */
#define MD_DICT		16	/* PyModuleObject.md_dict */

/* The dict layout of a runtime_layout's version (64-bit; as probes/cpython.json's
 * object_layout) for pyobj/py_dict.c: sys.modules and a module's __dict__. */
static struct py_layout dict_layout(const struct runtime_layout *l)
{
	return (struct py_layout){ .known = true, .ma_keys = 32, .ma_values = 40,
				   .values_header = l->minor >= 13 ? 8 : 0,
				   .dk_log2_index_bytes = 9, .dk_nentries = 24, .dk_indices = 32,
				   .ascii_data = (int64_t)l->ascii_data };
}

struct module_match {
	const char *const *names;
	size_t n;
	size_t best;		/* index into names of the first found so far, n if none */
	uint64_t module;
};

static bool match_module(const char *key, uint64_t value, void *ctx)
{
	struct module_match *m = ctx;

	for (size_t i = 0; i < m->best; i++)
		if (!strcmp(key, m->names[i])) {
			m->best = i;
			m->module = value;
		}
	return m->best == 0;
}

struct version_match {
	struct py_layout dl;
	int pid;
	char *buf;
	size_t size;
	const char *key;	/* "__version__" or "__file__" */
};

static bool match_version(const char *key, uint64_t value, void *ctx)
{
	struct version_match *v = ctx;

	return !strcmp(key, v->key) && py_str__read(v->pid, &v->dl, value, v->buf, v->size);
}

/* A package still being imported has no __version__ yet, but its __file__ is set first:
 * the version in the name of <name>-<version>.dist-info beside the package directory (seen
 * through /proc/PID/root). */
static bool version_from_dist_info(int pid, const char *name, const char *file, char *buf,
				   size_t size)
{
	char dir[PATH_MAX], *slash;
	size_t n = strlen(name);
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/root%s", pid, file);
	for (int up = 0; up < 2; up++) {	/* .../site-packages/<name>/__init__.py */
		slash = strrchr(dir, '/');
		if (!slash)
			return false;
		*slash = 0;
	}
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len > n + 11 && !strncmp(e->d_name, name, n) && e->d_name[n] == '-' &&
		    !strcmp(e->d_name + len - 10, ".dist-info") && len - n - 11 < size) {
			memcpy(buf, e->d_name + n + 1, len - n - 11);
			buf[len - n - 11] = 0;
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* A lazy module (transformers' _LazyModule) answers __version__ from its _objects dict. */
static bool match_lazy_objects(const char *key, uint64_t value, void *ctx)
{
	struct version_match *v = ctx;

	return !strcmp(key, "_objects") && py_dict__each(v->pid, &v->dl, value, match_version, v);
}

int cpython__imported(struct sym_cache *syms, int pid, const struct mapped_file *f,
		      uint32_t hex, const char *const *names, size_t n, char *version,
		      size_t size, uint64_t *modules_used)
{
	struct module_match m = { .names = names, .n = n, .best = n };
	struct version_match v = { .pid = pid, .buf = version, .size = size, .key = "__version__" };
	const struct runtime_layout *l = NULL;
	char file[PATH_MAX - 32];
	uint64_t interp = 0, modules = 0, dict = 0, used = 0;
	int err = find_modules(syms, pid, f, hex, &l, &interp, &modules);

	if (err)
		return err;
	v.dl = dict_layout(l);
	/* PyDictObject: ma_used follows the object header in every version */
	if (modules_used && procfs__read_mem(pid, modules + DICT_USED, &used, sizeof(used)) &&
	    used == *modules_used)
		return -ENOENT;		/* no module came or went since the last walk */
	py_dict__each(pid, &v.dl, modules, match_module, &m);
	if (m.best == n) {
		if (modules_used)
			*modules_used = used;
		return -ENOENT;
	}
	version[0] = 0;
	if (!procfs__read_mem(pid, m.module + MD_DICT, &dict, sizeof(dict)) || !dict ||
	    py_dict__each(pid, &v.dl, dict, match_version, &v) ||
	    py_dict__each(pid, &v.dl, dict, match_lazy_objects, &v))
		return (int)m.best;
	v.key = "__file__";
	v.buf = file;
	v.size = sizeof(file);
	if (py_dict__each(pid, &v.dl, dict, match_version, &v) &&
	    !version_from_dist_info(pid, names[m.best], file, version, size))
		version[0] = 0;
	return (int)m.best;
}

int cpython__interp(struct sym_cache *syms, int pid, const struct mapped_file *f, uint32_t hex,
		    uint64_t *interp)
{
	const struct runtime_layout *l = NULL;
	uint64_t modules = 0;
	int err = find_modules(syms, pid, f, hex, &l, interp, &modules);

	if (err)
		*interp = 0;
	return err;
}

int cpython__module_dict(struct sym_cache *syms, int pid, const struct mapped_file *f,
			 uint32_t hex, const char *name, uint64_t *dict)
{
	const char *const names[] = { name };
	struct module_match m = { .names = names, .n = 1, .best = 1 };
	const struct runtime_layout *l = NULL;
	uint64_t interp = 0, modules = 0;
	struct py_layout dl;
	int err = find_modules(syms, pid, f, hex, &l, &interp, &modules);

	if (err)
		return err;
	dl = dict_layout(l);
	py_dict__each(pid, &dl, modules, match_module, &m);
	if (m.best || !procfs__read_mem(pid, m.module + MD_DICT, dict, sizeof(*dict)) || !*dict)
		return -ENOENT;
	return 0;
}
