/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REQUESTS_VIEW_H
#define __CIRRON_REQUESTS_VIEW_H

#include <stdio.h>
#include "trace/text_tree.h"

/* An inference process's requests in one line (docs/inference.md): how many ended, their
 * latency's p50/p90/p99, time to first token and decode rate where the forwards were seen:
 * "requests: 10, latency p50 12.1ms p90 30.2ms p99 31.0ms; ttft p50 4.0ms; decode p50 210
 * tokens/s per sequence". Nothing for a session without requests. A "~" before a number:
 * from a histogram (pctl.h). */
void requests_view__print(FILE *f, struct req_stats *r);

#endif
