// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The generic entry and return programs every C-level probe runs (torch anchors, CUDA calls,
// CPython's slot_tp_call, ld.so), told apart by their probe id (the BPF cookie); what each
// probe does comes from its probe_spec (probes/, as data). The tiers' work lives in
// cuda.bpf.h, python.bpf.h, exits.bpf.h and ldso.bpf.h. Every read of target memory is
// bounded and fault tolerant: a probe must never be able to break the process it observes.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"
#include "probe_ids.bpf.h"
#include "cuda.bpf.h"
#include "python.bpf.h"
#include "exits.bpf.h"
#include "ldso.bpf.h"
#include "gpu.bpf.h"
#include "tensor.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline __u64 read_arg(struct pt_regs *ctx, __u8 src)
{
	__u64 v = 0;

	switch (src) {
	case ARG_REG0: return PT_REGS_PARM1(ctx);
	case ARG_REG1: return PT_REGS_PARM2(ctx);
	case ARG_REG2: return PT_REGS_PARM3(ctx);
	case ARG_REG3: return PT_REGS_PARM4(ctx);
	case ARG_REG4: return PT_REGS_PARM5(ctx);
	case ARG_REG5: return ARCH_ARG6(ctx);
	case ARG_REG6: return ARCH_ARG7(ctx);
	case ARG_REG7: return ARCH_ARG8(ctx);
	case ARG_STACK1: case ARG_STACK2: case ARG_STACK3: case ARG_STACK4:
		bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + ARCH_STACK_ARG0 +
							    8 * (src - ARG_STACK1)));
		return v;
	case ARG_RET: return PT_REGS_RC(ctx);
	case ARG_RETADDR: return arch_entry_return_address(ctx);
	}
	return 0;
}

static __always_inline void read_args(struct pt_regs *ctx, const struct probe_spec *spec,
				      __u64 args[CIRRON_NARGS])
{
	for (int i = 0; i < CIRRON_NARGS; i++)
		args[i] = read_arg(ctx, spec->arg_src[i]);
	tensor_args(spec, args);
}

static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 id = entry_probe_id(ctx, tgid);
	const struct probe_spec *spec;
	__u64 args[CIRRON_NARGS];

	if (!id)
		return 0;
	spec = bpf_map_lookup_elem(&probe_specs, &id);
	if (spec && other_image(spec, tgid))
		return 0;	/* not a hit of this image's probe */
	count(&hits, 2 * id);
	if (!spec)
		return 0;
	read_args(ctx, spec, args);
	/* no cookies: a nested return needs the entry's id whatever the entry decides */
	if (!use_cookie && (spec->flags & PROBE_F_NESTED) && (spec->flags & PROBE_F_RETURN))
		save_call(ctx, id, args);
	if (spec->action == ACT_GPU_BATCH) {
		gpu_batch_copy(tgid, args[0]);
		return 0;
	}
	if ((spec->flags & PROBE_F_DRIVER) && cuda_call_from_runtime(ctx, tgid)) {
		if (cuda_call_left_out(spec, tgid))
			return 0;
		cuda_count_entry(spec, tgid, args);	/* the runtime's launch, counted here */
		if (spec->flags & PROBE_F_DETAIL)
			emit(EV_CALL, id, spec, args, 0, 0);
		return 0;
	}
	if ((spec->flags & PROBE_F_DRIVER) || spec->action == ACT_CUDA_GRAPH_LAUNCH) {
		count_cuda_call(spec, tgid, args);
		if (spec->flags & PROBE_F_DETAIL)
			emit(EV_CALL, id, spec, args, 0, 0);
		if (spec->flags & PROBE_F_RETURN)	/* an allocation: what it holds */
			save_call(ctx, id, args);
		return 0;
	}
	if (spec->action == ACT_DL_WATCH || spec->action == ACT_DL_STATE) {
		ldso_link_map_changed(ctx, id, spec, tgid);
		return 0;
	}
	if (spec->action == ACT_CUDA_LAUNCH) {	/* a runtime launch */
		if (launches_at_driver(tgid))
			return 0;	/* counted at the driver (this probe is on its way out) */
		mark_runtime_launch();
	}
	if (!cuda_count_entry(spec, tgid, args))
		return 0;
	if (spec->flags & PROBE_F_NCCL)
		count_nccl(tgid, args);
	if (spec->action == ACT_CUDA_KERNEL_NAME && spec->aux == KN_REGISTER)
		emit_kernel_name(id, KN_REGISTER, args[0], args[1]);	/* stub, name */

	if (spec->action == ACT_EMIT && !armed(tgid))
		return 0;
	if ((spec->flags & PROBE_F_PY_CALL) && !py_call_enter(args, spec))
		return 0;
	if (spec->action == ACT_EMIT)
		snap_note(id, spec, tgid, args);
	/* an exits probe's entry tells its stack pointer (ret): a later entry at the same depth
	 * or above means an exception left the earlier call (nothing nested in it) */
	if (spec->action == ACT_EMIT || (spec->flags & PROBE_F_DETAIL))
		emit(EV_CALL, id, spec, args,
		     (spec->flags & PROBE_F_EXITS) ? (__u64)PT_REGS_SP(ctx) : 0, 0);

	if ((spec->flags & PROBE_F_RETURN) && !(spec->flags & PROBE_F_NESTED))
		save_call(ctx, id, args);
	if (spec->flags & PROBE_F_EXITS)
		exits_save_call(ctx, id, args);
	return 0;
}

