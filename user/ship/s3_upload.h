/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_UPLOAD_H
#define __CIRRON_S3_UPLOAD_H

#include "common/s3.h"
#include "ship/shipper.h"

/* --output ...,s3://BUCKET/PREFIX: each spool batch, as written, is sent to
 * PREFIX/<host>/<batch file name> (the spool's copy that `trace s3://` reads back), by a shipper
 * (shipper.h) whose state log is <root>/s3-sent.log ("BUCKET/PREFIX/HOST/NAME BYTES"). */
#define S3_SENT_LOG "s3-sent.log"

/* Returns NULL with why filled. */
struct shipper *s3_upload__start(const struct s3_url *url, const struct s3_config *cfg,
				 const char *host, const char *root, int spool_dirfd,
				 char *why, size_t why_size);

/* What the S3 destinations share: the store, the keys, a cancel flag for their requests. */
struct s3_dest {
	struct s3_url url;
	struct s3_config cfg;
	char host[256];		/* one path level: '/' and control bytes as '_' */
	int cancel;
};
struct s3_dest *s3_dest__new(const struct s3_url *url, const struct s3_config *cfg,
			     const char *host);
void s3_dest__free(void *d);
void s3_dest__cancel(void *d);
/* Before the first PUT: S3 says "no such bucket" to a listing (some stores make the bucket
 * at a PUT instead, or answer 500). */
enum ship_result s3_dest__check(void *d, struct ship_answer *a, char *why, size_t size);
/* One PUT of body under key. */
enum ship_result s3_dest__put(struct s3_dest *d, const char *key, const char *content_type,
			      const void *body, size_t len, struct ship_answer *a, char *why,
			      size_t size);

#endif
