/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* A tensor argument's last dimension (DEREF_TENSOR_LAST_DIM): how many new tokens a model call
 * embeds (the token ids' [batch, tokens]), what tells a prefill from a decode step. Three
 * bounded reads of target memory; nothing read when the build's layout is not known. */
#ifndef __CIRRON_TENSOR_BPF_H
#define __CIRRON_TENSOR_BPF_H

#include "maps.bpf.h"

#define TENSOR_INLINE_DIMS 5	/* c10::SizesAndStrides keeps up to 5 sizes in place */

/* An at::Tensor * (its first member: the TensorImpl *) becomes sizes[dim - 1], read at
 * TensorImpl + aux: {size_t dim; int64 sizes[5]; ...}; 0 when unknown. */
static __always_inline void tensor_args(const struct probe_spec *spec, __u64 args[CIRRON_NARGS])
{
	for (int i = 0; i < CIRRON_NARGS; i++) {
		__u64 impl = 0, dim = 0, last = 0;

		if (spec->arg_deref[i] != DEREF_TENSOR_LAST_DIM)
			continue;
		if (spec->aux && !bpf_probe_read_user(&impl, sizeof(impl), (void *)args[i]) &&
		    impl && !bpf_probe_read_user(&dim, sizeof(dim), (void *)(impl + spec->aux)) &&
		    dim >= 1 && dim <= TENSOR_INLINE_DIMS &&
		    bpf_probe_read_user(&last, sizeof(last), (void *)(impl + spec->aux + 8 * dim)))
			last = 0;
		args[i] = last;
	}
}

#endif /* __CIRRON_TENSOR_BPF_H */
