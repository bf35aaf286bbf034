/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CPYTHON_H
#define __CIRRON_CPYTHON_H

#include <stdint.h>

struct mapped_file;
struct sym_cache;

/* PY_VERSION_HEX of the CPython that file f holds (f defines the eval loop): Py_Version
 * (exported from 3.11 on) read from the target, else the version in the file name
 * (python3.10, libpython3.10.so.1.0), with micro and release 0. Returns 0 or -ENOENT. */
int cpython__version(struct sym_cache *syms, int pid, const struct mapped_file *f,
		     uint32_t *hex);

/* Where Py_False and Py_True lie in the target (exported symbols of every CPython build):
 * a `training` flag read at a call is known by its address, with nothing read later. */
int cpython__bools(struct sym_cache *syms, const struct mapped_file *f, uint64_t bools[2]);

/* 3.13 and later: _PyRuntime starts with _Py_DebugOffsets (cookie "xdebugpy", then the
 * version). Returns 0 if it is there and names the same minor version, -ENOENT if the file
 * has no _PyRuntime, -EINVAL if it disagrees (not a build whose layout we know). */
int cpython__check_debug_offsets(struct sym_cache *syms, int pid, const struct mapped_file *f,
				 uint32_t hex);

/* slot_tp_call without symbols: CPython's slotdefs table (writable data, read from the
 * target) holds {"__call__", offsetof(PyTypeObject, tp_call), slot_tp_call, wrap_call, ...};
 * every heap type with a Python __call__ gets that function as tp_call. Returns 0 and the
 * function's file offset, or -ENOENT when no single entry matches. */
int cpython__find_slot_tp_call(int pid, const struct mapped_file *f, uint64_t *file_offset);

/* Which of names (most wanted first) the target has imported: looks them up in sys.modules
 * (the main interpreter's, through _PyRuntime; 3.11 to 3.13) and reads the module's
 * __version__ into version ("" if it has none). Returns the index in names, -ENOENT if none
 * is imported (yet), -ENOTSUP for a version whose layout is not known. *modules_used (NULL:
 * always look): how many modules sys.modules held when none of names was in it; while that
 * stays so, -ENOENT comes from one read of the target's memory instead of a walk of every
 * module name (~1600 reads of a torch job's memory). */
int cpython__imported(struct sym_cache *syms, int pid, const struct mapped_file *f,
		      uint32_t hex, const char *const *names, size_t n, char *version,
		      size_t size, uint64_t *modules_used);

/* The namespace dict of module name (sys.modules[name].__dict__; "__main__": the script's
 * globals) in the target. Returns 0, -ENOENT, or -ENOTSUP (layout not known). */
int cpython__module_dict(struct sym_cache *syms, int pid, const struct mapped_file *f,
			 uint32_t hex, const char *name, uint64_t *dict);
/* The main interpreter's PyInterpreterState in the target. Returns 0, -ENOENT or -ENOTSUP. */
int cpython__interp(struct sym_cache *syms, int pid, const struct mapped_file *f, uint32_t hex,
		    uint64_t *interp);

#endif
