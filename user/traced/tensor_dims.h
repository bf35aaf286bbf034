/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TENSOR_DIMS_H
#define __CIRRON_TENSOR_DIMS_H

#include <stdint.h>

/* Where the libtorch at host_path keeps a tensor's sizes in its TensorImpl (the offset of
 * c10::SizesAndStrides, probes/torch_layouts.json, by the torch version its files name), for
 * probes that read a tensor argument's dimensions in BPF (":tensor_last_dim"); 0 when the
 * build is not known (BPF then reads nothing). */
uint64_t tensor_dims__sizes_offset(const char *host_path);

#endif
