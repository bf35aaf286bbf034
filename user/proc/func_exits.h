/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_FUNC_EXITS_H
#define __CIRRON_FUNC_EXITS_H

#include <stddef.h>
#include <stdint.h>

/* The instructions a function leaves by, found by disassembling its body (and the split-off
 * parts it jumps to, e.g. GCC's .cold parts): every return, and every jump out of it taken
 * with the frame torn down (a tail call), as the unwind table (.eh_frame) says. At each of
 * them the stack pointer is what it was at the function's first instruction, which is how
 * the BPF side pairs an exit with its call. x86-64 and arm64 (the file's e_machine). */
#define FUNC_EXITS_MAX 32

struct func_exits {
	uint64_t offsets[FUNC_EXITS_MAX];	/* file offsets of the exit instructions */
	size_t n;
	size_t parts;		/* split-off parts decoded besides the body */
	size_t no_cfi;		/* jumps out whose frame state the unwind table does not give:
				 * taken as exits (the stack pointer check at the hit decides) */
};

/* Finds the exits of the function whose symbol value is vaddr in the ELF file at path.
 * Returns 0, or -errno with why set (a body that does not decode, more than FUNC_EXITS_MAX
 * exits, an exit the kernel cannot probe, another architecture, no size in the symbols). */
int func_exits__find(const char *path, uint64_t vaddr, struct func_exits *out, char *why,
		     size_t why_size);

#endif
