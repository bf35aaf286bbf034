// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The OTLP destination's settings from the OTEL_EXPORTER_OTLP_* variables (otlp_config.h).
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ship/otlp_config.h"

#define DEFAULT_URL "http://localhost:4318/v1/traces"
#define TRACES_PATH "/v1/traces"

static const char *from_env(const char *name, void *ctx)
{
	return getenv(name);
}

/* OTEL_EXPORTER_OTLP_TRACES_<what>, else OTEL_EXPORTER_OTLP_<what>; NULL when neither is
 * set to something. */
static const char *var(const char *what, const char *(*get)(const char *, void *), void *ctx)
{
	char name[96];
	const char *v;

	snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_TRACES_%s", what);
	v = get(name, ctx);
	if (v && *v)
		return v;
	snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s", what);
	v = get(name, ctx);
	return v && *v ? v : NULL;
}

int otlp_config__check_url(const char *url, char *why, size_t size)
{
	const char *host;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else {
		snprintf(why, size, "'%s' is not an http:// or https:// URL", url);
		return -EINVAL;
	}
	if (!*host || *host == '/' || strpbrk(url, " \t\r\n")) {
		snprintf(why, size, "'%s' has no host, or a space", url);
		return -EINVAL;
	}
	return 0;
}

/* A base URL with the traces path appended, as the SDKs do for OTEL_EXPORTER_OTLP_ENDPOINT. */
static int base_url(struct otlp_config *c, const char *base, char *why, size_t size)
{
	size_t n = strlen(base);

	if (otlp_config__check_url(base, why, size))
		return -EINVAL;
	while (n && base[n - 1] == '/')
		n--;
	if (n + strlen(TRACES_PATH) >= sizeof(c->url)) {
		snprintf(why, size, "URL too long");
		return -EINVAL;
	}
	snprintf(c->url, sizeof(c->url), "%.*s%s", (int)n, base, TRACES_PATH);
	return 0;
}

static int unhex(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* [a, a+n) trimmed and percent-decoded into a new string; NULL on a bad escape. */
static char *decode(const char *a, size_t n)
{
	char *out, *w;

	while (n && isspace((unsigned char)*a))
		a++, n--;
	while (n && isspace((unsigned char)a[n - 1]))
		n--;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	w = out;
	for (size_t i = 0; i < n; i++) {
		if (a[i] == '%') {
			int h = i + 2 < n ? unhex((unsigned char)a[i + 1]) : -1;
			if (h < 0 || unhex((unsigned char)a[i + 2]) < 0) {
				free(out);
				return NULL;
			}
			*w++ = (char)(h * 16 + unhex((unsigned char)a[i + 2]));
			i += 2;
		} else {
			*w++ = a[i];
		}
	}
	*w = 0;
	return out;
}

static int parse_headers(struct otlp_config *c, const char *list, char *why, size_t size)
{
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		char *k = eq ? decode(p, (size_t)(eq - p)) : NULL;
		char *v = eq ? decode(eq + 1, len - (size_t)(eq - p) - 1) : NULL;
		char *line = NULL, **h;
		bool ok = k && v && *k && !strpbrk(k, ": \t\r\n") && !strpbrk(v, "\r\n");

		if (ok && asprintf(&line, "%s: %s", k, v) < 0)
			line = NULL;
		h = line ? reallocarray(c->headers, c->nheaders + 1, sizeof(*h)) : NULL;
		if (!h) {
			if (!ok)
				snprintf(why, size, "OTEL_EXPORTER_OTLP_HEADERS: entry %zu is not "
					 "key=value (a key without ':' or spaces, percent-encoded)",
					 c->nheaders + 1);
			else
				snprintf(why, size, "out of memory");
			free(k);
			free(v);
			free(line);
			return -EINVAL;
		}
		c->headers = h;
		h[c->nheaders++] = line;
		snprintf(c->header_names + strlen(c->header_names),
			 sizeof(c->header_names) - strlen(c->header_names), "%s%s",
			 *c->header_names ? ", " : "", k);
		free(k);
		free(v);
		p += len;
		while (*p == ',')
			p++;
	}
	return 0;
}

