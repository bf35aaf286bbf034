/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SHIP_OUTPUTS_H
#define __CIRRON_SHIP_OUTPUTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/options.h"

/* The fleet outputs of --output, each a shipper (shipper.h) on the spool:
 *   s3://BUCKET/PREFIX   the batch files (s3_upload.h) and the span rows (s3_rows.h)
 *   otlp[=URL]           the spans to an OTLP/HTTP receiver (otlp.h) */
struct ship_outputs;

/* Returns NULL with why filled (or with nothing to ship: opts names none, why empty). */
struct ship_outputs *ship_outputs__start(const struct options *opts, const char *host,
					 int spool_dirfd, char *why, size_t size);
/* A batch file was written (the spool's on_written hook). */
void ship_outputs__written(void *outs, const char *name, uint64_t bytes);
/* health: "upload" (the batch files), "upload_rows" (span rows), "otlp". */
void ship_outputs__health(struct ship_outputs *outs, cJSON *health);
/* Every output drains at once for up to drain_s, then stops. NULL: no-op. */
void ship_outputs__stop(struct ship_outputs *outs, double drain_s);
/* Every batch queued so far sent (or dropped). */
bool ship_outputs__idle(struct ship_outputs *outs);

#endif
