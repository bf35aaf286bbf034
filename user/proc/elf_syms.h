/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ELF_SYMS_H
#define __CIRRON_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

/* A symbol wanted by name. A name ending in '*' matches the first symbol with that prefix
 * (C++ symbols whose mangling differs between builds). */
struct sym_query {
	const char *name;
	char *found;		/* out: the matching symbol's full name (malloc'd), NULL if none */
	uint64_t vaddr;		/* out: st_value */
	uint64_t file_offset;	/* out: where the code lies in the file (uprobe offset) */
};

/* Resolves the queries against .symtab and .dynsym of one ELF file, defined symbols only.
 * Returns the number resolved, or -errno if the file is not a readable ELF. */
int elf_syms__resolve(const char *path, struct sym_query *q, size_t n);

/* Load bias helper: the p_vaddr of the first PT_LOAD (page-aligned down). -errno on error. */
int elf_syms__first_load_vaddr(const char *path, uint64_t *vaddr);

/* The file's e_machine (EM_X86_64, EM_AARCH64, ...), or -errno. */
int elf_syms__machine(const char *path);

/* The GNU build-id as lowercase hex. Returns 0, -ENOENT if the file has none, or -errno. */
int elf_syms__build_id(const char *path, char *hex, size_t size);

/* A PT_LOAD program header. */
struct elf_segment {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;		/* PF_R, PF_W, PF_X */
};
/* Fills v with the file's PT_LOAD segments (at most max). Returns how many, or -errno. */
int elf_syms__segments(const char *path, struct elf_segment *v, size_t max);

/* Function symbols of one file, sorted by address, for address -> name lookups. */
struct sym_table;
struct sym_table *sym_table__load(const char *path);
/* Name of the function containing vaddr, or NULL. */
const char *sym_table__lookup(const struct sym_table *t, uint64_t vaddr);
void sym_table__free(struct sym_table *t);

#endif
