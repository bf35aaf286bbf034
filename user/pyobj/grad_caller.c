// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Who called c10::GradMode::set_enabled (grad_caller.h): the binding of
// torch._C._set_grad_enabled, found through its PyMethodDef, or C++.
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include "pyobj/grad_caller.h"
#include "proc/procfs.h"
#include "proc/mapped_file.h"

#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif

#define METHOD_NAME "_set_grad_enabled"
#define MAX_NAMES 8		/* copies of the name's text (tail-merged strings included) */
#define MAX_TRIES 3		/* lookups in a target before giving up */

/* Addresses where the text "_set_grad_enabled" lies in read-only data: ml_name points at one. */
static int find_names(Elf *e, uint64_t *names)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int n = 0;

	while ((scn = elf_nextscn(e, scn)) && n < MAX_NAMES) {
		Elf_Data *d;
		const char *p, *end;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size > sh.sh_size)
			continue;
		p = d->d_buf;
		end = p + d->d_size;
		while (n < MAX_NAMES &&
		       (p = memmem(p, (size_t)(end - p), METHOD_NAME, sizeof(METHOD_NAME)))) {
			names[n++] = sh.sh_addr + (uint64_t)(p - (const char *)d->d_buf);
			p += sizeof(METHOD_NAME);
		}
	}
	return n;
}

static bool is_name(const uint64_t *names, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if (names[i] == v)
			return true;
	return false;
}

/* The ml_name slot that points at one of names: a relative relocation whose addend is the
 * name (RELA), or, for packed relocations (RELR), the value in place in writable data. */
static int find_ml_name(Elf *e, const uint64_t *names, int n, uint64_t *slot)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	uint32_t relative;

	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	relative = eh.e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Rela r;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			if (!gelf_getrela(d, (int)i, &r))
				break;
			if (GELF_R_TYPE(r.r_info) == relative && is_name(names, n, (uint64_t)r.r_addend)) {
				*slot = r.r_offset;
				return 0;
			}
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size > sh.sh_size)
			continue;
		for (size_t off = 0; off + 8 <= d->d_size; off += 8) {
			uint64_t v;

			memcpy(&v, (const char *)d->d_buf + off, sizeof(v));
			if (v && is_name(names, n, v)) {
				*slot = sh.sh_addr + off;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int grad_caller__find_slot(int fd, uint64_t *slot_vaddr)
{
	uint64_t names[MAX_NAMES], ml_name;
	Elf *e;
	int n, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -ENOEXEC;
	}
	n = find_names(e, names);
	err = n ? find_ml_name(e, names, n, &ml_name) : -ENOENT;
	elf_end(e);
	if (!err)
		*slot_vaddr = ml_name + 8;	/* PyMethodDef: ml_name, then ml_meth */
	return err;
}

/* A DWARF pointer encoding of 4 or 8 bytes (absptr, udata/sdata 4 and 8). */
static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x03: case 0x0b: return 4;
	}
	return -1;
}

static int64_t read_sdata4(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int grad_caller__function_bounds(int fd, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	Elf *e;
	int err = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		elf_end(e);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		const uint8_t *h;
		Elf_Data *d;
		int ptr_size, count_size;
		uint64_t count, lo, hi;
		size_t table;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") != 0 || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
		    d->d_size < 4)
			continue;
		/* version 1; the table sorted by start, pairs of datarel sdata4 (what GNU ld,
		 * gold and lld write): start, FDE */
		h = d->d_buf;
		ptr_size = enc_size(h[1]);
		count_size = enc_size(h[2]);
		if (h[0] != 1 || h[3] != 0x3b || ptr_size < 0 || count_size < 0)
			break;
		table = 4 + (size_t)ptr_size + (size_t)count_size;
		if (table > d->d_size)
			break;
		count = 0;
		memcpy(&count, h + 4 + ptr_size, (size_t)count_size);
		if (count > (d->d_size - table) / 8)
			count = (d->d_size - table) / 8;
		/* the last entry whose start is <= vaddr */
		lo = 0;
		hi = count;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (sh.sh_addr + (uint64_t)read_sdata4(h + table + 8 * mid) <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || lo >= count)
			break;	/* before the first function, or the last one (no end known) */
		*start = sh.sh_addr + (uint64_t)read_sdata4(h + table + 8 * (lo - 1));
		*end = sh.sh_addr + (uint64_t)read_sdata4(h + table + 8 * lo);
		err = 0;
		break;
	}
	elf_end(e);
	return err;
}

/* The binding in the target: the file that has the method, ml_meth read in its memory (set
 * by now: Python calls it), its function's bounds. */
static void look_up(struct grad_callers *gc, int pid, const struct mapped_file *files,
		    size_t nfiles)
{
	gc->tries++;
	for (size_t i = 0; i < nfiles; i++) {
		const struct mapped_file *f = &files[i];
		uint64_t slot, meth, start, end;

		if (f->fd < 0 || !strstr(f->path, "torch_python") ||
		    grad_caller__find_slot(f->fd, &slot) ||
		    !procfs__read_mem(pid, f->bias + slot, &meth, sizeof(meth)) ||
		    meth < f->map_start || meth >= f->map_end ||
		    grad_caller__function_bounds(f->fd, meth - f->bias, &start, &end))
			continue;
		gc->found = true;
		gc->start = f->bias + start;
		gc->end = f->bias + end;
		return;
	}
}

enum grad_caller grad_caller__of(struct grad_callers *gc, int pid, const struct mapped_file *files,
				 size_t nfiles, uint64_t retaddr)
{
	enum grad_caller v;
	int slot;

	for (int i = 0; i < gc->n; i++)
		if (gc->addr[i] == retaddr)
			return (enum grad_caller)gc->verdict[i];
	if (!gc->found && gc->tries < MAX_TRIES)
		look_up(gc, pid, files, nfiles);
	if (!gc->found || !retaddr)
		return GC_UNKNOWN;
	/* the return address follows the call: inside the binding, never at its start */
	v = retaddr > gc->start && retaddr < gc->end ? GC_PYTHON : GC_CXX;
	slot = gc->n < GRAD_CALLER_CACHE ? gc->n++ : (int)(retaddr % GRAD_CALLER_CACHE);
	gc->addr[slot] = retaddr;
	gc->verdict[slot] = v;
	return v;
}
