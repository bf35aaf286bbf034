/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_VERSIONS_H
#define __CIRRON_VERSIONS_H

#include <stddef.h>
#include <stdint.h>

struct sym_cache;
struct target;

/* Sets the session attributes framework (torch + version) and python (version) from the
 * files the target maps, once each is known. */
void versions__detect(struct sym_cache *syms, struct target *t);

/* "libtorch_cpu.so.2.6.0" -> "2.6.0"; otherwise reads __version__ from the version.py of the
 * torch package holding lib/ (path as seen from here). Returns 0 or -ENOENT. */
int versions__torch_from_path(const char *host_path, char *buf, size_t size);
/* Py_Version (PY_VERSION_HEX) -> "3.11.2". */
void versions__format_python(uint32_t hex, char *buf, size_t size);

#endif
