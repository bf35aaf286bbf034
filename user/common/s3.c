// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// S3 requests through libcurl: the URL, the credentials as the AWS tools find them, one
// signed request (SigV4 is curl's, CURLOPT_AWS_SIGV4), and the bits of XML S3 answers with.
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/s3.h"

#define BODY_MAX_BYTES (16u << 20)	/* a listing page is ~300 KiB; more is not S3 */
#define S3_STALL_S 5L

bool s3__is_url(const char *s)
{
	return s && !strncmp(s, "s3://", 5);
}

int s3__parse_url(const char *s, struct s3_url *u, char *why, size_t why_size)
{
	const char *b, *slash;
	size_t blen, plen;

	memset(u, 0, sizeof(*u));
	if (!s3__is_url(s)) {
		snprintf(why, why_size, "not an s3://BUCKET/PREFIX URL");
		return -EINVAL;
	}
	b = s + 5;
	slash = strchr(b, '/');
	blen = slash ? (size_t)(slash - b) : strlen(b);
	/* S3's bucket names: 3-63 of a-z 0-9 . - (path-style stores take the same) */
	if (blen < 3 || blen >= sizeof(u->bucket) || strspn(b, "abcdefghijklmnopqrstuvwxyz"
							    "0123456789.-") < blen) {
		snprintf(why, why_size, "bad bucket name '%.*s' (3 to 63 of a-z, 0-9, '.', '-')",
			 (int)(blen > 80 ? 80 : blen), b);
		return -EINVAL;
	}
	memcpy(u->bucket, b, blen);
	if (!slash)
		return 0;
	while (*slash == '/')
		slash++;
	plen = strlen(slash);
	while (plen && slash[plen - 1] == '/')
		plen--;
	if (plen >= sizeof(u->prefix)) {
		snprintf(why, why_size, "prefix longer than %zu bytes", sizeof(u->prefix) - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < plen; i++) {
		/* "//", control bytes: keys no one could list back by hand */
		if ((unsigned char)slash[i] < 0x20 || (slash[i] == '/' && slash[i + 1] == '/')) {
			snprintf(why, why_size, "bad prefix '%.*s'", (int)plen, slash);
			return -EINVAL;
		}
	}
	memcpy(u->prefix, slash, plen);
	return 0;
}

static void copy_env(char *dst, size_t size, const char *a, const char *b)
{
	const char *v = getenv(a);

	if ((!v || !*v) && b)
		v = getenv(b);
	snprintf(dst, size, "%s", v && *v ? v : "");
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* The profile's keys in an INI file: "[name]", then "key = value" lines. */
static int read_profile(struct s3_config *c, const char *path, const char *profile,
			char *why, size_t why_size)
{
	FILE *f = fopen(path, "re");
	char line[4608];
	bool in = false, found = false;

	if (!f) {
		snprintf(why, why_size, "no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the "
			 "environment, and no credentials file %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *l = trim(line), *eq;

		if (*l == '#' || *l == ';' || !*l)
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');

			if (end)
				*end = 0;
			in = !strcmp(trim(l + 1), profile);
			found |= in;
			continue;
		}
		eq = strchr(l, '=');
		if (!in || !eq)
			continue;
		*eq = 0;
		l = trim(l);
		if (!strcmp(l, "aws_access_key_id"))
			snprintf(c->key_id, sizeof(c->key_id), "%s", trim(eq + 1));
		else if (!strcmp(l, "aws_secret_access_key"))
			snprintf(c->secret, sizeof(c->secret), "%s", trim(eq + 1));
		else if (!strcmp(l, "aws_session_token"))
			snprintf(c->token, sizeof(c->token), "%s", trim(eq + 1));
	}
	fclose(f);
	if (!found || !*c->key_id || !*c->secret) {
		snprintf(why, why_size, "no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the "
			 "environment, and %s in %s", found ? "no aws_access_key_id and "
			 "aws_secret_access_key for profile" : "no profile", path);
		snprintf(why + strlen(why), why_size - strlen(why), " [%s]", profile);
		return -EINVAL;
	}
	snprintf(c->creds_from, sizeof(c->creds_from), "%s, profile %s", path, profile);
	return 0;
}

int s3__config_load(struct s3_config *c, char *why, size_t why_size)
{
	char path[512], profile[128];
	const char *home = getenv("HOME");
	size_t n;

	memset(c, 0, sizeof(*c));
	copy_env(c->endpoint, sizeof(c->endpoint), "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	n = strlen(c->endpoint);
	while (n && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = 0;
	if (n && strncmp(c->endpoint, "http://", 7) != 0 && strncmp(c->endpoint, "https://", 8) != 0) {
		snprintf(why, why_size, "AWS_ENDPOINT_URL '%s' is not an http:// or https:// URL",
			 c->endpoint);
		return -EINVAL;
	}
	copy_env(c->region, sizeof(c->region), "AWS_REGION", "AWS_DEFAULT_REGION");
	if (!*c->region)
		strcpy(c->region, "us-east-1");
	if (strspn(c->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(c->region)) {
		snprintf(why, why_size, "bad AWS_REGION '%s'", c->region);
		return -EINVAL;
	}
	copy_env(c->key_id, sizeof(c->key_id), "AWS_ACCESS_KEY_ID", NULL);
	copy_env(c->secret, sizeof(c->secret), "AWS_SECRET_ACCESS_KEY", NULL);
	if (*c->key_id && *c->secret) {
		copy_env(c->token, sizeof(c->token), "AWS_SESSION_TOKEN", NULL);
		strcpy(c->creds_from, "environment");
		return 0;
	}
	*c->key_id = *c->secret = 0;
	copy_env(path, sizeof(path), "AWS_SHARED_CREDENTIALS_FILE", NULL);
	if (!*path)
		snprintf(path, sizeof(path), "%s/.aws/credentials", home && *home ? home : "/root");
	copy_env(profile, sizeof(profile), "AWS_PROFILE", NULL);
	if (!*profile)
		strcpy(profile, "default");
	return read_profile(c, path, profile, why, why_size);
}

void s3__global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void s3__global_cleanup(void)
{
	curl_global_cleanup();
}

char *s3__encode(const char *s, bool keep_slash)
{
	size_t n = strlen(s);
	char *out = malloc(3 * n + 1), *p = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
		    (ch == '/' && keep_slash))
			*p++ = (char)ch;
		else
			p += sprintf(p, "%%%02X", ch);
	}
	*p = 0;
	return out;
}

static size_t to_body(char *data, size_t size, size_t n, void *arg)
{
	struct s3_resp *r = arg;
	size_t len = size * n;
	char *b;

	if (r->len + len > BODY_MAX_BYTES)
		return 0;	/* curl fails the transfer: not an answer of S3's */
	b = realloc(r->body, r->len + len + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, data, len);
	r->body = b;
	r->len += len;
	b[r->len] = 0;
	return len;
}

/* CURLOPT_XFERINFOFUNCTION: non-zero ends the transfer */
static int cancelled(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		     curl_off_t ulnow)
{
	return __atomic_load_n((const int *)arg, __ATOMIC_RELAXED);
}

static int perform(const struct s3_config *c, const char *method, const char *bucket,
		   const char *key, const char *query, const void *body, size_t len,
		   const char *content_type, FILE *sink, long timeout_s, struct s3_resp *r)
{
	char sigv4[96], *url = NULL, *ekey = key ? s3__encode(key, true) : NULL;
	struct curl_slist *hdrs = NULL;
	CURL *h = curl_easy_init();
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	int n;

	memset(r, 0, sizeof(*r));
	if (!h || (key && !ekey))
		goto out;
	/* a custom endpoint (MinIO, SeaweedFS, Ceph) is addressed path-style */
	if (*c->endpoint)
		n = asprintf(&url, "%s/%s/%s%s%s", c->endpoint, bucket, ekey ? ekey : "",
			     query ? "?" : "", query ? query : "");
	else
		n = asprintf(&url, "https://%s.s3.%s.amazonaws.com/%s%s%s", bucket, c->region,
			     ekey ? ekey : "", query ? "?" : "", query ? query : "");
	if (n < 0) {
		url = NULL;
		goto out;
	}
	snprintf(sigv4, sizeof(sigv4), "aws:amz:%s:s3", c->region);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, c->key_id);
	curl_easy_setopt(h, CURLOPT_PASSWORD, c->secret);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);	/* threads: no SIGALRM for DNS */
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	/* A store that takes the connection and then says nothing (one starting up: its S3
	 * gateway up, its volumes not yet) is left after this long and asked again, rather than
	 * waited for up to timeout_s while the batches pile up. */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, S3_STALL_S);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->cancel) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cancelled);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->cancel);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	/* No "Expect:" to drop curl's 100-continue: curl 7.88 signs the empty header it never
	 * sends, and the store refuses the signature. */
	if (*c->token) {
		char *t;

		if (asprintf(&t, "x-amz-security-token: %s", c->token) >= 0) {
			hdrs = curl_slist_append(hdrs, t);
			free(t);
		}
	}
	/* S3 wants the payload's hash named (curl 7.88 does not add it): a PUT's is left
	 * unsigned (TLS guards it on the way), a bodyless request's is the empty string's. */
	hdrs = curl_slist_append(hdrs, !strcmp(method, "PUT") ?
				 "x-amz-content-sha256: UNSIGNED-PAYLOAD" :
				 "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b"
				 "934ca495991b7852b855");
	if (!strcmp(method, "PUT")) {
		char *ct;

		if (asprintf(&ct, "Content-Type: %s", content_type) >= 0) {
			hdrs = curl_slist_append(hdrs, ct);
			free(ct);
		}
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
	} else if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (sink) {
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
	} else {
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_body);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status == 503 || r->status == 429) {	/* SlowDown: the store says how long */
		curl_off_t ra = 0;

		if (!curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) && ra > 0)
			r->retry_after_s = (double)ra;
	}