static __always_inline int on_return(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid() };
	const struct probe_spec *spec;
	struct call_state *st;
	__u64 dur, ret = PT_REGS_RC(ctx);
	__u32 id;

	if (use_cookie) {
		id = bpf_get_attach_cookie(ctx);
		key.probe_id = id;
	} else {
		/* the stack pointer is back where the caller had it (x86-64: the return address
		 * the entry saw on top of its stack has been popped) */
		key.sp = PT_REGS_SP(ctx) - ARCH_RETURN_SP_DELTA;
		st = bpf_map_lookup_elem(&calls, &key);
		if (!st)
			return 0;
		id = st->probe_id;
	}
	spec = bpf_map_lookup_elem(&probe_specs, &id);
	if (spec && other_image(spec, tgid))
		return 0;
	count(&hits, 2 * id + 1);
	if (spec && (spec->flags & PROBE_F_NESTED)) {
		__u64 none[CIRRON_NARGS] = {};

		if (!use_cookie)
			bpf_map_delete_elem(&calls, &key);

		if (armed(tgid) && (!(spec->flags & PROBE_F_PY_CALL) || py_call_return()))
			emit(EV_RETURN, id, spec, none, ret, 0);
		return 0;
	}
	st = bpf_map_lookup_elem(&calls, &key);
	if (!spec || !st)
		return 0;
	dur = bpf_ktime_get_ns() - st->ts_ns;

	cuda_count_return(spec, tgid, st->args, ret, dur);
	if (spec->action == ACT_CUDA_KERNEL_NAME && (__u32)ret == 0) {	/* a handle made */
		__u64 handle = 0;

		bpf_probe_read_user(&handle, sizeof(handle), (void *)st->args[0]);
		if (handle)
			emit_kernel_name(id, spec->aux, handle, st->args[1]);
	}
	if (spec->action == ACT_CUDA_DEVICE_COUNT)
		emit_device_count(id, st->args[0], ret);
	if (spec->action == ACT_EMIT || (spec->flags & PROBE_F_DETAIL))
		emit(EV_RETURN, id, spec, st->args, ret, dur);
	bpf_map_delete_elem(&calls, &key);
	return 0;
}

/* One copy per attach type: perf uprobes (any kernel), and uprobe_multi links (Linux 6.6+,
 * the loader sets their attach type, which libbpf 1.1 cannot name, and loads them instead:
 * bpf_get_attach_cookie differs between the two). */
SEC("uprobe")
int handle_entry(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int handle_return(struct pt_regs *ctx)
{
	return on_return(ctx);
}

SEC("uprobe")
int handle_entry_multi(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int handle_return_multi(struct pt_regs *ctx)
{
	return on_return(ctx);
}