/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* What the launches of a process are called: the keys BPF counts launches under (a runtime
 * launch's host stub or, CUDA 13, its kernel handle; a driver launch's CUfunction) to the
 * kernels' names, learnt from the calls that make them (bpf/cirron.h, enum
 * kernel_name_call): a key has a name, or is another key's alias (a handle for its stub, a
 * CUfunction for its CUkernel). Bounded: KERNEL_NAMES_MAX keys a process. */
#ifndef __CIRRON_KERNEL_NAMES_H
#define __CIRRON_KERNEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define KERNEL_NAMES_MAX 65536

struct kernel_names {
	struct kernel_name_slot {
		uint64_t key;	/* 0: free */
		uint64_t alias;	/* the key whose name this one has, or 0 */
		char *name;	/* demangled */
	} *slots;
	size_t cap, n;
	uint64_t dropped;	/* keys not kept: the table was full */
};

/* key is called name (its mangled form: demangled here). Returns 0 or -ENOMEM/-ENOSPC. */
int kernel_names__name(struct kernel_names *k, uint64_t key, const char *mangled);
/* key is what `of` is called (a handle made for a stub, a CUfunction for a CUkernel). */
int kernel_names__alias(struct kernel_names *k, uint64_t key, uint64_t of);
/* key's name, through at most a few aliases; NULL when none was learnt. */
const char *kernel_names__get(const struct kernel_names *k, uint64_t key);
/* The key at the end of key's aliases (key itself if it has none): a host stub, say, whose
 * symbol may name it. */
uint64_t kernel_names__end(const struct kernel_names *k, uint64_t key);
void kernel_names__free(struct kernel_names *k);

#endif /* __CIRRON_KERNEL_NAMES_H */
