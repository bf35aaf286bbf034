/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TEXT_TREE_H
#define __CIRRON_TEXT_TREE_H

#include <stdbool.h>
#include <stdio.h>
#include "trace/pctl.h"
#include "read/tree_stream.h"

#define TRACE_ELIDE_RUN 20	/* longer runs of same-name siblings are elided */

/*
 * `trace`'s tree as text, streamed (tree_stream.h): one line per span in the stdout sink's
 * format, indented two spaces a level, children by start time. Runs of more than
 * TRACE_ELIDE_RUN same-name siblings show their first 3 and last 2; of the others, a span
 * with steps under it (an epoch) gets a line of its own with its steps summed up
 * (step_sum.h), the rest are counted ("... 995 more step spans ..."). Every span printed
 * with steps under it has that summary on the line below it. Held in memory: the runs'
 * heads and tails, not their middles.
 */

/* An inference process's requests: the root's kids named request. */
struct req_stats {
	size_t all;			/* request spans, open ones too */
	struct pctl latency, ttft, rate;	/* ended ones' */
};

struct text_tree {
	FILE *out;
	bool all;		/* --all: nothing elided */
	struct req_stats req;
};

extern const struct tstream_ops text_tree__ops;
/* The root's line as the tree prints it (its own copy, known before the stream). */
void text_tree__root_line(FILE *f, const struct span *root);
void text_tree__free(struct text_tree *tt);

#endif
