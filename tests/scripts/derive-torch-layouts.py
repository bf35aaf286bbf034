#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""derive-torch-layouts.py: find, in one torch build, where the C++ fields that describe a
tensor lie (a dev-time tool; its output is probes/torch_layouts.json's entry for that torch).

Run it with the Python of the torch to measure (host python3, the trixie root's python3 in a
chroot with /proc mounted, the venv's python). It makes tensors of known shape, strides,
storage offset, dtype and gradient, reads this process's own memory through /proc/self/mem
(a bad address is an error there, not a crash) and looks for the known values:

  Parameter (PyObject)  + thp_cdata          -> TensorImpl *   (torch's _cdata)
  TensorImpl            + storage            -> StorageImpl *
                        + autograd_meta      -> AutogradMeta * (0 without requires_grad)
                        + sizes_and_strides  -> SizesAndStrides {size_; inline sizes[5], strides[5]
                                                or out-of-line int64 * (sizes then strides)}
                        + storage_offset, numel (int64), data_type (uint16 TypeMeta index),
                        + device_opt          (int8 type, int8 index, bool has_value)
  StorageImpl           + data, nbytes
  AutogradMeta          + grad               -> TensorImpl * of .grad
Each offset must be the only one that fits every probe tensor, else it stops with an error.
Prints one JSON object: {"<torch.__version__>": {...}}.
"""
import json
import struct
import sys

import torch

MEM = open("/proc/self/mem", "rb", buffering=0)
SCAN = 512          # bytes of TensorImpl searched
INLINE = 5          # SizesAndStrides keeps up to 5 dims inline


def read(addr, n):
    MEM.seek(addr)
    return MEM.read(n)


def q(addr):
    return struct.unpack("<Q", read(addr, 8))[0]


def only(name, cands):
    cands = sorted(set(cands))
    if len(cands) != 1:
        sys.exit(f"derive-torch-layouts: {name}: {len(cands)} candidates {cands}")
    return cands[0]


def offsets_of(blob, value, fmt="<Q", step=8):
    size = struct.calcsize(fmt)
    return {o for o in range(0, len(blob) - size + 1, step)
            if struct.unpack_from(fmt, blob, o)[0] == value}


def probes():
    base = torch.arange(4 * 6 * 5, dtype=torch.float32).reshape(4, 6, 5)
    yield base[1:, ::2, 1:4]                      # non-contiguous, storage offset 31
    yield torch.zeros(7, 3, dtype=torch.float64).t()[1:]
    yield torch.ones(2, 3, 4, 5, 6, dtype=torch.bfloat16)[1]
    yield torch.ones(9, 2, dtype=torch.float16)[3:]
    yield torch.ones(11, dtype=torch.int64)[2:]


def derive():
    impl_cands = None
    storage_c = offset_c = numel_c = dtype_c = sizes_c = device_c = None
    data_c = nbytes_c = None
    dtypes = {}
    for t in probes():
        impl = t._cdata
        blob = read(impl, SCAN)
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()
        sdata, snbytes = st.data_ptr(), st.nbytes()
        # StorageImpl *: a pointer in the TensorImpl to a block that holds data_ptr and nbytes
        c_storage, c_data, c_nbytes = set(), set(), set()
        for o in range(0, SCAN, 8):
            p = struct.unpack_from("<Q", blob, o)[0]
            if p < 4096 or p > (1 << 47):
                continue
            try:
                sblob = read(p, 128)
            except OSError:
                continue
            d, n = offsets_of(sblob, sdata), offsets_of(sblob, snbytes)
            if d and n:
                c_storage.add(o)
                c_data |= d
                c_nbytes |= n
        storage_c = c_storage if storage_c is None else storage_c & c_storage
        data_c = c_data if data_c is None else data_c & c_data
        nbytes_c = c_nbytes if nbytes_c is None else nbytes_c & c_nbytes
        offset_c = (offsets_of(blob, t.storage_offset()) if offset_c is None
                    else offset_c & offsets_of(blob, t.storage_offset()))
        numel_c = (offsets_of(blob, t.numel()) if numel_c is None
                   else numel_c & offsets_of(blob, t.numel()))
        # SizesAndStrides: size_ (the dim) then inline sizes, then inline strides
        c_sizes = set()
        for o in offsets_of(blob, t.dim()):
            if o + 8 + 16 * INLINE > SCAN:
                continue
            sz = struct.unpack_from(f"<{t.dim()}q", blob, o + 8)
            sd = struct.unpack_from(f"<{t.dim()}q", blob, o + 8 + 8 * INLINE)
            if list(sz) == list(t.shape) and list(sd) == list(t.stride()):
                c_sizes.add(o)
        sizes_c = c_sizes if sizes_c is None else sizes_c & c_sizes
        # dtype: a uint16 whose value differs per dtype; the map index -> name comes out too
        c_dtype = {o for o in range(0, SCAN - 1, 2)}
        dtypes_seen = (t.dtype, blob)
        dtype_c = c_dtype if dtype_c is None else dtype_c
        dtypes.setdefault("_blobs", []).append(dtypes_seen)
        # optional<Device> of a CPU tensor: type 0, index -1, and has_value 1 after the
        # Device (std::optional) or before it (c10::optional of torch 1.x): (device, flag)
        c_dev = {(o, o + 2) for o in range(0, SCAN - 2) if blob[o:o + 3] == b"\x00\xff\x01"}
        c_dev |= {(o + 1, o) for o in range(0, SCAN - 2) if blob[o:o + 3] == b"\x01\x00\xff"}
        device_c = c_dev if device_c is None else device_c & c_dev
    # dtype: the uint16 offset where the five dtypes give five distinct values, and the
    # same dtype twice gives the same value
    by_off = {}
    for o in range(0, SCAN - 1, 2):
        seen = {}
        ok = True
        for dt, blob in dtypes["_blobs"]:
            v = struct.unpack_from("<H", blob, o)[0]
            if seen.setdefault(dt, v) != v:
                ok = False
        vals = list(seen.values())
        if ok and len(set(vals)) == len(vals) and 0 < min(vals) and max(vals) < 64:
            by_off[o] = seen
    dtype_off = only("data_type", by_off)
    names = {torch.float32: "float32", torch.float64: "float64", torch.bfloat16: "bfloat16",
             torch.float16: "float16", torch.int64: "int64"}
    dtype_map = {str(v): names[dt] for dt, v in by_off[dtype_off].items()}

    # THPVariable: where _cdata sits in the Python object
    p = torch.nn.Parameter(torch.ones(3, 2))
    pblob = read(id(p), 64)
    thp = only("thp_cdata", offsets_of(pblob, p._cdata))

    # AutogradMeta: a pointer in TensorImpl (0 without requires_grad) to a block holding
    # grad's TensorImpl *
    p.grad = torch.full((3, 2), 2.0)
    nog = torch.ones(3, 2)
    blob, blob_nog = read(p._cdata, SCAN), read(nog._cdata, SCAN)
    meta_c, grad_c = set(), set()
    for o in range(0, SCAN, 8):
        a = struct.unpack_from("<Q", blob, o)[0]
        if struct.unpack_from("<Q", blob_nog, o)[0] != 0 or a < 4096 or a > (1 << 47):
            continue
        try:
            g = offsets_of(read(a, 256), p.grad._cdata)
        except OSError:
            continue
        if g:
            meta_c.add(o)
            grad_c |= g
    sizes = only("sizes_and_strides", sizes_c)
    return {
        "thp_cdata": thp,
        "storage": only("storage", storage_c),
        # DataPtr is {data_, ctx_ (a unique_ptr: deleter, pointer)}: a CPU allocation's
        # context is its data pointer too, so two fit; data_ is the first
        "storage_data": min(data_c) if len(data_c) == 2 else only("storage_data", data_c),
        "storage_nbytes": only("storage_nbytes", nbytes_c),
        "autograd_meta": only("autograd_meta", meta_c),
        "grad": only("grad", grad_c),
        "sizes_and_strides": sizes,
        "inline_dims": INLINE,
        "storage_offset": only("storage_offset", offset_c),
        "numel": only("numel", numel_c - {sizes}),
        "data_type": dtype_off,
        "device": only("device", device_c)[0],
        "device_has_value": only("device", device_c)[1],
        "dtypes": dtype_map,
    }


if __name__ == "__main__":
    print(json.dumps({torch.__version__: derive()}, indent=1))
