// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// common/s3.c without a store: URLs, the AWS environment and credentials file, the encoding
// SigV4 wants, the bits of S3's XML. The requests themselves: tests/e2e/test_s3.py.
#include <stdlib.h>
#include "common/s3.h"
#include "unit.h"

static void parse_url(void)
{
	struct s3_url u;
	char why[128];

	if (ASSERT_OK(s3__parse_url("s3://traces/job-7/nodes/", &u, why, sizeof(why)), "url")) {
		ASSERT_STREQ(u.bucket, "traces", "bucket");
		ASSERT_STREQ(u.prefix, "job-7/nodes", "prefix, no trailing '/'");
	}
	if (ASSERT_OK(s3__parse_url("s3://my.bucket-1", &u, why, sizeof(why)), "no prefix")) {
		ASSERT_STREQ(u.bucket, "my.bucket-1", "bucket");
		ASSERT_STREQ(u.prefix, "", "empty prefix");
	}
	ASSERT_OK(s3__parse_url("s3://abc//x", &u, why, sizeof(why)), "leading slashes dropped");
	ASSERT_STREQ(u.prefix, "x", "prefix after //");
	ASSERT_ERR(s3__parse_url("http://traces/x", &u, why, sizeof(why)), "not s3://");
	ASSERT_ERR(s3__parse_url("s3://", &u, why, sizeof(why)), "no bucket");
	ASSERT_ERR(s3__parse_url("s3://ab", &u, why, sizeof(why)), "2-letter bucket");
	ASSERT_ERR(s3__parse_url("s3://Traces/x", &u, why, sizeof(why)), "capitals");
	ASSERT_HAS_SUBSTR(why, "bad bucket name", "why");
	ASSERT_ERR(s3__parse_url("s3://traces/a//b", &u, why, sizeof(why)), "empty level");
	ASSERT_ERR(s3__parse_url("s3://traces/a\nb", &u, why, sizeof(why)), "control byte");
	ASSERT_FALSE(s3__is_url("./.cirron"), "a path");
	ASSERT_FALSE(s3__is_url(NULL), "NULL");
}

static void clear_env(void)
{
	static const char *const vars[] = {
		"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void config_from_environment(void)
{
	struct s3_config c;
	char why[600];

	clear_env();
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8333/", 1);
	setenv("AWS_DEFAULT_REGION", "eu-west-3", 1);
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t", 1);
	if (ASSERT_OK(s3__config_load(&c, why, sizeof(why)), "load")) {
		ASSERT_STREQ(c.endpoint, "http://127.0.0.1:8333", "endpoint, no trailing '/'");
		ASSERT_STREQ(c.region, "eu-west-3", "AWS_DEFAULT_REGION");
		ASSERT_STREQ(c.key_id, "AKID", "key id");
		ASSERT_STREQ(c.secret, "s3cr3t", "secret");
		ASSERT_STREQ(c.creds_from, "environment", "from");
	}
	setenv("AWS_ENDPOINT_URL_S3", "https://s3.internal", 1);	/* the S3 one wins */
	setenv("AWS_REGION", "us-west-2", 1);
	if (ASSERT_OK(s3__config_load(&c, why, sizeof(why)), "load")) {
		ASSERT_STREQ(c.endpoint, "https://s3.internal", "AWS_ENDPOINT_URL_S3");
		ASSERT_STREQ(c.region, "us-west-2", "AWS_REGION");
	}
	setenv("AWS_ENDPOINT_URL_S3", "ftp://x", 1);
	ASSERT_ERR(s3__config_load(&c, why, sizeof(why)), "ftp endpoint");
	clear_env();
}

static void config_from_credentials_file(void)
{
	char path[] = "/tmp/cirron-unit-s3-XXXXXX", why[600];
	struct s3_config c;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!ASSERT_OK_PTR(f, "credentials file"))
		return;
	fputs("# the AWS CLI's format\n[default]\naws_access_key_id = DEFAULTKEY\n"
	      "aws_secret_access_key=defaultsecret\n\n[ci]\n  aws_access_key_id = CIKEY  \n"
	      "aws_secret_access_key = cisecret\naws_session_token = tok\n[empty]\nregion = x\n", f);
	fclose(f);
	clear_env();
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	if (ASSERT_OK(s3__config_load(&c, why, sizeof(why)), "default profile")) {
		ASSERT_STREQ(c.key_id, "DEFAULTKEY", "key id");
		ASSERT_STREQ(c.secret, "defaultsecret", "secret");
		ASSERT_STREQ(c.region, "us-east-1", "default region");
		ASSERT_STREQ(c.endpoint, "", "AWS's own endpoint");
	}
	setenv("AWS_PROFILE", "ci", 1);
	if (ASSERT_OK(s3__config_load(&c, why, sizeof(why)), "profile ci")) {
		ASSERT_STREQ(c.key_id, "CIKEY", "trimmed key id");
		ASSERT_STREQ(c.token, "tok", "session token");
		ASSERT_HAS_SUBSTR(c.creds_from, "profile ci", "from");
	}
	setenv("AWS_PROFILE", "empty", 1);
	ASSERT_ERR(s3__config_load(&c, why, sizeof(why)), "a profile without keys");
	ASSERT_HAS_SUBSTR(why, "[empty]", "why names the profile");
	setenv("AWS_PROFILE", "nope", 1);
	ASSERT_ERR(s3__config_load(&c, why, sizeof(why)), "no such profile");
	ASSERT_HAS_SUBSTR(why, "no profile in", "why");
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);	/* half of a pair is no pair */
	ASSERT_ERR(s3__config_load(&c, why, sizeof(why)), "a key id alone");
	unlink(path);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	ASSERT_ERR(s3__config_load(&c, why, sizeof(why)), "no file");
	ASSERT_HAS_SUBSTR(why, "no credentials file", "why");
	clear_env();
}

