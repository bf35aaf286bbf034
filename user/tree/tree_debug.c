// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the trees were fed, for the developers (CIRRON_DEBUG_TREE=1): real runs' inputs, kept
// as logs that the unit tests feed through the rules again.
#include <stdio.h>
#include <stdlib.h>
#include "tree/tree_debug.h"

static const char *const kinds[] = {
	[TI_SCOPE_ENTER] = "SCOPE+", [TI_SCOPE_EXIT] = "SCOPE-",
	[TI_BACKWARD_ENTER] = "BWD+", [TI_BACKWARD_EXIT] = "BWD-", [TI_GRAD_MODE] = "GRAD",
	[TI_FORWARD_ENTER] = "FWD+", [TI_FORWARD_EXIT] = "FWD-", [TI_LOST] = "LOST",
	[TI_COMPILE_ENTER] = "COMPILE+", [TI_COMPILE_EXIT] = "COMPILE-",
	[TI_COMPILED] = "COMPILED", [TI_SCALER_UPDATE] = "SCALER",
	[TI_INFERENCE_MODE] = "INFER", [TI_TOKEN_PICK] = "PICK", [TI_MODEL_TOKENS] = "TOKENS",
};

const char *tree_debug__kind(enum tree_input kind)
{
	return (unsigned int)kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[kind] : NULL;
}

void tree_debug__input(const char *tree, int pid, const struct tree_event *ev)
{
	static int on = -1;
	const char *kind = tree_debug__kind(ev->kind);

	if (on < 0)
		on = getenv("CIRRON_DEBUG_TREE") != NULL;
	if (!on || !kind)
		return;
	fprintf(stderr, "%s pid=%d tid=%u ts=%llu %s name=%s obj=%llx val=%d\n", tree, pid,
		ev->tid, (unsigned long long)ev->ts_ns, kind,
		ev->name && *ev->name ? ev->name : "-", (unsigned long long)ev->obj, ev->value);
}
