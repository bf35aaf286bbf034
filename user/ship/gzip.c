// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A gzip member appended to a buffer (gzip.h): span rows and OTLP bodies, compressed.
#include <errno.h>
#include <zlib.h>
#include "ship/gzip.h"

int gzip__append(const void *in, size_t len, struct sbuf *out)
{
	z_stream z = { 0 };
	uLong bound;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16 /* gzip */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)len) + 32;
	if (!sbuf__reserve(out, bound)) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->p + out->n;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	if (rc == Z_STREAM_END) {
		out->n += z.total_out;
		out->p[out->n] = 0;	/* reserved: bound and the NUL */
	}
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}
