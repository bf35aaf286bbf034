/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_HANG_H
#define __CIRRON_HANG_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "tree/session.h"

#define HANG_NAMES 32		/* span names with a duration history */
#define HANG_HISTORY 63		/* durations kept per name (the newest) */
#define HANG_MIN_SAMPLES 3	/* "usual" needs a few closed spans of that name */

struct hang_history {
	char name[48];
	uint64_t dur_ns[HANG_HISTORY];
	int n, next;
};

/* Hang detection for one session: how long spans of each name usually take, and which
 * open span was last reported (once per hang, not once per check). */
struct hang_watch {
	double factor;		/* open > factor x median of its name ... */
	uint64_t min_ns;	/* ... and > min_ns: a hang; factor 0 turns detection off */
	struct hang_history names[HANG_NAMES];
	int nnames;
	uint64_t reported_id, reported_start_ns;	/* the span of the last hang reported */
	uint64_t last_input_ns;	/* wall time of the session's last tree input */
};

void hang__init(struct hang_watch *w, double factor, double min_seconds);
/* Learns from a closed span's duration. */
void hang__span_closed(struct hang_watch *w, const struct span *sp);
/* The training thread did something at wall time ts (a tree input): a span open since before
 * then is not without progress. */
void hang__progress(struct hang_watch *w, uint64_t ts_ns);
/* The median duration of closed spans of that name, 0 when too few were seen. */
uint64_t hang__median(const struct hang_watch *w, const char *name);
/* Checks s's open path at wall time now: the innermost span far past its name's median, counted
 * from its start or from the last tree input, whichever came later (a step whose stalled
 * data_load just returned is progressing again, not hung since its start); extra (id 0, may be NULL) is an open span the
 * session does not hold yet (a batch still loading). Returns a new hang record for the
 * spool, with its one-line warning in line, or NULL: nothing hangs, or this hang was
 * reported already. */
cJSON *hang__check(struct hang_watch *w, const struct session *s, const struct span *extra,
		   uint64_t now_ns, char *line, int size);

#endif
