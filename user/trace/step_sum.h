/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_STEP_SUM_H
#define __CIRRON_STEP_SUM_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "trace/pctl.h"

/*
 * An epoch's steps in one line, the way a person reads a long job: how many, their time's
 * p50/p90/p99 and max, the share of step time spent waiting for data, and the marks the job
 * printed in them (first and last value of each name):
 *
 *   steps: 1000, time p50 8.9ms p90 9.4ms p99 12.1ms max 30.2ms; data_load 12.3% of step
 *   time; loss 2.31 -> 0.118 (1000)
 */
#define STEP_SUM_MARKS 3

struct step_sum {
	struct pctl time;	/* ns of each closed step */
	uint64_t steps;		/* closed ones */
	long double step_ns, data_ns;
	struct {
		char name[64];
		double first, last;
		uint64_t count;
	} marks[STEP_SUM_MARKS];
	size_t nmarks;
};

/* One closed step: its duration, the data_load time under it, its marks (an array). */
void step_sum__add(struct step_sum *s, uint64_t dur_ns, uint64_t data_ns, const cJSON *marks);
/* The line above, without a newline, into buf. */
const char *step_sum__format(struct step_sum *s, char *buf, size_t size);
void step_sum__free(struct step_sum *s);

#endif
