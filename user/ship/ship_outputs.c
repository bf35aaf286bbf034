// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The fleet outputs (ship_outputs.h): which shippers --output asks for, and their health.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/s3.h"
#include "ship/otlp.h"
#include "ship/s3_rows.h"
#include "ship/s3_upload.h"
#include "ship/ship_outputs.h"

enum { OUT_BATCHES, OUT_ROWS, OUT_OTLP, OUT__COUNT };
static const char *const health_keys[OUT__COUNT] = { "upload", "upload_rows", "otlp" };

struct ship_outputs {
	struct shipper *sh[OUT__COUNT];
};

static int start_s3(struct ship_outputs *o, const struct options *opts, const char *host,
		    int dirfd, char *why, size_t size)
{
	struct s3_config cfg;
	struct s3_url url;

	if (s3__parse_url(opts->s3_url, &url, why, size) || s3__config_load(&cfg, why, size))
		return -1;
	o->sh[OUT_BATCHES] = s3_upload__start(&url, &cfg, host, opts->path, dirfd, why, size);
	if (o->sh[OUT_BATCHES])
		o->sh[OUT_ROWS] = s3_rows__start(&url, &cfg, opts->path, dirfd, why, size);
	if (o->sh[OUT_ROWS])
		ilog("uploading spool batches to %s/%s/ and span rows to %s/spans/ (credentials: "
		     "%s)", opts->s3_url, host, opts->s3_url, cfg.creds_from);
	explicit_bzero(&cfg, sizeof(cfg));
	return o->sh[OUT_ROWS] ? 0 : -1;
}

static int start_otlp(struct ship_outputs *o, const struct options *opts, int dirfd,
		      char *why, size_t size)
{
	struct otlp_config c;
	char url[sizeof(c.url)], names[sizeof(c.header_names)];
	bool json, gzip;

	if (otlp_config__load(&c, opts->otlp_url, why, size))
		return -1;
	snprintf(url, sizeof(url), "%s", c.url);
	snprintf(names, sizeof(names), "%s", c.header_names);
	json = c.json;
	gzip = c.gzip;
	o->sh[OUT_OTLP] = otlp__start(&c, opts->path, dirfd, why, size);
	if (o->sh[OUT_OTLP])
		ilog("sending spans to %s (OTLP/HTTP %s%s%s%s)", url, json ? "JSON" : "protobuf",
		     gzip ? ", gzip" : "", *names ? ", headers " : "", names);
	return o->sh[OUT_OTLP] ? 0 : -1;
}

struct ship_outputs *ship_outputs__start(const struct options *opts, const char *host,
					 int spool_dirfd, char *why, size_t size)
{
	struct ship_outputs *o;

	*why = 0;
	if (!opts->s3_url && !opts->otlp_url)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	s3__global_init();
	if ((opts->s3_url && start_s3(o, opts, host, spool_dirfd, why, size)) ||
	    (opts->otlp_url && start_otlp(o, opts, spool_dirfd, why, size))) {
		ship_outputs__stop(o, 0);
		return NULL;
	}
	return o;
}

void ship_outputs__written(void *arg, const char *name, uint64_t bytes)
{
	struct ship_outputs *o = arg;

	for (int i = 0; i < OUT__COUNT; i++)
		if (o->sh[i])
			shipper__written(o->sh[i], name, bytes);
}

void ship_outputs__health(struct ship_outputs *o, cJSON *health)
{
	for (int i = 0; o && i < OUT__COUNT; i++)
		if (o->sh[i])
			cJSON_AddItemToObject(health, health_keys[i], shipper__health(o->sh[i]));
}

bool ship_outputs__idle(struct ship_outputs *o)
{
	for (int i = 0; o && i < OUT__COUNT; i++)
		if (o->sh[i] && !shipper__idle(o->sh[i]))
			return false;
	return true;
}

void ship_outputs__stop(struct ship_outputs *o, double drain_s)
{
	if (!o)
		return;
	for (int i = 0; i < OUT__COUNT; i++)
		shipper__drain(o->sh[i], drain_s);
	for (int i = 0; i < OUT__COUNT; i++)
		shipper__stop(o->sh[i], drain_s);
	free(o);
}
