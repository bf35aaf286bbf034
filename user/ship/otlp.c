// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The OTLP/HTTP destination (otlp.h): encode, compress, POST with libcurl, sort the answer.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "ship/gzip.h"
#include "ship/otlp.h"
#include "ship/otlp_encode.h"

#define BODY_KEEP 2048		/* of an answer: enough for a reason or a partial success */
#define STALL_S 10L		/* a receiver silent this long is left and asked again */

struct otlp_dest {
	struct otlp_config cfg;
	int cancel;
	long long rejected_said;	/* partial successes: spans said so far */
};

struct resp {
	char body[BODY_KEEP];
	size_t len;
};

static size_t keep_body(char *data, size_t size, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t len = size * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, data, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = 0;
	return len;
}

static int cancelled(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	return __atomic_load_n((const int *)arg, __ATOMIC_RELAXED);
}

/* ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2 } in
 * field 1 of the response. */
static long long pb_rejected(const unsigned char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint64_t key = 0, v = 0;
		int shift = 0;

		while (i < len && shift < 64) {
			key |= (uint64_t)(p[i] & 0x7f) << shift;
			shift += 7;
			if (!(p[i++] & 0x80))
				break;
		}
		if ((key & 7) == 0 || (key & 7) == 2) {
			shift = 0;
			while (i < len && shift < 64) {
				v |= (uint64_t)(p[i] & 0x7f) << shift;
				shift += 7;
				if (!(p[i++] & 0x80))
					break;
			}
		} else {
			return 0;	/* no other wire types in these messages */
		}
		if ((key & 7) == 2 && key >> 3 == 1)	/* partial_success: step into it */
			continue;
		if ((key & 7) == 0 && key >> 3 == 1)
			return (long long)v;
		if ((key & 7) == 2)
			i += v;
	}
	return 0;
}

long long otlp__rejected_spans(const char *body, size_t len, bool json)
{
	cJSON *r, *ps, *n;
	long long v = 0;

	if (!json)
		return pb_rejected((const unsigned char *)body, len);
	r = cJSON_ParseWithLength(body, len);
	ps = cJSON_GetObjectItemCaseSensitive(r, "partialSuccess");
	n = cJSON_GetObjectItemCaseSensitive(ps, "rejectedSpans");
	if (cJSON_IsString(n) && n->valuestring)
		v = atoll(n->valuestring);
	else if (cJSON_IsNumber(n))
		v = (long long)n->valuedouble;
	cJSON_Delete(r);
	return v;
}

static enum ship_result classify(long status)
{
	if (status >= 200 && status < 300)
		return SHIP_SENT;
	if (status == 400 || status == 413 || status == 422)
		return SHIP_REJECTED;
	if (status >= 400 && status < 500 && status != 408 && status != 429)
		return SHIP_REFUSED;
	return SHIP_RETRY;
}

static enum ship_result post(struct otlp_dest *d, const struct sbuf *body, size_t nspans,
			     struct ship_answer *a, char *why, size_t size)
{
	struct curl_slist *hdrs = NULL;
	CURL *h = curl_easy_init();
	struct resp r = { .len = 0 };
	enum ship_result res;
	curl_off_t ra = 0;
	CURLcode rc;

	if (!h) {
		snprintf(why, size, "out of memory");
		return SHIP_RETRY;
	}
	hdrs = curl_slist_append(hdrs, d->cfg.json ? "Content-Type: application/json" :
				 "Content-Type: application/x-protobuf");
	if (d->cfg.gzip)
		hdrs = curl_slist_append(hdrs, "Content-Encoding: gzip");
	hdrs = curl_slist_append(hdrs, "Expect:");	/* no 100-continue round trip */
	for (size_t i = 0; i < d->cfg.nheaders; i++)
		hdrs = curl_slist_append(hdrs, d->cfg.headers[i]);
	curl_easy_setopt(h, CURLOPT_URL, d->cfg.url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "cirron-probe/" CIRRON_VERSION);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->n);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->p ? body->p : "");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, d->cfg.timeout_ms);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, STALL_S);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cancelled);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &d->cancel);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	if (*d->cfg.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, d->cfg.ca_file);
	if (*d->cfg.client_cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, d->cfg.client_cert);
	if (*d->cfg.client_key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, d->cfg.client_key);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	if (rc != CURLE_OK) {
		a->status = 0;
		snprintf(why, size, "no answer: %s", curl_easy_strerror(rc));
		res = SHIP_RETRY;
	} else {
		res = classify(a->status);
		if (!curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) && ra > 0)
			a->retry_after_s = (double)ra;
		if (res != SHIP_SENT) {
			/* the receiver's reason, one line (it never holds our headers) */
			for (char *c = r.body; *c; c++)
				if (*c == '\n' || *c == '\r')
					*c = ' ';
			snprintf(why, size, "HTTP %ld%s%.200s", a->status, r.len ? ": " : "",
				 r.body);
		}
	}
	if (res == SHIP_SENT) {
		long long rej = r.len ? otlp__rejected_spans(r.body, r.len, d->cfg.json) : 0;

		a->bytes += body->n;
		a->items += nspans - (rej > 0 && (size_t)rej < nspans ? (size_t)rej : 0);
		if (rej > 0 && !d->rejected_said++)
			elog("otlp: %s took a batch but rejected %lld of its %zu spans (partial "
			     "success); they are not sent again", d->cfg.url, rej, nspans);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	return res;
}

