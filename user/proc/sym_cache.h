/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SYM_CACHE_H
#define __CIRRON_SYM_CACHE_H

#include <stdbool.h>
#include "proc/elf_syms.h"
#include "proc/func_exits.h"

/* Symbol resolution cached per file, keyed by device, inode, size and mtime, in memory and
 * (when dir is set) on disk, so re-attaching to a large library (libtorch_cpu) is fast.
 * The query name "@load" asks for the first PT_LOAD's vaddr (for load-bias arithmetic). */
struct sym_cache;

struct sym_cache *sym_cache__new(const char *dir);
/* Default directory: $XDG_CACHE_HOME/cirron-probe or $HOME/.cache/cirron-probe. */
const char *sym_cache__default_dir(char *buf, size_t size);
/* Like elf_syms__resolve. *cached tells whether every answer came from the cache. */
int sym_cache__resolve(struct sym_cache *c, const char *path, struct sym_query *q, size_t n,
		       bool *cached);
/* func_exits__find for the function at vaddr in path, remembered like a symbol (a failure
 * too, with its reason). */
int sym_cache__exits(struct sym_cache *c, const char *path, uint64_t vaddr,
		     struct func_exits *out, char *why, size_t why_size);
void sym_cache__free(struct sym_cache *c);

#endif
