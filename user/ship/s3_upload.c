// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The S3 destinations' shared part (s3_upload.h), and the first of them: the spool's batch
// files as they are, one object each.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ship/s3_upload.h"

#define PUT_TIMEOUT_S 30	/* a slow store is waited for, up to this per object */

struct s3_dest *s3_dest__new(const struct s3_url *url, const struct s3_config *cfg,
			     const char *host)
{
	struct s3_dest *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->url = *url;
	d->cfg = *cfg;
	d->cfg.cancel = &d->cancel;
	snprintf(d->host, sizeof(d->host), "%s", host && *host ? host : "unknown");
	for (char *c = d->host; *c; c++)	/* one path level, as the reader expects */
		if (*c == '/' || (unsigned char)*c < 0x20)
			*c = '_';
	return d;
}

void s3_dest__free(void *arg)
{
	struct s3_dest *d = arg;

	if (!d)
		return;
	explicit_bzero(&d->cfg, sizeof(d->cfg));
	free(d);
}

void s3_dest__cancel(void *arg)
{
	struct s3_dest *d = arg;

	__atomic_store_n(&d->cancel, 1, __ATOMIC_RELAXED);
}

/* A status that retrying will not change: keys, bucket, policy (not 408, 429). */
static enum ship_result failure_kind(long status)
{
	return status >= 400 && status < 500 && status != 408 && status != 429 ? SHIP_REFUSED :
									       SHIP_RETRY;
}

enum ship_result s3_dest__check(void *arg, struct ship_answer *a, char *why, size_t size)
{
	struct s3_dest *d = arg;
	struct s3_resp r;
	int err = s3__request(&d->cfg, "GET", d->url.bucket, NULL, "list-type=2&max-keys=1",
			      NULL, 0, NULL, 30, &r);

	a->status = r.status;
	if (!err && r.status == 200) {
		s3_resp__free(&r);
		return SHIP_SENT;
	}
	s3_resp__describe(&r, why, size);
	if (r.status == 404)
		snprintf(why + strlen(why), size - strlen(why), " (bucket %s)", d->url.bucket);
	s3_resp__free(&r);
	return failure_kind(a->status);
}

enum ship_result s3_dest__put(struct s3_dest *d, const char *key, const char *content_type,
			      const void *body, size_t len, struct ship_answer *a, char *why,
			      size_t size)
{
	struct s3_resp r;
	int err = s3__put(&d->cfg, d->url.bucket, key, content_type, body, len, PUT_TIMEOUT_S, &r);

	a->status = r.status;
	a->retry_after_s = r.retry_after_s;
	if (!err && r.status == 200) {
		a->bytes += len;
		a->items++;
		s3_resp__free(&r);
		return SHIP_SENT;
	}
	s3_resp__describe(&r, why, size);
	s3_resp__free(&r);
	return r.status ? failure_kind(r.status) : SHIP_RETRY;
}

/* PREFIX/HOST/NAME */
static char *batch_key(const struct s3_dest *d, const char *name)
{
	char *key;

	if (asprintf(&key, "%s%s%s/%s", d->url.prefix, *d->url.prefix ? "/" : "", d->host,
		     name) < 0)
		return NULL;
	return key;
}

static enum ship_result send_batch(void *arg, const struct ship_item *items, size_t n,
				   struct ship_answer *a, char *why, size_t size)
{
	struct s3_dest *d = arg;
	enum ship_result res = SHIP_SENT;

	for (size_t i = 0; i < n && res == SHIP_SENT; i++) {	/* one object each */
		char *key = batch_key(d, items[i].name);

		if (!key) {
			snprintf(why, size, "out of memory");
			return SHIP_RETRY;
		}
		res = s3_dest__put(d, key, "application/json", items[i].data, items[i].len, a, why,
				   size);
		free(key);
	}
	return res;
}

static const struct ship_ops batch_ops = {
	.check = s3_dest__check,
	.send = send_batch,
	.free_ctx = s3_dest__free,
	.cancel = s3_dest__cancel,
};

struct shipper *s3_upload__start(const struct s3_url *url, const struct s3_config *cfg,
				 const char *host, const char *root, int spool_dirfd,
				 char *why, size_t why_size)
{
	struct s3_dest *d = s3_dest__new(url, cfg, host);
	char where[1200], *prefix = NULL, *key;
	struct shipper_config c = { .what = "s3", .log_name = S3_SENT_LOG, .items = "objects",
				    .ops = &batch_ops, .ctx = d, .where = where };
	struct shipper *sh;

	if (!d) {
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	snprintf(where, sizeof(where), "s3://%s/%s", url->bucket, url->prefix);
	/* "BUCKET/PREFIX/HOST/": what the state log's lines begin with */
	key = batch_key(d, "");
	if (!key || asprintf(&prefix, "%s/%s", url->bucket, key) < 0)
		prefix = NULL;
	free(key);
	if (!prefix) {
		s3_dest__free(d);
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	c.log_prefix = prefix;
	sh = shipper__start(&c, root, spool_dirfd, why, why_size);
	free(prefix);
	return sh;
}
