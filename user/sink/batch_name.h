/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BATCH_NAME_H
#define __CIRRON_BATCH_NAME_H

#include <stddef.h>

/* "<session_id>.<seq>.json", seq of 8 or more digits: the session id's length, or 0 for any
 * other name (temp files, foreign files). The spool and its cap agree on it. */
size_t batch_name__id_len(const char *name);

#endif
