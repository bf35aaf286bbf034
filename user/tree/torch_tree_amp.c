// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Mixed precision (issue 26). Autocast only sets the session's mixed_precision; GradScaler
// shapes steps: scaler.step(optimizer) calls optimizer.step() only when the gradients hold no
// inf/nan, and scaler.update() (_amp_update_scale_) runs once per scaler.step() in every
// recipe, gradient accumulation included (both at the accumulation boundary). An update with
// no optimizer step since the last one (or since the step began) means GradScaler skipped
// this step's optimizer step: the step says skipped=true, and it is complete (the next batch
// begins the next step, as after an optimizer step).
#include "tree/torch_tree_internal.h"

void torch_tree__on_scaler_update(struct torch_tree *t, const struct tree_event *ev)
{
	bool skipped = t->step && t->step_had_backward && !t->backward &&
		       !t->optimizer_since_update && !t->step_had_optimizer;

	t->optimizer_since_update = false;
	if (!skipped || t->step_skipped)
		return;
	t->step_skipped = true;
	cJSON_AddBoolToObject(t->step->attrs, "skipped", true);
	/* what follows is not a forward of this batch */
	t->last_data_end_ns = 0;
	t->last_boundary_ns = ev->ts_ns;
	torch_tree__mark_boundary(t, ev->ts_ns);
}
