/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_GZIP_H
#define __CIRRON_GZIP_H

#include <stddef.h>
#include "common/sbuf.h"

/* in as one gzip member (zlib, level 6) appended to out. Returns 0 or -ENOMEM. */
int gzip__append(const void *in, size_t len, struct sbuf *out);

#endif
