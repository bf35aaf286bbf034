// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/sbuf.h"

static bool reserve(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

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
	if (!reserve(b, len))
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

	if (!reserve(b, 256))
		return;
	va_start(ap, fmt);
	va_copy(again, ap);
	/* most fit at once; the analyzer's va_list report here is a false positive (cli.c) */
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	len = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	if (len >= 0 && (size_t)len >= b->cap - b->n) {
		if (reserve(b, (size_t)len))
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
	if (n <= 0 || !reserve(b, (size_t)n))
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
