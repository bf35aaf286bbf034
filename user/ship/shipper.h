/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SHIPPER_H
#define __CIRRON_SHIPPER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Spool batches shipped to one destination (an S3 store, its span rows, an OTLP receiver) by
 * a thread of its own: the event loop only queues names, so a slow or dead destination never
 * slows tracing. The spool is the buffer: a batch the destination did not take stays queued
 * (oldest first) and is tried again with backoff, for as long as the spool (--max-spool-mb)
 * keeps it. What was sent is appended to <root>/<log_name>, one line "<log_prefix><batch
 * name> <bytes>": a later start with the same root queues only what the log does not name,
 * so nothing is sent twice and nothing written is left behind. */
struct shipper;

/* What one request came to. */
enum ship_result {
	SHIP_SENT,	/* taken (or nothing in the batch was for this destination) */
	SHIP_RETRY,	/* no answer, or an answer that may change (5xx, 429, 408): kept */
	SHIP_REFUSED,	/* a 4xx that retrying will not change (keys, bucket, headers): kept,
			 * and not waited for at the end */
	SHIP_REJECTED,	/* this batch's content was refused (400): dropped, counted, said */
};

struct ship_answer {
	long status;		/* HTTP status, 0 for none */
	double retry_after_s;	/* the destination asked to wait this long (Retry-After), or 0 */
	uint64_t items;		/* spans (or objects) the request carried */
	uint64_t bytes;		/* request bodies sent */
};

/* A batch file handed to a destination: its name and bytes. */
struct ship_item {
	const char *name;
	const char *data;
	size_t len;
};

struct ship_ops {
	/* Optional, before the first send (S3: the bucket exists). */
	enum ship_result (*check)(void *ctx, struct ship_answer *a, char *why, size_t size);
	/* Batch files, oldest first (one, unless the config groups them), in one request (or
	 * what the destination makes of them); all taken or none. */
	enum ship_result (*send)(void *ctx, const struct ship_item *items, size_t n,
				 struct ship_answer *a, char *why, size_t size);
	void (*free_ctx)(void *ctx);
	/* Set past the stop's deadline: a request in flight ends at once. */
	void (*cancel)(void *ctx);
};

struct shipper_config {
	const char *what;	/* "s3", "s3 rows", "otlp": the first word of its messages */
	const char *where;	/* the destination as the user named it, never a secret */
	const char *log_name;	/* the state log's file name under root */
	const char *log_prefix;	/* what names the destination in the log's lines */
	const char *items;	/* what ship_answer.items counts: "spans", "objects" */
	const struct ship_ops *ops;
	void *ctx;		/* the shipper owns it from start (free_ctx), even on failure */
	/* Grouping: up to group_max batches (0: 1) of group_bytes (0: any) per request, the
	 * oldest waited on for up to linger_s for the group to fill (never while stopping). A
	 * group the destination rejects is sent again one batch at a time. */
	size_t group_max;
	uint64_t group_bytes;
	double linger_s;
};

/* Reads the state log, queues the spool's batches it does not name, starts the thread.
 * spool_dirfd: the spool directory (dup'd); root: its parent, for messages. Returns NULL
 * with why filled. */
struct shipper *shipper__start(const struct shipper_config *c, const char *root,
			       int spool_dirfd, char *why, size_t why_size);
/* A batch file was written under the spool (spool__write's hook). */
void shipper__written(struct shipper *sh, const char *name, uint64_t bytes);
/* The health block of this destination: sent, failed, retries, backlog... */
cJSON *shipper__health(struct shipper *sh);
/* Sends what is queued for up to drain_s more seconds (tried again every DRAIN_RETRY_S
 * meanwhile: a destination back during the drain gets everything), then stops the thread
 * and frees sh; what is left is said on stderr (the next start sends it). NULL: no-op. */
void shipper__stop(struct shipper *sh, double drain_s);
/* Starts the drain without waiting for it (several shippers drain at once, then stop):
 * shipper__stop then keeps this deadline. */
void shipper__drain(struct shipper *sh, double drain_s);
/* True once every batch queued so far was sent (or dropped): `ship` waits for it. */
bool shipper__idle(struct shipper *sh);

/* The backoff after n failures in a row (n >= 1), in ns: BACKOFF_MIN doubling to
 * BACKOFF_MAX, the upper half of it drawn at random (r in [0, 1)) so that a fleet's agents
 * do not come back all at once; never under retry_after_s, never over the drain's retry
 * period while stopping. Exposed for tests. */
uint64_t shipper__backoff_ns(unsigned int n, double r, double retry_after_s, bool stopping);

#endif
