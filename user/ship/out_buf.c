// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The encoders' byte buffer (out_buf.h).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include "ship/out_buf.h"

static bool reserve(struct out_buf *b, size_t n)
{
	char *d;
	size_t cap;

	if (b->oom)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->oom = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void out_buf__put(struct out_buf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void out_buf__puts(struct out_buf *b, const char *s)
{
	out_buf__put(b, s, strlen(s));
}

void out_buf__printf(struct out_buf *b, const char *fmt, ...)
{
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): a false positive, as in cli.c */
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0 && reserve(b, (size_t)n)) {
		/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
	va_end(ap);
}

/* The length of a valid UTF-8 sequence at s (1-4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void out_buf__json_str(struct out_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	out_buf__put(b, "\"", 1);
	while (*p) {
		const unsigned char *run = p;
		size_t n;

		/* plain bytes in one copy */
		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			out_buf__put(b, run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			char esc[2] = { '\\', (char)*p };

			out_buf__put(b, esc, 2);
			p++;
		} else if (*p < 0x20) {
			out_buf__printf(b, "\\u%04x", *p);
			p++;
		} else if ((n = utf8_len(p))) {
			out_buf__put(b, p, n);
			p += n;
		} else {
			out_buf__puts(b, "\xef\xbf\xbd");	/* U+FFFD */
			p++;
		}
	}
	out_buf__put(b, "\"", 1);
}

void out_buf__free(struct out_buf *b)
{
	free(b->data);
	*b = (struct out_buf){ 0 };
}

int out_buf__gzip(const void *in, size_t len, struct out_buf *out)
{
	z_stream z = { 0 };
	uLong bound;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16 /* gzip */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)len) + 32;
	if (!reserve(out, bound)) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->data + out->len;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	if (rc == Z_STREAM_END)
		out->len += z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}