/* A group of batches in one request: a ResourceSpans each. */
static enum ship_result send_batches(void *arg, const struct ship_item *items, size_t n,
				     struct ship_answer *a, char *why, size_t size)
{
	struct otlp_dest *d = arg;
	cJSON **json = calloc(n, sizeof(cJSON *));
	struct otel_batch *b = calloc(n, sizeof(*b));
	struct sbuf body = { 0 }, gz = { 0 };
	enum ship_result res = SHIP_SENT;
	size_t nb = 0, nspans = 0;
	int err;

	if (!json || !b) {
		snprintf(why, size, "out of memory");
		res = SHIP_RETRY;
		goto out;
	}
	for (; nb < n && res == SHIP_SENT; nb++) {
		json[nb] = cJSON_ParseWithLength(items[nb].data, items[nb].len);
		if (!json[nb]) {
			snprintf(why, size, "spool batch %s is not JSON", items[nb].name);
			res = SHIP_REJECTED;
		} else if (otel_batch__from_json(&b[nb], json[nb], why, size)) {
			res = SHIP_REJECTED;
		}
		nspans += b[nb].n;
	}
	if (res != SHIP_SENT || !nspans)	/* nothing final in them: nothing to send */
		goto out;
	err = d->cfg.json ? otlp__encode_json(b, nb, &body) : otlp__encode_protobuf(b, nb, &body);
	if (!err && d->cfg.gzip)
		err = gzip__append(body.p, body.n, &gz);
	if (err) {
		snprintf(why, size, "out of memory");
		res = SHIP_RETRY;
		goto out;
	}
	res = post(d, d->cfg.gzip ? &gz : &body, nspans, a, why, size);
out:
	for (size_t i = 0; i < nb; i++) {
		otel_batch__free(&b[i]);
		cJSON_Delete(json[i]);
	}
	free(b);
	free(json);
	sbuf__free(&body);
	sbuf__free(&gz);
	return res;
}

static void free_dest(void *arg)
{
	struct otlp_dest *d = arg;

	otlp_config__free(&d->cfg);
	free(d);
}

static void cancel(void *arg)
{
	struct otlp_dest *d = arg;

	__atomic_store_n(&d->cancel, 1, __ATOMIC_RELAXED);
}

static const struct ship_ops otlp_ops = {
	.send = send_batches,
	.free_ctx = free_dest,
	.cancel = cancel,
};

struct shipper *otlp__start(struct otlp_config *c, const char *root, int spool_dirfd,
			    char *why, size_t why_size)
{
	struct otlp_dest *d = calloc(1, sizeof(*d));
	char prefix[1300];
	/* a backlog goes in fewer requests: up to 16 batches (1 MB of batch files) each, no
	 * waiting for more; small enough that a slow receiver (MLflow on SQLite takes ~1,000
	 * spans a second) answers within the timeout */
	struct shipper_config sc = { .what = "otlp", .log_name = OTLP_SENT_LOG, .items = "spans",
				     .ops = &otlp_ops, .log_prefix = prefix, .group_max = 16,
				     .group_bytes = 1ull << 20 };

	if (!d) {
		otlp_config__free(c);
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	d->cfg = *c;	/* the headers move with it */
	memset(c, 0, sizeof(*c));
	sc.ctx = d;
	sc.where = d->cfg.url;
	snprintf(prefix, sizeof(prefix), "%s ", d->cfg.url);
	return shipper__start(&sc, root, spool_dirfd, why, why_size);
}
