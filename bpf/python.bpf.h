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

#define PY_GUESS_KEYS 4	/* Module.__init__ sets training first: entry 0, a few more looked at */
#define PY_TRAINING_CHARS 0x676e696e69617274ull	/* "training", little-endian (x86-64, arm64) */

/* `training` of obj read by walking its __dict__ as the loader does (pyobj/pytypes.c,
 * py_types__find_training), for a class not judged yet: the entries' keys are compared with
 * "training" (8 characters and its NUL), so another object's dict gives 0, never a wrong
 * value. A class is judged when the loader gets to its first call: until then (a few ms; a
 * whole first epoch when the loader is starved of CPU) its calls would carry no mode, and
 * an evaluation would look like training. */
static __always_inline __u64 py_guess_training(__u64 obj, const struct py_obj_layout *l)
{
	__u64 dict = 0, keys = 0, values = 0, key = 0, val = 0, entries, esize;
	__u8 log2 = 0, kind = 0;
	struct { __u64 chars; __u8 nul; } name;	/* read: the 9 bytes "training\0" */

	if (!l->managed_dict ||
	    bpf_probe_read_user(&dict, sizeof(dict), (void *)(obj + l->managed_dict)) || !dict ||
	    bpf_probe_read_user(&keys, sizeof(keys), (void *)(dict + l->ma_keys)) || !keys ||
	    bpf_probe_read_user(&values, sizeof(values), (void *)(dict + l->ma_values)) ||
	    bpf_probe_read_user(&log2, 1, (void *)(keys + l->dk_log2_index_bytes)) || log2 > 20 ||
	    (!values && bpf_probe_read_user(&kind, 1, (void *)(keys + l->dk_log2_index_bytes + 1))))
		return 0;
	esize = !values && kind == 0 ? 24 : 16;	/* DICT_KEYS_GENERAL entries carry the hash */
	entries = keys + l->dk_indices + (1ull << log2) + (esize - 16);
	for (int i = 0; i < PY_GUESS_KEYS; i++) {
		__u64 entry = entries + esize * i;

		if (bpf_probe_read_user(&key, sizeof(key), (void *)entry) || !key ||
		    bpf_probe_read_user(&name, 9, (void *)(key + l->ascii_data)) ||
		    name.chars != PY_TRAINING_CHARS || name.nul)
			continue;
		if (bpf_probe_read_user(&val, sizeof(val), values ?
					(void *)(values + l->values_header + 8 * i) :
					(void *)(entry + 8)))
			return 0;
		return val;
	}
	return 0;
}

/* A call of a Python object (args[0], its class in args[2]): report it unless its class was judged
 * uninteresting. Deeper than 64 nested calls, everything is reported (the loader pairs
 * those itself). */
static __always_inline bool py_call_enter(__u64 args[CIRRON_NARGS], const struct probe_spec *spec)
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
	else if (!v || v->verdict == PYV_UNKNOWN)
		args[1] = py_guess_training(obj, &spec->py);
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