static void encode(void)
{
	char *e = s3__encode("job 7/a+b~c_d.e-f", true);

	ASSERT_STREQ(e, "job%207/a%2Bb~c_d.e-f", "key: '/' kept");
	free(e);
	e = s3__encode("a/b=c", false);
	ASSERT_STREQ(e, "a%2Fb%3Dc", "query value: '/' and '=' encoded");
	free(e);
}

static void xml(void)
{
	const char *page = "<ListBucketResult><IsTruncated>true</IsTruncated>"
			   "<Contents><Key>p/h/a&amp;b.json</Key><Size>12</Size></Contents>"
			   "<Contents><Key>p/h/&lt;x&gt;&#34;&#x27;</Key></Contents>"
			   "<NextContinuationToken>tok/=</NextContinuationToken></ListBucketResult>";
	const char *pos = NULL, *in;
	char *c, *k;

	c = s3__xml_next(page, &pos, "Contents");
	in = NULL;
	k = c ? s3__xml_next(c, &in, "Key") : NULL;
	ASSERT_STREQ(k, "p/h/a&b.json", "first key, &amp; decoded");
	free(k);
	free(c);
	c = s3__xml_next(page, &pos, "Contents");
	in = NULL;
	k = c ? s3__xml_next(c, &in, "Key") : NULL;
	ASSERT_STREQ(k, "p/h/<x>\"'", "second key, numeric entities decoded");
	free(k);
	free(c);
	ASSERT_NULL(s3__xml_next(page, &pos, "Contents"), "no third");
	pos = NULL;
	k = s3__xml_next(page, &pos, "NextContinuationToken");
	ASSERT_STREQ(k, "tok/=", "token");
	free(k);
	pos = NULL;
	ASSERT_NULL(s3__xml_next("<Key>unterminated", &pos, "Key"), "no closing tag");
}

static void describe(void)
{
	struct s3_resp r = { .status = 403 };
	char buf[256];

	r.body = strdup("<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
			"<Message>The request signature we calculated does not match</Message>"
			"</Error>");
	s3_resp__describe(&r, buf, sizeof(buf));
	ASSERT_STREQ(buf, "HTTP 403 SignatureDoesNotMatch: The request signature we calculated "
		     "does not match", "error body");
	s3_resp__free(&r);
	r = (struct s3_resp){ .status = 0 };
	snprintf(r.err, sizeof(r.err), "Couldn't connect to server");
	s3_resp__describe(&r, buf, sizeof(buf));
	ASSERT_STREQ(buf, "no answer: Couldn't connect to server", "no answer");
	r = (struct s3_resp){ .status = 500 };
	s3_resp__describe(&r, buf, sizeof(buf));
	ASSERT_STREQ(buf, "HTTP 500", "no body");
}

int main(void)
{
	RUN_TEST(parse_url);
	RUN_TEST(config_from_environment);
	RUN_TEST(config_from_credentials_file);
	RUN_TEST(encode);
	RUN_TEST(xml);
	RUN_TEST(describe);
	return unit__done();
}
