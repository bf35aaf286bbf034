/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TORCH_TENSOR_H
#define __CIRRON_TORCH_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where one torch build keeps a tensor's description (probes/torch_layouts.json), bytes. */
struct torch_layout {
	char version[48];
	int64_t thp_cdata, storage, storage_data, storage_nbytes, autograd_meta, grad;
	int64_t sizes_and_strides, inline_dims, storage_offset, numel, data_type;
	int64_t device, device_has_value;
	char dtypes[64][12];	/* TypeMeta index -> "float32", ...; "" unknown */
};

#define TENSOR_MAX_DIM 8

enum tensor_dtype { TD_FLOAT32, TD_FLOAT64, TD_BFLOAT16, TD_FLOAT16, TD_OTHER };

/* One tensor read from the target, checked against what the loader can verify. */
struct tensor_desc {
	uint64_t impl;		/* TensorImpl * */
	uint64_t data;		/* the storage's first byte */
	int64_t storage_nbytes, storage_offset, numel;
	int dim;
	int64_t sizes[TENSOR_MAX_DIM], strides[TENSOR_MAX_DIM];
	char dtype[12];
	enum tensor_dtype td;	/* TD_OTHER: no stats (int64 ...) */
	int elem_size;		/* 0 when td is TD_OTHER and the name is unknown */
	int device_type, device_index;	/* 0 CPU, 1 CUDA */
	uint64_t grad_impl;	/* .grad's TensorImpl *, 0: none */
};

/* The layout for torch version (as torch.__version__ says) from the built-in
 * probes/torch_layouts.json. Returns 0, or -ENOENT / -EINVAL with the reason in why. */
int torch_layout__find(const char *version, struct torch_layout *l, char *why, size_t size);
/* Parses a torch_layouts.json text (tests, and the built-in copy). */
/* The layouts torch_layout__find reads: json (probes/torch_layouts.json from disk), or NULL
 * for the built-in copy. */
void torch_layout__use(const char *json);
/* Only the "dtypes" table (TypeMeta index -> name) into l->dtypes: what a layout found in
 * the target (pyobj/tensor_layout_find.c) names dtypes with. */
void torch_layout__dtypes(struct torch_layout *l);
int torch_layout__parse(const char *json, const char *version, struct torch_layout *l,
			char *why, size_t size);

/* Reads the tensor whose TensorImpl is at impl in process pid, and checks it: numel is the
 * product of the sizes, the storage covers the view, the dtype and device are known. A
 * tensor with no storage (an undefined .grad) is -ENODATA. Returns 0 or -errno, the reason
 * in why. */
int torch_tensor__read_impl(int pid, const struct torch_layout *l, uint64_t impl,
			    struct tensor_desc *d, char *why, size_t size);
/* Same, from a Parameter / Tensor Python object. */
int torch_tensor__read_object(int pid, const struct torch_layout *l, uint64_t obj,
			      struct tensor_desc *d, char *why, size_t size);
/* Why d's elements cannot be read from outside ("device memory": a CUDA tensor's storage
 * lies in GPU memory, which process_vm_readv cannot reach; only host and pinned memory can
 * be), or NULL when they can. */
const char *torch_tensor__not_read(const struct tensor_desc *d);
/* Bytes the view spans in its storage, first to last element (0 for an empty tensor). */
uint64_t torch_tensor__span_bytes(const struct tensor_desc *d);
/* Copies the view's elements, row-major, into out (numel * elem_size bytes) from process pid.
 * every > 1: only elements at row-major indices i with (i / block) % every == 0 (blocks of
 * `block` elements, one in every `every`); *n gets how many were copied. Returns 0 or -EIO. */
int torch_tensor__gather(int pid, const struct tensor_desc *d, uint64_t every, uint64_t block,
			 void *out, uint64_t *n, uint64_t *bytes_read);
/* The same, from span: the bytes of d's view as they lay in the target from its first
 * element (torch_tensor__span_bytes of them), copied by BPF (bpf/snap.h). */
int torch_tensor__gather_local(const struct tensor_desc *d, const uint8_t *span, uint64_t every,
			       uint64_t block, void *out, uint64_t *n);
/* How many elements gather copies for numel, every and block. */
uint64_t torch_tensor__sampled_count(uint64_t numel, uint64_t every, uint64_t block);

#endif
