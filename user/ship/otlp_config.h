/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OTLP_CONFIG_H
#define __CIRRON_OTLP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Where and how --output otlp sends, as the OpenTelemetry SDKs read it:
 *   URL        --output otlp=URL is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is
 *              appended; without it OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as given), else
 *              OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces
 *   headers    OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS:
 *              "key=value,key=value", each part percent-decoded; never logged
 *   encoding   OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL: http/protobuf (default) or http/json
 *              (grpc is refused: OTLP/HTTP only)
 *   gzip       OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION: gzip or none (default)
 *   timeout    OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT, ms (default 10000)
 *   TLS        OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE (CA file), ..._CLIENT_CERTIFICATE and
 *              ..._CLIENT_KEY (PEM files)
 * A signal-specific (TRACES_) variable wins over the general one. */
struct otlp_config {
	char url[1200];
	char **headers;		/* "Name: value" lines for curl */
	size_t nheaders;
	bool json;		/* http/json; else http/protobuf */
	bool gzip;
	long timeout_ms;
	char ca_file[512], client_cert[512], client_key[512];
	char header_names[256];	/* the headers' names, for messages (never their values) */
};

/* cli_url: --output otlp=URL's URL, or "" / NULL for the environment's. Returns 0, or
 * -EINVAL with why (a bad URL, protocol, header list, compression or timeout). */
int otlp_config__load(struct otlp_config *c, const char *cli_url, char *why, size_t size);
/* The same with a lookup of the variables of one's own (tests). */
int otlp_config__load_from(struct otlp_config *c, const char *cli_url,
			   const char *(*get)(const char *name, void *ctx), void *ctx,
			   char *why, size_t size);
void otlp_config__free(struct otlp_config *c);
/* An http:// or https:// URL with a host. Returns 0 or -EINVAL with why. */
int otlp_config__check_url(const char *url, char *why, size_t size);

#endif
