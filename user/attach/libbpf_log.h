/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_LIBBPF_LOG_H
#define __CIRRON_ATTACH_LIBBPF_LOG_H

#include <stdbool.h>

/* libbpf's messages go to stderr at -v (info) and -vv (debug) only. */
void libbpf_log__install(void);
/* While quiet, libbpf's messages show at -vv only (a load that may fail, with a fallback
 * that says so in a line of ours). */
void libbpf_log__quiet(bool quiet);

#endif
