/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_DEMANGLE_H
#define __CIRRON_DEMANGLE_H

#include <stddef.h>

/* A symbol as C++ source names it, with its parameters (the C++ runtime's __cxa_demangle);
 * a name that is not a mangled C++ name is copied as it is. Returns out. */
const char *demangle__full(const char *sym, char *out, size_t size);
/* The same without parameters and qualifiers after them, at most width characters: a longer
 * name keeps its end (the class and function) after "...". Returns out. */
const char *demangle__short(const char *sym, size_t width, char *out, size_t size);

#endif
