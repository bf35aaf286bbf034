// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A probe's event in a traced process: the torch anchors and CPython calls become inputs of
// the training-structure tree, CUDA calls marks (--cuda-detail), cudaGetDeviceCount the
// session's device attributes.
#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "attach/py_sample.h"
#include "common/json.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "observe/attrs.h"
#include "observe/events.h"
#include "observe/tf_events.h"
#include "pyobj/cpython.h"
#include "pyobj/grad_caller.h"
#include "snap/snapshots.h"

/* A kernel's name or handle made (bpf/cirron.h, enum kernel_name_call), its name copied in
 * BPF: a name cut at CIRRON_KNAME_LEN is kept as it came, with "..." (no demangling). */
void events__kernel_name(struct target *t, const struct kname_event *k)
{
	char name[CIRRON_KNAME_LEN + 4];

	if (k->alias) {
		kernel_names__alias(&t->cuda.kernel_names, k->key, k->alias);
		return;
	}
	memcpy(name, k->name, CIRRON_KNAME_LEN);
	name[CIRRON_KNAME_LEN] = 0;
	if (strlen(name) == CIRRON_KNAME_LEN)
		strcpy(name + CIRRON_KNAME_LEN - 1, "...");
	if (name[0])
		kernel_names__name(&t->cuda.kernel_names, k->key, name);
}

void events__device_count(struct target *t, const struct event *e)
{
	/* cudaSuccess = 0; any error (no device, no driver) means no usable GPU. */
	t->cuda.count = e->ret == 0 ? (long)(__s64)e->args[0] : 0;
	t->cuda.count_from_files = t->cuda.count_no_runtime = false;
	if (t->session) {
		attrs__device(t);
		if (e->ret)
			json__set_num(t->session->root->attrs, "cuda_error", (double)e->ret);
		session__touch_root(t->session);
	}
}

void events__cuda_detail(struct observer *o, struct target *t, const struct probe_result *r,
			 const struct event *e)
{
	cJSON *m = cJSON_CreateObject();
	char unnamed[64];

	cJSON_AddStringToObject(m, "name", r->symbol ? r->symbol : r->def->symbol);
	json__add_u64(m, "ts_ns", clock_map__to_wall(&t->clock, e->ts_ns));
	cJSON_AddNumberToObject(m, "tid", e->tid);
	switch (r->def->action) {
	case ACT_CUDA_LAUNCH:
		cJSON_AddStringToObject(m, "kernel", target__kernel_name(t, e->args[0], unnamed,
									   sizeof(unnamed)));
		break;
	case ACT_CUDA_MEMCPY:
		cJSON_AddNumberToObject(m, "bytes", (double)e->args[0]);
		cJSON_AddNumberToObject(m, "kind", (double)e->args[1]);
		break;
	case ACT_CUDA_MALLOC:
		cJSON_AddNumberToObject(m, "bytes", (double)e->args[0]);
		break;
	default:
		break;
	}
	span__add_mark(t->session->root, m);
}

/* Py_False and Py_True from the symbols of the CPython that t runs. */
static void look_up_bools(struct observer *o, struct target *t)
{
	struct py_types *pt = &t->py.types;

	pt->bools_looked_up = true;
	for (size_t i = 0; i < t->nfiles; i++)
		if (strstr(t->files[i].path, "python") &&
		    !cpython__bools(o->syms, &t->files[i], pt->bools))
			return;
}

/* module.training at a call, as BPF read it there (1, 0), or -1 where BPF found none: by the
 * class's chain once the loader judged it, before that by walking the instance's __dict__
 * itself (bpf/python.bpf.h); none on CPython 3.10 (no object_layout). Never read here:
 * reading it now would race model.train()/eval().
 * BPF read a pointer to Py_True or Py_False: known by address, as the target may have
 * exited by now; read from the target only where the symbols are missing. */
static int module_training(struct observer *o, struct target *t, const struct event *e)
{
	uint64_t v = e->args[1];
	int b;

	if (!v)
		return -1;
	if (!t->py.types.bools_looked_up)
		look_up_bools(o, t);
	for (int i = 0; i < 2; i++)	/* Py_False, Py_True: static objects, read once */
		if (t->py.types.bools[i] == v)
			return i;
	b = py_types__read_bool(t->pid, v);
	if (b >= 0)
		t->py.types.bools[b] = v;
	return b;
}

