// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The store's span rows (s3_rows.h): a batch file in, one gzip'd NDJSON object per date out.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sink/otel_spans.h"
#include "sink/s3_rows.h"
#include "sink/s3_upload.h"
#include "sink/span_rows.h"

char *s3_rows__key(const char *prefix, const char *job, const char *date, const char *name)
{
	size_t n = strlen(name);
	char *key;

	if (n > 5 && !strcmp(name + n - 5, ".json"))
		n -= 5;
	if (asprintf(&key, "%s%sspans/job=%s/date=%s/%.*s.ndjson.gz", prefix, *prefix ? "/" : "",
		     job, date, (int)n, name) < 0)
		return NULL;
	return key;
}

static enum ship_result send_rows(void *arg, const char *name, const char *data, size_t len,
				  struct ship_answer *a, char *why, size_t size)
{
	struct s3_dest *d = arg;
	cJSON *batch = cJSON_ParseWithLength(data, len);
	enum ship_result res = SHIP_SENT;
	struct otel_batch b;
	struct span_rows rows;

	if (!batch) {
		snprintf(why, size, "spool batch %s is not JSON", name);
		return SHIP_REJECTED;
	}
	if (otel_batch__from_json(&b, batch, why, size)) {
		cJSON_Delete(batch);
		return SHIP_REJECTED;
	}
	if (span_rows__encode(&b, &rows)) {
		snprintf(why, size, "out of memory");
		res = SHIP_RETRY;
		goto out;
	}
	for (size_t i = 0; i < rows.n && res == SHIP_SENT; i++) {
		struct out_buf gz = { 0 };
		char *key = s3_rows__key(d->url.prefix, b.res.job, rows.parts[i].date, name);

		if (!key || out_buf__gzip(rows.parts[i].buf.data, rows.parts[i].buf.len, &gz)) {
			snprintf(why, size, "out of memory");
			res = SHIP_RETRY;
		} else {
			uint64_t objects = a->items;

			res = s3_dest__put(d, key, "application/x-ndjson", gz.data, gz.len, a, why,
					   size);
			a->items = objects;	/* counted in spans below */
		}
		free(key);
		out_buf__free(&gz);
	}
	if (res == SHIP_SENT)
		a->items = rows.rows;
	span_rows__free(&rows);
out:
	otel_batch__free(&b);
	cJSON_Delete(batch);
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
				    .log_prefix = prefix };

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
