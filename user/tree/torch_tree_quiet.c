// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Whether the parameters may be changing now, as far as the events seen so far tell
// (--snapshots reads only when they may not): an optimizer step, zero_grad or backward
// still open, or an update by hand under way (grad disabled outside any scope after a
// backward, in a loop that has shown no optimizer step: torch_tree_eval.c).
#include "tree/torch_tree_internal.h"

bool torch_tree__updating(const struct torch_tree *t)
{
	if (t->backward)
		return true;
	for (int i = 0; i < t->nscopes; i++)
		if (t->scopes[i].kind == SK_OPTIMIZER || t->scopes[i].kind == SK_ZERO_GRAD)
			return true;
	/* an update by hand belongs to the open step: grad off once it closed is validation */
	return !t->grad_enabled && !t->nscopes && t->step && t->step_had_backward &&
	       !t->step_had_optimizer;
}
