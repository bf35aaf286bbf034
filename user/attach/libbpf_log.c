// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libbpf's messages, routed to stderr by our verbosity (libbpf_log.h).
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include "attach/libbpf_log.h"
#include "common/log.h"

static bool libbpf_quiet;

void libbpf_log__quiet(bool quiet)
{
	libbpf_quiet = quiet;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if ((level == LIBBPF_DEBUG || libbpf_quiet) && log_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void libbpf_log__install(void)
{
	libbpf_set_print(libbpf_print);
}
