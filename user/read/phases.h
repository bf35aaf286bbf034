/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PHASES_H
#define __CIRRON_PHASES_H

#include <string.h>

/* The phases of a step the read-back views add up (report, trace --ranks, trace's epoch
 * summaries): collective_wait is counted wherever it sits (inside backward with DDP). */
enum phase { PH_DATA, PH_FORWARD, PH_BACKWARD, PH_OPTIMIZER, PH_COLLECTIVE, PH__COUNT };

static const char *const phase_names[PH__COUNT] = {
	"data_load", "forward", "backward", "optimizer_step", "collective_wait",
};

/* The phase a span's name is, or -1. */
static inline int phase__of(const char *name)
{
	for (int p = 0; p < PH__COUNT; p++)
		if (!strcmp(name, phase_names[p]))
			return p;
	return -1;
}

#endif
