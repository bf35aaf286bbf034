/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_MAPPED_FILE_H
#define __CIRRON_MAPPED_FILE_H

#include <stdint.h>
#include <sys/types.h>

struct sym_table;

/* An ELF file the target maps executable. The fd keeps it readable after the target
 * exits (kernel names are resolved from its symbols at the last flush). */
struct mapped_file {
	dev_t dev;
	ino_t ino;
	char *path;		/* as the target sees it */
	char *host_path;	/* /proc/PID/root/... */
	int fd;
	uint64_t map_start, map_end;	/* lowest and highest address of its mappings */
	uint64_t bias;		/* runtime address = bias + ELF vaddr */
	struct sym_table *syms;	/* loaded on first address lookup */
};

#endif
