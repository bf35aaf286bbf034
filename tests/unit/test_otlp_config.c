// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// ship/otlp_config.c: the OTEL_EXPORTER_OTLP_* variables as the OpenTelemetry SDKs read them.
#include <string.h>
#include "ship/otlp_config.h"
#include "unit.h"

/* The variables of a test: "NAME=value" strings, NULL-terminated. */
static const char *lookup(const char *name, void *ctx)
{
	for (const char *const *v = ctx; *v; v++)
		if (!strncmp(*v, name, strlen(name)) && (*v)[strlen(name)] == '=')
			return *v + strlen(name) + 1;
	return NULL;
}

static int load(struct otlp_config *c, const char *cli, const char *const *vars, char *why)
{
	return otlp_config__load_from(c, cli, lookup, (void *)vars, why, 256);
}

static void endpoints(void)
{
	struct otlp_config c;
	char why[256];

	if (ASSERT_OK(load(&c, NULL, (const char *[]){ NULL }, why), "defaults"))
		ASSERT_STREQ(c.url, "http://localhost:4318/v1/traces", "the SDKs' default");
	ASSERT_FALSE(c.json, "http/protobuf by default");
	ASSERT_FALSE(c.gzip, "no compression by default");
	ASSERT_EQ(c.timeout_ms, 10000, "10 s");
	otlp_config__free(&c);
	ASSERT_OK(load(&c, "http://collector:4318/", (const char *[]){
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://other/x", NULL }, why), "cli url");
	ASSERT_STREQ(c.url, "http://collector:4318/v1/traces", "a base URL, path appended once");
	otlp_config__free(&c);
	ASSERT_OK(load(&c, "", (const char *[]){
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://h/custom/traces",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://base", NULL }, why), "traces endpoint");
	ASSERT_STREQ(c.url, "https://h/custom/traces", "used as given");
	otlp_config__free(&c);
	ASSERT_OK(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_ENDPOINT=http://base/otel",
						   NULL }, why), "general endpoint");
	ASSERT_STREQ(c.url, "http://base/otel/v1/traces", "path appended");
	otlp_config__free(&c);
	ASSERT_ERR(load(&c, "ftp://x", (const char *[]){ NULL }, why), "not http");
	ASSERT_HAS_SUBSTR(why, "not an http:// or https:// URL", "why");
	ASSERT_ERR(load(&c, "http://", (const char *[]){ NULL }, why), "no host");
}

static void settings(void)
{
	struct otlp_config c;
	char why[256];

	if (ASSERT_OK(load(&c, NULL, (const char *[]){
			"OTEL_EXPORTER_OTLP_HEADERS=api-key=s%3Dcret, x-team = ml",
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json",
			"OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
			"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=2500", NULL }, why), "settings")) {
		ASSERT_EQ(c.nheaders, 2, "two headers");
		ASSERT_STREQ(c.headers[0], "api-key: s=cret", "percent-decoded");
		ASSERT_STREQ(c.headers[1], "x-team: ml", "trimmed");
		ASSERT_STREQ(c.header_names, "api-key, x-team", "names only, for messages");
		ASSERT_TRUE(c.json, "the traces variable wins");
		ASSERT_TRUE(c.gzip, "gzip");
		ASSERT_EQ(c.timeout_ms, 2500, "timeout");
	}
	otlp_config__free(&c);
	ASSERT_OK(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_HEADERS=a=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=b=2", NULL }, why), "signal headers");
	ASSERT_EQ(c.nheaders, 1, "the signal's list replaces the general one");
	ASSERT_STREQ(c.headers[0], "b: 2", "the signal's");
	otlp_config__free(&c);
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", NULL },
			why), "grpc");
	ASSERT_HAS_SUBSTR(why, "not gRPC", "why");
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_COMPRESSION=zstd", NULL },
			why), "zstd");
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_TIMEOUT=10s", NULL },
			why), "timeout with a unit");
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_HEADERS=novalue", NULL },
			why), "a header without '='");
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_HEADERS=a b=1", NULL },
			why), "a space in a name");
	ASSERT_ERR(load(&c, NULL, (const char *[]){ "OTEL_EXPORTER_OTLP_HEADERS=k=%zz", NULL },
			why), "a bad escape");
	ASSERT_FALSE(strstr(why, "zz") != NULL, "a value is never in the message");
}

int main(void)
{
	RUN_TEST(endpoints);
	RUN_TEST(settings);
	return unit__done();
}
