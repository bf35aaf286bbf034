// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sbuf.h"

bool sbuf__reserve(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < b->n + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sbuf__add(struct sbuf *b, const char *s, size_t len)
{
	if (!sbuf__reserve(b, len))
		return;
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
}

void sbuf__puts(struct sbuf *b, const char *s)
{
	sbuf__add(b, s, strlen(s));
}

void sbuf__printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap, again;
	int len;

	if (!sbuf__reserve(b, 256))
		return;
	va_start(ap, fmt);
	va_copy(again, ap);
	/* most fit at once; the analyzer's va_list report here is a false positive (cli.c) */
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	len = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	if (len >= 0 && (size_t)len >= b->cap - b->n) {
		if (sbuf__reserve(b, (size_t)len))
			vsnprintf(b->p + b->n, (size_t)len + 1, fmt, again);
		else
			len = -1;
	}
	va_end(again);
	va_end(ap);
	if (len < 0) {
		b->p[b->n] = 0;
		return;
	}
	b->n += (size_t)len;
}

void sbuf__indent(struct sbuf *b, int n)
{
	if (n <= 0 || !sbuf__reserve(b, (size_t)n))
		return;
	memset(b->p + b->n, ' ', (size_t)n);
	b->n += (size_t)n;
	b->p[b->n] = 0;
}

char *sbuf__take(struct sbuf *b)
{
	char *p = b->n ? b->p : NULL;

	if (!p)
		free(b->p);
	*b = (struct sbuf){};
	return p;
}

void sbuf__free(struct sbuf *b)
{
	free(b->p);
	*b = (struct sbuf){};
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

void sbuf__json_str(struct sbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	sbuf__add(b, "\"", 1);
	while (*p) {
		const unsigned char *run = p;
		size_t n;

		/* plain bytes in one copy */
		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			sbuf__add(b, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			char esc[2] = { '\\', (char)*p };

			sbuf__add(b, esc, 2);
			p++;
		} else if (*p < 0x20) {
			sbuf__printf(b, "\\u%04x", *p);
			p++;
		} else if ((n = utf8_len(p))) {
			sbuf__add(b, (const char *)p, n);
			p += n;
		} else {
			sbuf__puts(b, "\xef\xbf\xbd");	/* U+FFFD */
			p++;
		}
	}
	sbuf__add(b, "\"", 1);
}
