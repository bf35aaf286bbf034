// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A tensor argument's dimensions read in BPF at a probe's hit (issue 44: the token ids a model
// embeds tell a prefill from a decode step) need the build's TensorImpl layout when the probe
// is linked: the table snapshots read tensors with, found by the version of the libtorch file.
#include "common/log.h"
#include "traced/tensor_dims.h"
#include "pyobj/torch_tensor.h"
#include "traced/versions.h"

uint64_t tensor_dims__sizes_offset(const char *host_path)
{
	struct torch_layout l;
	char version[64], why[256];

	if (versions__torch_from_path(host_path, version, sizeof(version))) {
		dlog("%s: no torch version: tensor arguments are not read", host_path);
		return 0;
	}
	if (torch_layout__find(version, &l, why, sizeof(why)) || l.sizes_and_strides <= 0 ||
	    l.inline_dims < 5) {
		dlog("torch %s: %s: tensor arguments are not read", version, why);
		return 0;
	}
	return (uint64_t)l.sizes_and_strides;
}
