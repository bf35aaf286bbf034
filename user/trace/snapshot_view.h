/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAPSHOT_VIEW_H
#define __CIRRON_SNAPSHOT_VIEW_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* A --snapshots record in trace's text (f, a FILE *): per epoch a header line and a table
 * (parameter, shape, dtype, mean, std, norm, grad norm). */
void snapshot_view__print(const cJSON *rec, void *f);
/* The norm of a record's parameter (weights, or grad), or -1 when it has none. */
double snapshot_view__norm(const cJSON *param, const char *which);

#endif
