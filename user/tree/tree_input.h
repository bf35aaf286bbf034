/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TREE_INPUT_H
#define __CIRRON_TREE_INPUT_H

#include <stdint.h>

/* What the trees are fed: anchor and Python-call events, decoded (observe/events.c). Both the
 * training tree (torch_tree.h) and the inference tree (infer_tree.h) take them. */
enum tree_input {
	TI_SCOPE_ENTER,		/* a record_function scope: name, obj = DataLoader iterator (0: unknown) */
	TI_SCOPE_EXIT,
	TI_BACKWARD_ENTER,	/* autograd engine execution */
	TI_BACKWARD_EXIT,
	TI_GRAD_MODE,		/* value: 1 grad enabled, 0 disabled (torch.no_grad); obj: 0 the
				 * job's Python switched it, 1 a C++ guard (restores it) */
	TI_FORWARD_ENTER,	/* outermost Module call seen in Python frames: name = class,
				 * value = module.training (1/0) or -1 when unknown */
	TI_FORWARD_EXIT,
	TI_LOST,		/* value events of this process were dropped just before this
				 * point: the open scopes may have lost their ends */
	TI_COMPILE_ENTER,	/* torch.compile: dynamo's frame callback called (Python frames):
				 * a compile may begin */
	TI_COMPILE_EXIT,
	TI_COMPILED,		/* dynamo made a cache entry: a frame's compile is done; obj = the
				 * frame's code state (the same again: a recompilation) */
	TI_SCALER_UPDATE,	/* GradScaler.update() (_amp_update_scale_) */
	TI_INFERENCE_MODE,	/* value: 1 inference_mode entered, 0 left (_InferenceMode); the
				 * inference tree's only: the training tree ignores it */
	TI_TOKEN_PICK,		/* argmax or multinomial called (name): a generation picked its
				 * next token; the inference tree's only */
	TI_MODEL_TOKENS,	/* a model embeds value new tokens (its token ids' last
				 * dimension): more than one is a prefill; the inference tree's */
};

struct tree_event {
	enum tree_input kind;
	uint64_t ts_ns;		/* wall clock */
	uint32_t tid;
	const char *name;
	uint64_t obj;
	int value;
};

#define TREE_NAME_LEN 128

/* An event held back with a copy of its name. */
struct tree_buffered {
	struct tree_event ev;
	char name[TREE_NAME_LEN];	/* ev.name points here */
};

#endif
