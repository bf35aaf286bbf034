/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REPORT_CHART_H
#define __CIRRON_REPORT_CHART_H

#include <stdio.h>
#include "trace/downsample.h"

#define REPORT_MAX_POINTS 600

/* report's pieces: text escaped for HTML, and an inline SVG line chart. */
void report__html(FILE *f, const char *s);

struct chart_line {
	const char *name, *color;
	const struct downsample *d;	/* the same number of values in each line */
};

/* Up to 8 series over the same values (steps, marks, snapshots), each drawn as at most
 * REPORT_MAX_POINTS means of consecutive values, the legend saying so. */
void report__chart(FILE *f, const char *id, const char *title, const char *unit, double scale,
		   const struct chart_line *lines, size_t nlines, const char *x_what);

#endif
