// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/elf_syms.h"

struct elf_handle {
	int fd;
	Elf *elf;
};

static int elf_handle__open(const char *path, struct elf_handle *h)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	h->elf = NULL;
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		return errno ? -errno : -EIO;
	h->elf = elf_begin(h->fd, ELF_C_READ_MMAP, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		if (h->elf)
			elf_end(h->elf);
		close(h->fd);
		return -ENOEXEC;
	}
	return 0;
}

static void elf_handle__close(struct elf_handle *h)
{
	elf_end(h->elf);
	close(h->fd);
}

int elf_syms__segments(const char *path, struct elf_segment *v, size_t max)
{
	struct elf_handle h;
	size_t n, i, k = 0;
	GElf_Phdr ph;
	int err = elf_handle__open(path, &h);

	if (err)
		return err;
	if (elf_getphdrnum(h.elf, &n)) {
		elf_handle__close(&h);
		return -EINVAL;
	}
	for (i = 0; i < n && k < max; i++) {
		if (!gelf_getphdr(h.elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		v[k++] = (struct elf_segment){ .vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz, .flags = ph.p_flags };
	}
	elf_handle__close(&h);
	return (int)k;
}

/* File offset of the code at vaddr: find the PT_LOAD segment that holds it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static bool name_matches(const char *want, const char *name)
{
	size_t l = strlen(want);

	if (l && want[l - 1] == '*')
		return !strncmp(want, name, l - 1);
	return !strcmp(want, name);
}

typedef int (*sym_visit_fn)(const char *name, const GElf_Sym *sym, void *ctx);

/* Symbols read per table at most: libtorch_cpu has ~300k; a crafted file claiming billions
 * costs bounded time. */
#define MAX_SYMS_PER_TABLE (1u << 22)

/* Calls fn for each defined symbol of .symtab and .dynsym; stops when fn returns non-zero.
 * Tables whose entry size is not a symbol's, or whose data does not hold what the header
 * claims (a file crafted by a target), are read as far as they go, or skipped. */
static int for_each_symbol(Elf *elf, sym_visit_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || sh.sh_entsize != gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT))
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		if (cnt > data->d_size / sh.sh_entsize)
			cnt = data->d_size / sh.sh_entsize;
		if (cnt > MAX_SYMS_PER_TABLE)
			cnt = MAX_SYMS_PER_TABLE;
		for (i = 0; i < cnt; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (fn(name, &sym, ctx))
				return 1;
		}
	}
	return 0;
}

struct resolve_ctx {
	Elf *elf;
	struct sym_query *q;
	size_t n, left;
};

static int resolve_visit(const char *name, const GElf_Sym *sym, void *p)
{
	struct resolve_ctx *c = p;

	for (size_t i = 0; i < c->n; i++) {
		struct sym_query *q = &c->q[i];

		if (q->found || !name_matches(q->name, name))
			continue;
		q->found = strdup(name);
		if (!q->found)
			return 1;
		q->vaddr = sym->st_value;
		if (vaddr_to_offset(c->elf, sym->st_value, &q->file_offset))
			q->file_offset = 0;	/* data in .bss: no file offset, vaddr still valid */
		c->left--;
	}
	return c->left == 0;
}

int elf_syms__resolve(const char *path, struct sym_query *q, size_t n)
{
	struct resolve_ctx c = { .q = q, .n = n, .left = n };
	struct elf_handle h;
	int err = elf_handle__open(path, &h);

	for (size_t i = 0; i < n; i++)
		q[i].found = NULL;
	if (err)
		return err;
	c.elf = h.elf;
	for_each_symbol(h.elf, resolve_visit, &c);
	elf_handle__close(&h);
	return (int)(n - c.left);
}

int elf_syms__first_load_vaddr(const char *path, uint64_t *vaddr)
{
	struct elf_handle h;
	size_t n, i;
	GElf_Phdr ph;
	int err = elf_handle__open(path, &h);

	if (err)
		return err;
	err = -ENOENT;
	if (!elf_getphdrnum(h.elf, &n)) {
		for (i = 0; i < n; i++) {
			if (gelf_getphdr(h.elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				*vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
				err = 0;
				break;
			}
		}
	}
	elf_handle__close(&h);
	return err;
}

int elf_syms__machine(const char *path)
{
	struct elf_handle h;
	GElf_Ehdr eh;
	int err = elf_handle__open(path, &h);

	if (err)
		return err;
	err = gelf_getehdr(h.elf, &eh) ? (int)eh.e_machine : -ENOEXEC;
	elf_handle__close(&h);
	return err;
}

int elf_syms__build_id(const char *path, char *hex, size_t size)
{
	struct elf_handle h;
	Elf_Scn *scn = NULL;
	int err = elf_handle__open(path, &h);

	if (err)
		return err;
	err = -ENOENT;
	while (err && (scn = elf_nextscn(h.elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || (size_t)nh.n_descsz * 2 + 1 > size)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", desc[i]);
			err = 0;
			break;
		}
	}
	elf_handle__close(&h);
	return err;
}

struct sym_entry {
	uint64_t addr, size;
	char *name;
};

struct sym_table {
	struct sym_entry *v;
	size_t n, cap;
};

static int table_visit(const char *name, const GElf_Sym *sym, void *p)
{
	struct sym_table *t = p;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct sym_entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return 1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].name = strdup(name);
	if (!t->v[t->n].name)
		return 1;
	t->v[t->n].addr = sym->st_value;
	t->v[t->n].size = sym->st_size;
	t->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct sym_table *sym_table__load(const char *path)
{
	struct sym_table *t = calloc(1, sizeof(*t));
	struct elf_handle h;

	if (!t)
		return NULL;
	if (elf_handle__open(path, &h)) {
		free(t);
		return NULL;
	}
	for_each_symbol(h.elf, table_visit, t);
	elf_handle__close(&h);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_entry);
	return t;
}

const char *sym_table__lookup(const struct sym_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t ? t->n : 0;

	while (lo < hi) {	/* last entry with addr <= vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym_entry *e = &t->v[lo - 1];

	if (vaddr != e->addr && (!e->size || vaddr >= e->addr + e->size))
		return NULL;
	return e->name;
}

void sym_table__free(struct sym_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	free(t);
}
