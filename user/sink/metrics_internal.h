/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_METRICS_INTERNAL_H
#define __CIRRON_METRICS_INTERNAL_H

/* Shared by metrics.c (the series and the page) and metrics_http.c (the server) only; the
 * rest of cirron-probe uses metrics.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sink/metrics.h"

#define REQUEST_MAX 4096
#define NNODE 4			/* node_metrics' rows (metrics.c) */

struct conn {
	int fd;			/* -1: free */
	uint64_t since_ns;
	char in[REQUEST_MAX];
	size_t nin;
	char *out;		/* the response, once the request is read */
	size_t nout, off;
};

struct metrics {
	int fd;
	uint16_t port;
	uint64_t grace_ns;
	struct series *series;
	double ringbuf_drops, spool_bytes;	/* observer-wide, from the newest health */
	double node[NNODE];			/* from the newest --sys-interval sample */
	bool has_node;
	uint64_t scrapes;
	struct conn conns[METRICS_MAX_CONNS];
};

/* metrics.c: series of sessions that ended grace_ns before now_ns go. */
void metrics__drop_ended(struct metrics *m, uint64_t now_ns);
void metrics__free_series(struct metrics *m);

#endif
