/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TENSOR_LAYOUT_FIND_H
#define __CIRRON_TENSOR_LAYOUT_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pyobj/torch_tensor.h"

/* At most this many parameters are looked at by a search or a check. */
#define LAYOUT_FIND_MAX_PARAMS 64

/* Finds a torch build's tensor layout in process pid from a model's own parameters (objs:
 * Parameter PyObject *, n of them): the offsets that let every one of them be read as a
 * dense tensor whose numel is the product of its sizes, whose storage holds it, whose dtype
 * is one dtypes knows (l->dtypes, filled beforehand) and whose device is CPU or CUDA; at
 * least 3 parameters of different shapes must fit, and only one layout may. *grad_checked:
 * whether a parameter had a .grad to confirm where AutogradMeta keeps it (else the offset
 * every torch since 1.x uses, 40). Returns 0, or -ENOENT with "layout not found: <why>". */
int tensor_layout__search(int pid, const uint64_t *objs, size_t n, struct torch_layout *l,
			  bool *grad_checked, char *why, size_t size);

/* Checks layout l against the target: every parameter (and its .grad) reads and passes
 * torch_tensor__read_impl's checks, and 3 of them have different shapes (fewer when the
 * model has fewer). Returns 0 or -EINVAL with the reason. */
int tensor_layout__verify(int pid, const uint64_t *objs, size_t n, const struct torch_layout *l,
			  char *why, size_t size);

#endif