/* Tells BPF what to do with calls of this class and, for a module, where `training` is. */
static bool set_verdict(struct observer *o, struct target *t, const struct py_type *type,
			bool report)
{
	struct py_type_key key = { .tgid = (__u32)t->pid, .type = type->type };
	struct py_verdict_val v = { .verdict = report ? PYV_REPORT : PYV_IGNORE };

	v.nderef = (__u8)type->nderef;
	memcpy(v.off, type->chain, sizeof(v.off));
	return !bpf_map_update_elem(o->py_verdicts_fd, &key, &v, BPF_ANY);
}

/* A module call's forward: the module's class, or for torch.compile(module) the class it
 * wraps (compiled); NULL when it is no forward (a compiled loss). */
static const char *forward_name(struct target *t, const struct probe_def *d,
				const struct py_type *type, const struct event *e, bool *compiled)
{
	const struct py_type *orig;

	*compiled = false;
	if (!type->wrapper)
		return type->name;
	orig = py_types__wrapped(&t->py.types, t->pid, e->args[0], &d->py_layout);
	if (!orig)
		return type->name;
	*compiled = true;
	return orig->kind == PYK_LOSS ? NULL : orig->name;
}

/* CIRRON_TEST_VERDICT_AFTER=N: no class is judged before the job's Nth forward (training or
 * evaluation), as when the loader is starved of CPU for that long: until then BPF alone
 * says what the modules' `training` is (py_guess_training). For tests. */
static bool verdicts_withheld(const struct py_calls *pc)
{
	long after = test_hooks__get()->verdict_after;

	return after > 0 && pc->forwards + 1 < (uint64_t)after;
}

/* CPython slot_tp_call entry/return on the training thread: the outermost call of a torch
 * Module (not a loss) is the forward; dynamo's frame callback is a compile, and module calls
 * inside it are the compiler's. Returns true when te holds a tree input. */
static bool py_call_to_tree(struct observer *o, struct target *t, const struct probe_def *d,
			    const struct event *e, bool entry, struct tree_event *te)
{
	struct py_calls *pc = &t->py.calls;
	struct py_type *type;
	const char *name;
	bool module, compiled = false;
	int role = PYR_NONE;

	if (!pc->tid)
		pc->tid = e->tid;
	if (e->tid != pc->tid)
		return false;
	if (!entry) {
		if (!pc->depth)
			return false;	/* a call that began before we attached */
		pc->depth--;
		role = pc->depth < 256 ? pc->role[pc->depth] : PYR_NONE;
		if (role == PYR_COMPILE) {
			if (--pc->compile_depth)
				return false;
			te->kind = TI_COMPILE_EXIT;
			return true;
		}
		if (role != PYR_FORWARD || --pc->module_depth)
			return false;
		te->kind = TI_FORWARD_EXIT;
		return true;
	}
	if (!pc->depth)		/* nothing open (a sampled window began) */
		pc->module_depth = pc->compile_depth = 0;
	/* the class BPF read at the call (args[2]): the object may be gone by now */
	type = e->args[2] ? py_types__classify_type(&t->py.types, t->pid, e->args[2])
			  : py_types__classify(&t->py.types, t->pid, e->args[0]);
	module = type && type->kind == PYK_MODULE;
	if (type && !type->verdict_set && !verdicts_withheld(pc)) {	/* from now on BPF decides */
		if (module)
			py_types__find_training(type, t->pid, e->args[0], &d->py_layout);
		type->verdict_set = set_verdict(o, t, type, module ||
						type->kind == PYK_COMPILER);
	}
	name = module && type ? forward_name(t, d, type, e, &compiled) : NULL;
	if (type && type->kind == PYK_COMPILER)
		role = PYR_COMPILE;
	else if (name && !pc->compile_depth)
		role = PYR_FORWARD;
	if (pc->depth < 256)
		pc->role[pc->depth] = (uint8_t)role;
	pc->depth++;
	if (role == PYR_COMPILE) {
		if (pc->compile_depth++)
			return false;
		te->kind = TI_COMPILE_ENTER;
		return true;
	}
	if (role != PYR_FORWARD || pc->module_depth++)
		return false;
	pc->forwards++;
	te->kind = TI_FORWARD_ENTER;
	te->name = name;
	te->obj = compiled;	/* TI_FORWARD_ENTER: 1 = a compiled module (torch.compile) */
	t->py.model_obj = e->args[0];	/* --snapshots: the model */
	te->value = module_training(o, t, e);
	if (te->value < 0 && type->verdict_set && (e->args[1] || !type->nderef) &&
	    type->refinds < 16) {
		type->refinds++;
		/* the chain led to something else: this instance's dict differs from the one the
		 * chain was found in, or grew (combined dicts move their entries) */
		py_types__find_training(type, t->pid, e->args[0], &d->py_layout);
		set_verdict(o, t, type, true);
	}
	return true;
}

