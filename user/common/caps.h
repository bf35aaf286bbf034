/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CAPS_H
#define __CIRRON_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of deploy/capabilities (built in as capabilities.h). */
struct cap_need {
	const char *name;	/* "CAP_BPF" */
	int cap;		/* its number */
	bool others;		/* needed only to trace other users' processes */
	unsigned int from, before;	/* kernels it applies to, (major << 8 | minor); 0: any */
	const char *why;
};

extern const struct cap_need caps__needed[];
extern const size_t caps__count;

/* This kernel's version as (major << 8 | minor). */
unsigned int caps__kernel(void);
/* The effective set of this process (/proc/self/status CapEff). */
uint64_t caps__effective(void);
/* Does c apply on this kernel, and is it missing from eff? CAP_SYS_ADMIN stands in for
 * CAP_BPF and CAP_PERFMON; CAP_SYS_RESOURCE is not needed with an unlimited RLIMIT_MEMLOCK. */
bool caps__lacks(const struct cap_need *c, uint64_t eff, unsigned int kernel);
/* The capabilities missing to trace (others: other users' processes too), names joined by
 * ", " into buf ("" for none). Returns how many. */
int caps__missing(bool others, char *buf, size_t size);

#endif
