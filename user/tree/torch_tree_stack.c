// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The scope stack and what a scope's name means: used by the handlers above (scopes, data,
// prefetch), calling nothing but the span bookkeeping (torch_tree_steps.c).
#include <string.h>
#include "tree/torch_tree_internal.h"

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

void torch_tree__push_scope(struct torch_tree *t, struct span *sp, int kind)
{
	if (t->nscopes < TREE_MAX_SCOPES)
		t->scopes[t->nscopes++] = (struct tree_scope){ sp, kind, 0 };
}

int torch_tree__classify(const char *name)
{
	if (starts_with(name, "enumerate(DataLoader)#"))
		return SK_DATA_TRAIN;
	if (starts_with(name, "Optimizer.step#"))
		return SK_OPTIMIZER;
	if (starts_with(name, "Optimizer.zero_grad#"))
		return SK_ZERO_GRAD;
	if (!strcmp(name, "DistributedDataParallel.forward"))
		return SK_MODEL_FORWARD;
	if (!strcmp(name, "collective_wait") || starts_with(name, "nccl."))
		return SK_COLLECTIVE;
	if (!strcmp(name, "FSDP::root_pre_forward"))
		return SK_ROOT_FORWARD;
	if (starts_with(name, "_compile.compile_inner"))
		return SK_COMPILE;
	if (starts_with(name, "backward._backward_impl"))
		return SK_COMPILE_BACKWARD;
	return SK_OTHER;
}

void torch_tree__end_inferred_forward(struct torch_tree *t, uint64_t ts)
{
	if (!t->forward || !t->forward_end_inferred)
		return;
	t->forward_end_inferred = false;
	cJSON_AddBoolToObject(t->forward->attrs, "end_inferred", true);
	t->exact_forward_seen = true;
	torch_tree__close_span(t, &t->forward, ts, NULL);
}