/* The training tree takes what the inference tree gives back or does not take. */
static void to_training(void *ctx, const struct tree_event *ev)
{
	struct target *t = ctx;

	torch_tree__feed(&t->tree, ev);
}

/* Each kind of process has its tree: an event goes to the inference tree's rules first
 * (a request's region), else to the training tree's (infer/infer_tree.h). */
static void route(struct target *t, const struct tree_event *ev)
{
	if (t->tf.active)	/* both loaded: the TensorFlow job's tree is TensorFlow's (the
				 * SDK's precedence, transformers > tensorflow > torch) */
		return;
	if (!infer_tree__feed(&t->infer, ev, to_training, t))
		torch_tree__feed(&t->tree, ev);
}

/* torch.monitor wait counters (probes/libc10.json): dynamo makes
 * `pytorch.wait_counter.entire_forward_compile` when a frame's compile begins and stops it
 * when the compile ends, with other counters made and stopped inside it, last in first out
 * (a stop's handle is not the one made: pairs are told by their nesting). True with te's kind
 * set at the compile's start and end. */
static bool compile_counter(struct target *t, bool made, uint32_t tid, const char *key,
			    struct tree_event *te)
{
	if (!t->anchor.compile_depth) {
		if (!made || strcmp(key, "pytorch.wait_counter.entire_forward_compile") != 0)
			return false;
		t->anchor.compile_tid = tid;
		t->anchor.compile_depth = 1;
		te->kind = TI_COMPILE_ENTER;
		return true;
	}
	if (tid != t->anchor.compile_tid)
		return false;
	if (made) {
		t->anchor.compile_depth++;
		return false;
	}
	if (--t->anchor.compile_depth)
		return false;
	te->kind = TI_COMPILE_EXIT;
	return true;
}

