/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The Python calls tier (--python-frames): calls of Python objects through CPython's
 * slot_tp_call, filtered by the class verdicts the loader sets; a per-thread stack pairs the
 * returns with their calls. */
#ifndef __CIRRON_PYTHON_BPF_H
#define __CIRRON_PYTHON_BPF_H

#include "maps.bpf.h"

/* Follows the verdict's pointer chain from the object: its `training` attribute. */
static __always_inline __u64 py_read_chain(__u64 obj, const struct py_verdict_val *v)
{
	__u64 p = obj;

	for (int i = 0; i < PY_CHAIN_MAX; i++) {
		if (i >= v->nderef)
			break;
		if (bpf_probe_read_user(&p, sizeof(p), (void *)(p + (__s64)v->off[i])) || !p)
			return 0;
	}
	return p;
}

/* A call of a Python object (args[0], its class in args[2]): report it unless its class was judged
 * uninteresting. Deeper than 64 nested calls, everything is reported (the loader pairs
 * those itself). */
static __always_inline bool py_call_enter(__u64 args[CIRRON_NARGS])
{
	__u64 id = bpf_get_current_pid_tgid(), obj = args[0];
	__u32 tid = (__u32)id;
	struct py_type_key key = { .tgid = id >> 32 };
	struct py_stack zero = {}, *st;
	const struct py_verdict_val *v;
	bool report;

	bpf_probe_read_user(&key.type, sizeof(key.type), (void *)(obj + 8));	/* ob_type */
	/* The class, read now: the loader reads memory later, when a short-lived object may
	 * be gone (or the whole process, for the last calls before an exit). */
	args[2] = key.type;
	v = bpf_map_lookup_elem(&py_verdicts, &key);
	report = !v || v->verdict != PYV_IGNORE;
	if (!v) {	/* a class first seen: wake the loader with this call, once */
		struct py_verdict_val unknown = {};
		__u32 zero = 0, *wake = bpf_map_lookup_elem(&py_wake, &zero);

		if (!bpf_map_update_elem(&py_verdicts, &key, &unknown, BPF_NOEXIST) && wake)
			*wake = 1;
	}
	if (v && report && v->nderef)
		args[1] = py_read_chain(obj, v);
	st = bpf_map_lookup_elem(&py_stacks, &tid);
	if (!st) {
		bpf_map_update_elem(&py_stacks, &tid, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&py_stacks, &tid);
		if (!st)
			return true;
	}
	if (st->depth < 64) {
		if (report)
			st->reported |= 1ull << st->depth;
		else
			st->reported &= ~(1ull << st->depth);
	}
	st->depth++;
	return report || st->depth > 64;
}

static __always_inline bool py_call_return(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct py_stack *st = bpf_map_lookup_elem(&py_stacks, &tid);

	if (!st || !st->depth)
		return true;	/* entered before we were armed: the loader ignores it */
	st->depth--;
	return st->depth >= 64 || (st->reported >> st->depth) & 1;
}

#endif /* __CIRRON_PYTHON_BPF_H */
