/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_H
#define __CIRRON_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* An S3 object store, reached with libcurl (CURLOPT_AWS_SIGV4 signs). The sink uploads spool
 * batches (ship/s3_upload.c), read-back lists and fetches them (fetch/s3_fetch.c). */

struct s3_url {
	char bucket[64];	/* S3's limit is 63 */
	char prefix[1024];	/* without leading or trailing '/'; may be empty */
};

/* Where the store is and who we are, read as the AWS tools read them: AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL (path-style addressing), else https://BUCKET.s3.REGION.amazonaws.com;
 * AWS_REGION or AWS_DEFAULT_REGION (us-east-1); AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN, else the profile AWS_PROFILE (default) of AWS_SHARED_CREDENTIALS_FILE
 * (~/.aws/credentials). The secret is never logged. */
struct s3_config {
	char endpoint[512];	/* no trailing '/'; empty: AWS's virtual-hosted names */
	char region[64];
	char key_id[256];
	char secret[256];
	char token[4096];	/* session token, or empty */
	char creds_from[700];	/* "environment" or the credentials file and profile */
	const int *cancel;	/* not NULL: a request in flight ends once *cancel is set */
};

/* A response: the status, and the body when it is small (errors, listings). */
struct s3_resp {
	long status;		/* HTTP status; 0: no response (connection refused, timeout) */
	char *body;		/* NUL-terminated, or NULL (and with a sink file, NULL) */
	size_t len;
	char err[256];		/* curl's reason when status is 0 */
	double retry_after_s;	/* 503 SlowDown, 429: the Retry-After the store sent, or 0 */
};

/* "s3://BUCKET[/PREFIX]": true and u filled, else false with why. */
bool s3__is_url(const char *s);
int s3__parse_url(const char *s, struct s3_url *u, char *why, size_t why_size);
/* Returns 0, or -EINVAL with why (no credentials, an unreadable profile). */
int s3__config_load(struct s3_config *c, char *why, size_t why_size);
/* Once, before any thread uses curl; cleanup once no thread does (read-back's end). */
void s3__global_init(void);
void s3__global_cleanup(void);

/* One signed request. key: the object's key (NULL for the bucket itself); query: already in
 * canonical form (sorted, each value encoded by s3__encode), or NULL. body/len: PUT data.
 * sink: a GET's body goes there, not to r->body. timeout_s: the whole request.
 * Returns 0 when a response came (any status), -EIO otherwise (r->err says why). */
int s3__request(const struct s3_config *c, const char *method, const char *bucket,
		const char *key, const char *query, const void *body, size_t len, FILE *sink,
		long timeout_s, struct s3_resp *r);
/* A PUT with this Content-Type (s3__request's PUTs are application/json). */
int s3__put(const struct s3_config *c, const char *bucket, const char *key,
	    const char *content_type, const void *body, size_t len, long timeout_s,
	    struct s3_resp *r);
void s3_resp__free(struct s3_resp *r);
/* "403 SignatureDoesNotMatch: The request signature ...", or curl's reason: one line. */
void s3_resp__describe(const struct s3_resp *r, char *buf, size_t size);
/* The text of the first <tag>...</tag> in xml from *pos on, XML entities decoded; *pos moves
 * past it. NULL when there is none (or out of memory). The caller frees it. */
char *s3__xml_next(const char *xml, const char **pos, const char *tag);
/* s, every byte but A-Z a-z 0-9 - . _ ~ as %XX (and '/' too unless keep_slash). Caller frees. */
char *s3__encode(const char *s, bool keep_slash);

#endif