out:
	if (rc != CURLE_OK) {
		snprintf(r->err, sizeof(r->err), "%s", curl_easy_strerror(rc));
		r->status = 0;
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	free(url);
	free(ekey);
	return r->status ? 0 : -EIO;
}

int s3__request(const struct s3_config *c, const char *method, const char *bucket,
		const char *key, const char *query, const void *body, size_t len, FILE *sink,
		long timeout_s, struct s3_resp *r)
{
	return perform(c, method, bucket, key, query, body, len, "application/json", sink,
		       timeout_s, r);
}

int s3__put(const struct s3_config *c, const char *bucket, const char *key,
	    const char *content_type, const void *body, size_t len, long timeout_s,
	    struct s3_resp *r)
{
	return perform(c, "PUT", bucket, key, NULL, body, len, content_type, NULL, timeout_s, r);
}

void s3_resp__free(struct s3_resp *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

static void decode_entities(char *s)
{
	static const struct { const char *e; char c; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
		{ "&apos;", '\'' },
	};
	char *w = s;

	while (*s) {
		size_t i;

		if (*s != '&') {
			*w++ = *s++;
			continue;
		}
		for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
			if (!strncmp(s, ents[i].e, strlen(ents[i].e)))
				break;
		if (i < sizeof(ents) / sizeof(ents[0])) {
			*w++ = ents[i].c;
			s += strlen(ents[i].e);
		} else if (s[1] == '#') {	/* &#34; &#x22; */
			char *end;
			long v = s[2] == 'x' ? strtol(s + 3, &end, 16) : strtol(s + 2, &end, 10);

			if (*end == ';' && v > 0 && v < 128) {
				*w++ = (char)v;
				s = end + 1;
			} else {
				*w++ = *s++;
			}
		} else {
			*w++ = *s++;
		}
	}
	*w = 0;
}

char *s3__xml_next(const char *xml, const char **pos, const char *tag)
{
	char open[64], close[64], *text;
	const char *a, *b;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	a = strstr(*pos ? *pos : xml, open);
	if (!a)
		return NULL;
	a += strlen(open);
	b = strstr(a, close);
	if (!b)
		return NULL;
	*pos = b + strlen(close);
	text = strndup(a, (size_t)(b - a));
	if (text)
		decode_entities(text);
	return text;
}

void s3_resp__describe(const struct s3_resp *r, char *buf, size_t size)
{
	const char *pos = NULL;
	char *code, *msg;

	if (!r->status) {
		snprintf(buf, size, "no answer: %s", r->err);
		return;
	}
	code = r->body ? s3__xml_next(r->body, &pos, "Code") : NULL;
	pos = NULL;
	msg = r->body ? s3__xml_next(r->body, &pos, "Message") : NULL;
	snprintf(buf, size, "HTTP %ld%s%s%s%s", r->status, code ? " " : "", code ? code : "",
		 msg ? ": " : "", msg ? msg : "");
	free(code);
	free(msg);
}
