/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OUT_BUF_H
#define __CIRRON_OUT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer for the encoders of span rows and OTLP. An allocation failure is
 * remembered (oom) and later appends do nothing: check once at the end. */
struct out_buf {
	char *data;
	size_t len, cap;
	bool oom;
};

void out_buf__put(struct out_buf *b, const void *p, size_t n);
void out_buf__puts(struct out_buf *b, const char *s);
void out_buf__printf(struct out_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s as a JSON string, quotes included: control bytes escaped, and bytes that are not UTF-8
 * (a traced process's names may hold any) as U+FFFD, so every engine reads the row. */
void out_buf__json_str(struct out_buf *b, const char *s);
void out_buf__free(struct out_buf *b);
/* in as one gzip member (zlib, level 6) appended to out. Returns 0 or -ENOMEM. */
int out_buf__gzip(const void *in, size_t len, struct out_buf *out);

#endif
