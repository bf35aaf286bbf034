/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_GRAD_CALLER_H
#define __CIRRON_GRAD_CALLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Who switched grad mode. c10::GradMode::set_enabled is called by the binding of
 * torch._C._set_grad_enabled (torch.no_grad(), enable_grad(), set_grad_enabled(): a region the
 * job's Python code opened) and by C++ guards that restore the mode before they return:
 * autograd.Function.apply around every custom Function's forward (compiled graphs, reentrant
 * checkpointing), autocast's weight-cast cache. Only the first kind is a region the tree
 * reasons about (docs/tree.md "Grad switches").
 *
 * The binding is found without symbols: the PyMethodDef named "_set_grad_enabled" (its name's
 * string in a read-only section, the pointer to it a relative relocation) holds ml_meth, which
 * a static initializer may fill: it is read in the target's memory once loaded. The function's
 * extent comes from .eh_frame_hdr's table (every function has an FDE, stripped builds too).
 */
enum grad_caller { GC_UNKNOWN, GC_PYTHON, GC_CXX };

/* Who switches grad mode in this target (grad_caller.h): the binding of
 * torch._C._set_grad_enabled once found, and the return addresses told apart so far. */
#define GRAD_CALLER_CACHE 16
struct grad_callers {
	int tries;		/* lookups of the binding so far (the target may not have it yet) */
	bool found;
	uint64_t start, end;	/* the binding's code, as mapped in the target */
	uint64_t addr[GRAD_CALLER_CACHE];
	int verdict[GRAD_CALLER_CACHE];	/* enum grad_caller */
	int n;
};


/* Finds the binding in an ELF file mapped at bias: the address of its PyMethodDef's ml_meth
 * slot (file vaddr) and the table of function starts around it. Returns 0, or -ENOENT when
 * the file has no such method (not libtorch_python), -errno on a bad file. */
int grad_caller__find_slot(int fd, uint64_t *slot_vaddr);
/* The function holding vaddr, as .eh_frame_hdr's table bounds it: [*start, *end). Returns 0
 * or -ENOENT. */
int grad_caller__function_bounds(int fd, uint64_t vaddr, uint64_t *start, uint64_t *end);

struct mapped_file;
/* Who called set_enabled, from the return address its entry saw, in the target pid that maps
 * files (the binding is looked for there, a few times at most; verdicts are kept in gc).
 * GC_UNKNOWN: the binding could not be found (the caller counts as Python, as before this
 * rule). */
enum grad_caller grad_caller__of(struct grad_callers *gc, int pid, const struct mapped_file *files,
				 size_t nfiles, uint64_t retaddr);

#endif
