/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SBUF_H
#define __CIRRON_SBUF_H

#include <stdbool.h>
#include <stddef.h>

/* A growing byte buffer, NUL-terminated: what a reader renders before it can print it, the
 * span rows and OTLP bodies the shippers encode. An allocation that fails leaves it as it was
 * and sets oom; later appends do nothing (check once at the end). */
struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

/* Room for more bytes (and the NUL) past n; false (oom set) if it cannot be had. */
bool sbuf__reserve(struct sbuf *b, size_t more);
void sbuf__add(struct sbuf *b, const char *s, size_t len);
void sbuf__puts(struct sbuf *b, const char *s);
void sbuf__printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n spaces */
void sbuf__indent(struct sbuf *b, int n);
/* The text (NUL-terminated, owned by the caller), the buffer emptied. NULL when empty. */
char *sbuf__take(struct sbuf *b);
void sbuf__free(struct sbuf *b);
/* s as a JSON string, quotes included: control bytes escaped, and bytes that are not UTF-8
 * (a traced process's names may hold any) as U+FFFD, so every engine reads the row. */
void sbuf__json_str(struct sbuf *b, const char *s);

#endif
