/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SBUF_H
#define __CIRRON_SBUF_H

#include <stdbool.h>
#include <stddef.h>

/* A growing text buffer for what a reader renders before it can print it. An allocation
 * that fails leaves it as it was and sets oom (the text is then short, said once). */
struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

void sbuf__add(struct sbuf *b, const char *s, size_t len);
void sbuf__puts(struct sbuf *b, const char *s);
void sbuf__printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n spaces */
void sbuf__indent(struct sbuf *b, int n);
/* The text (NUL-terminated, owned by the caller), the buffer emptied. NULL when empty. */
char *sbuf__take(struct sbuf *b);
void sbuf__free(struct sbuf *b);

#endif
