/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The string a probe's spec names among its arguments (a C string, or a libstdc++
 * std::string), its first size - 1 bytes: an event's str, a scope's name for --snapshots. */
#ifndef __CIRRON_SPEC_STR_BPF_H
#define __CIRRON_SPEC_STR_BPF_H

#include "maps.bpf.h"

static __always_inline void spec_str(char *dst, __u32 size, const struct probe_spec *spec,
				     const __u64 args[CIRRON_NARGS])
{
	for (int i = 0; i < CIRRON_NARGS; i++) {
		const void *p = (const void *)args[i];

		if (spec->arg_deref[i] == DEREF_STDSTRING) {
			/* libstdc++: the data pointer is the first member */
			if (bpf_probe_read_user(&p, sizeof(p), p))
				return;
		} else if (spec->arg_deref[i] != DEREF_CSTRING) {
			continue;
		}
		bpf_probe_read_user_str(dst, size, p);
		return;
	}
}

#endif /* __CIRRON_SPEC_STR_BPF_H */