static int copy_path(char *dst, size_t dsize, const char *v, const char *what, char *why,
		     size_t size)
{
	if (!v)
		return 0;
	if (strlen(v) >= dsize) {
		snprintf(why, size, "OTEL_EXPORTER_OTLP_%s: path too long", what);
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

int otlp_config__load_from(struct otlp_config *c, const char *cli_url,
			   const char *(*get)(const char *name, void *ctx), void *ctx,
			   char *why, size_t size)
{
	const char *v;
	char name[96], *end;
	int err;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = 10000;
	snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	if (cli_url && *cli_url) {
		err = base_url(c, cli_url, why, size);
	} else if ((v = get(name, ctx)) && *v) {
		err = otlp_config__check_url(v, why, size);
		if (!err && strlen(v) >= sizeof(c->url)) {
			snprintf(why, size, "URL too long");
			err = -EINVAL;
		}
		if (!err)
			strcpy(c->url, v);
	} else if ((v = get("OTEL_EXPORTER_OTLP_ENDPOINT", ctx)) && *v) {
		err = base_url(c, v, why, size);
	} else {
		strcpy(c->url, DEFAULT_URL);
		err = 0;
	}
	if (err)
		goto fail;
	v = var("PROTOCOL", get, ctx);
	if (v && !strcmp(v, "http/json")) {
		c->json = true;
	} else if (v && strcmp(v, "http/protobuf") != 0) {
		snprintf(why, size, "OTEL_EXPORTER_OTLP_PROTOCOL '%s': cirron-probe sends "
			 "http/protobuf or http/json (OTLP over HTTP), not gRPC", v);
		err = -EINVAL;
		goto fail;
	}
	v = var("COMPRESSION", get, ctx);
	if (v && !strcmp(v, "gzip")) {
		c->gzip = true;
	} else if (v && strcmp(v, "none") != 0) {
		snprintf(why, size, "OTEL_EXPORTER_OTLP_COMPRESSION '%s': gzip or none", v);
		err = -EINVAL;
		goto fail;
	}
	v = var("TIMEOUT", get, ctx);
	if (v) {
		errno = 0;
		c->timeout_ms = strtol(v, &end, 10);
		if (errno || *end || c->timeout_ms <= 0 || c->timeout_ms > 3600000) {
			snprintf(why, size, "OTEL_EXPORTER_OTLP_TIMEOUT '%s': milliseconds, 1 to "
				 "3600000", v);
			err = -EINVAL;
			goto fail;
		}
	}
	v = var("HEADERS", get, ctx);
	if (v && (err = parse_headers(c, v, why, size)))
		goto fail;
	if ((err = copy_path(c->ca_file, sizeof(c->ca_file), var("CERTIFICATE", get, ctx),
			     "CERTIFICATE", why, size)) ||
	    (err = copy_path(c->client_cert, sizeof(c->client_cert),
			     var("CLIENT_CERTIFICATE", get, ctx), "CLIENT_CERTIFICATE", why, size)) ||
	    (err = copy_path(c->client_key, sizeof(c->client_key), var("CLIENT_KEY", get, ctx),
			     "CLIENT_KEY", why, size)))
		goto fail;
	return 0;
fail:
	otlp_config__free(c);
	return err;
}

int otlp_config__load(struct otlp_config *c, const char *cli_url, char *why, size_t size)
{
	return otlp_config__load_from(c, cli_url, from_env, NULL, why, size);
}

void otlp_config__free(struct otlp_config *c)
{
	for (size_t i = 0; i < c->nheaders; i++) {
		explicit_bzero(c->headers[i], strlen(c->headers[i]));
		free(c->headers[i]);
	}
	free(c->headers);
	c->headers = NULL;
	c->nheaders = 0;
}