/* A torch anchor: translate it into an input of the trees. */
void events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		    const struct event *e)
{
	struct tree_event te = { .ts_ns = clock_map__to_wall(&t->clock, e->ts_ns), .tid = e->tid };
	bool entry = e->type == EV_CALL;
	char name[CIRRON_STR_LEN + 1];
	unsigned long loop_ends;

	memcpy(name, e->str, CIRRON_STR_LEN);
	name[CIRRON_STR_LEN] = 0;
	snapshots__seen(t, e->snap_updates);	/* --snapshots: updates begun up to this event */
	memcpy(t->anchor.counters, e->counters, sizeof(t->anchor.counters));
	t->anchor.mono_ns = e->ts_ns;
	if (e->lost_before) {
		struct tree_event lost = te;

		lost.kind = TI_LOST;
		lost.value = (int)e->lost_before;
		route(t, &lost);
		t->py.calls.depth = t->py.calls.module_depth = t->py.calls.compile_depth = 0;
	}
	if (tf_events__handles(r->def->meaning)) {	/* TensorFlow's tree */
		tf_events__anchor(o, t, r, e, name);
		return;
	}
	switch (r->def->meaning) {
	case MEAN_SCOPE:
	case MEAN_SCOPE_ENTER:
	case MEAN_SCOPE_EXIT:
		if (r->def->meaning != MEAN_SCOPE && !entry)
			return;
		te.kind = entry && r->def->meaning != MEAN_SCOPE_EXIT ? TI_SCOPE_ENTER
								       : TI_SCOPE_EXIT;
		te.name = r->def->scope_name ? r->def->scope_name : name;
		break;
	case MEAN_BACKWARD:
		te.kind = entry ? TI_BACKWARD_ENTER : TI_BACKWARD_EXIT;
		te.obj = entry ? e->ret : 0;	/* the entry's stack pointer, or 0 */
		/* accumulate_grad false (the exit carries the entry's arguments):
		 * torch.autograd.grad, not a backward of the step (tree/torch_tree_scopes.c) */
		te.value = r->def->arg_src[r->arch][0] != ARG_NONE &&
			   !(e->args[0] & 0xff);
		break;
	case MEAN_GRAD_MODE:
		if (!entry)
			return;
		te.kind = TI_GRAD_MODE;
		te.value = (int)(e->args[0] & 1);
		/* C++ guards restore the mode before returning: no region (grad_caller.h) */
		te.obj = grad_caller__of(&t->py.grad_callers, t->pid, t->files, t->nfiles,
				       e->args[1]) == GC_CXX;
		break;
	case MEAN_AUTOCAST:
	case MEAN_GRAD_SCALER:
		if (!entry || (r->def->meaning == MEAN_AUTOCAST && !(e->args[0] & 1)))
			return;
		if (!cJSON_GetObjectItemCaseSensitive(t->session->root->attrs, "mixed_precision")) {
			cJSON_AddBoolToObject(t->session->root->attrs, "mixed_precision", true);
			cJSON_AddStringToObject(t->session->root->attrs, "mixed_precision_source",
						r->def->meaning == MEAN_AUTOCAST ? "autocast"
										 : "grad_scaler");
			session__touch_root(t->session);
		}
		if (r->def->meaning == MEAN_AUTOCAST)
			return;
		te.kind = TI_SCALER_UPDATE;	/* a skipped optimizer step shows here */
		break;
	case MEAN_INFERENCE_ENTER:
	case MEAN_INFERENCE_EXIT:
		if (!entry)
			return;
		te.kind = TI_INFERENCE_MODE;
		te.value = r->def->meaning == MEAN_INFERENCE_ENTER;
		break;
	case MEAN_WAIT_COUNTER:
	case MEAN_WAIT_COUNTER_STOP:
		/* dynamo's compile of a frame, from its start: without Python frames (with them,
		 * dynamo's callback call tells it, a little earlier) */
		if (!entry || o->opts->python_frames == PYF_ALWAYS ||
		    !compile_counter(t, r->def->meaning == MEAN_WAIT_COUNTER, e->tid, name, &te))
			return;
		break;
	case MEAN_TOKEN_PICK:
		if (!entry)
			return;
		te.kind = TI_TOKEN_PICK;
		te.name = r->def->scope_name;
		break;
	case MEAN_TOKEN_IDS:	/* how many new tokens a model call embeds (0: unknown) */
		if (!entry || !e->args[0] || e->args[0] > INT32_MAX)
			return;
		te.kind = TI_MODEL_TOKENS;
		te.value = (int)e->args[0];
		break;
	case MEAN_COMPILED:
		if (!entry)
			return;
		if (t->anchor.compile_depth) {	/* a counter made and never stopped: the
						 * compile is over all the same */
			struct tree_event end = te;

			t->anchor.compile_depth = 0;
			end.kind = TI_COMPILE_EXIT;
			route(t, &end);
		}
		te.kind = TI_COMPILED;
		te.obj = e->args[0];
		break;
	case MEAN_PY_CALL:
		if (!py_sample__accepts(o, t, te.ts_ns) || !py_call_to_tree(o, t, r->def, e, entry, &te))
			return;
		break;
	default:
		return;
	}
	hang__progress(&t->report.hang, te.ts_ns);
	loop_ends = t->tree.loop_ends;
	route(t, &te);
	snapshots__after_event(&o->snap, t, t->tree.loop_ends != loop_ends);
}
