/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OTLP_H
#define __CIRRON_OTLP_H

#include <stddef.h>
#include "ship/otlp_config.h"
#include "ship/shipper.h"

/* --output ...,otlp[=URL]: each batch's final spans (otel_spans.h) POSTed to an OTLP/HTTP
 * receiver (otlp_config.h says where and how), one request per batch, by a shipper whose
 * state log is <root>/otlp-sent.log. Answers as the OTLP spec has them: 2xx taken (a partial
 * success's rejected spans are counted, and said); 429, 502, 503, 504 and no answer retried
 * with backoff, after Retry-After when given; 400, 413 and 422 refuse the batch's content, which
 * is dropped and counted; other 4xx (credentials, a wrong path) keep it for later, as a 500
 * does (a receiver's database hiccup must not cost spans). */
#define OTLP_SENT_LOG "otlp-sent.log"

/* Takes c (freed with the shipper). Returns NULL with why filled. */
struct shipper *otlp__start(struct otlp_config *c, const char *root, int spool_dirfd,
			    char *why, size_t why_size);
/* A 2xx response's partial_success.rejected_spans, protobuf or JSON; 0 if none. */
long long otlp__rejected_spans(const char *body, size_t len, bool json);

#endif
