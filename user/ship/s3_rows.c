// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The store's span rows (s3_rows.h): a batch file in, one gzip'd NDJSON object per date out.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ship/gzip.h"
#include "ship/otel_spans.h"
#include "ship/s3_rows.h"
#include "ship/s3_upload.h"
#include "ship/span_rows.h"

/* An object gathers the rows of up to this many batch files (of every session of the agent)
 * written within ROWS_LINGER_S: a fleet of 1,000 ranks makes a few objects a minute per node,
 * not one per rank and second (engines list and fetch every object; stores bill each PUT). */
#define ROWS_GROUP_MAX 4096
#define ROWS_GROUP_BYTES (16ull << 20)	/* of batch files: the rows of a group are held in memory
						 * (about as many bytes), then gzip'd (~1 MB) */
#define ROWS_LINGER_S 30.0

char *s3_rows__key(const char *prefix, const char *job, const char *date, const char *name)
{
	size_t n = strlen(name);
	char *key;

	if (n > 5 && !strcmp(name + n - 5, ".json"))
		n -= 5;
	/* the date in the name too: a group that spans midnight has two objects, and a
	 * read-back that gathers a partition's objects in one directory keeps both */
	if (asprintf(&key, "%s%sspans/job=%s/date=%s/%.*s.%s.ndjson.gz", prefix,
		     *prefix ? "/" : "", job, date, (int)n, name, date) < 0)
		return NULL;
	return key;
}

/* A group of batches: their rows by job and date, one object each, named after the first
 * batch of the group (so a group sent again, which starts with the same batch, replaces
 * its objects). */
static enum ship_result send_rows(void *arg, const struct ship_item *items, size_t n,
				  struct ship_answer *a, char *why, size_t size)
{
	struct s3_dest *d = arg;
	struct span_rows rows = { 0 };
	enum ship_result res = SHIP_SENT;

	for (size_t i = 0; i < n; i++) {
		cJSON *batch = cJSON_ParseWithLength(items[i].data, items[i].len);
		struct otel_batch b;
		int err;

		if (!batch) {
			snprintf(why, size, "spool batch %s is not JSON", items[i].name);
			span_rows__free(&rows);
			return SHIP_REJECTED;
		}
		if (otel_batch__from_json(&b, batch, why, size)) {
			cJSON_Delete(batch);
			span_rows__free(&rows);
			return SHIP_REJECTED;
		}
		err = span_rows__encode(&b, &rows);
		otel_batch__free(&b);
		cJSON_Delete(batch);
		if (err) {
			snprintf(why, size, "out of memory");
			return SHIP_RETRY;
		}
	}
	for (size_t i = 0; i < rows.n && res == SHIP_SENT; i++) {
		struct sbuf gz = { 0 };
		char *key = s3_rows__key(d->url.prefix, rows.parts[i].job, rows.parts[i].date,
					 items[0].name);

		if (!key || gzip__append(rows.parts[i].buf.p, rows.parts[i].buf.n, &gz)) {
			snprintf(why, size, "out of memory");
			res = SHIP_RETRY;
		} else {
			uint64_t objects = a->items;

			res = s3_dest__put(d, key, "application/x-ndjson", gz.p, gz.n, a, why,
					   size);
			a->items = objects;	/* counted in spans below */
		}
		free(key);
		sbuf__free(&gz);
	}
	if (res == SHIP_SENT)
		a->items = rows.rows;
	span_rows__free(&rows);
	return res;
}

static const struct ship_ops rows_ops = {
	.check = s3_dest__check,
	.send = send_rows,
	.free_ctx = s3_dest__free,
	.cancel = s3_dest__cancel,
};

struct shipper *s3_rows__start(const struct s3_url *url, const struct s3_config *cfg,
			       const char *root, int spool_dirfd, char *why, size_t why_size)
{
	struct s3_dest *d = s3_dest__new(url, cfg, "");
	char where[1200], prefix[1200];
	struct shipper_config c = { .what = "s3 rows", .log_name = S3_ROWS_SENT_LOG,
				    .items = "spans", .ops = &rows_ops, .ctx = d, .where = where,
				    .log_prefix = prefix, .group_max = ROWS_GROUP_MAX,
				    .group_bytes = ROWS_GROUP_BYTES, .linger_s = ROWS_LINGER_S };

	if (!d) {
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	snprintf(where, sizeof(where), "s3://%s/%s%sspans/", url->bucket, url->prefix,
		 *url->prefix ? "/" : "");
	snprintf(prefix, sizeof(prefix), "%s/%s%sspans/", url->bucket, url->prefix,
		 *url->prefix ? "/" : "");
	return shipper__start(&c, root, spool_dirfd, why, why_size);
}
