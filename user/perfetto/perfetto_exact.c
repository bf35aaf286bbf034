// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exact numbers through cJSON: the spool's ns times and span ids are integers of up to 20
// digits, which cJSON would read as doubles (53 bits). Long integer tokens are quoted before
// parsing and read back as integers.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfetto/perfetto_internal.h"

#define EXACT_MARK '\x01'		/* a long integer token, quoted to keep its digits */
#define EXACT_MIN_DIGITS 16		/* shorter integers are exact as doubles */

/* Copies text with every integer token of EXACT_MIN_DIGITS digits or more, outside strings,
 * turned into a string "\x01DIGITS", so the digits survive cJSON (see pf_exact__u64). */
static char *quote_long_ints(const char *text)
{
	size_t len = strlen(text), o = 0;
	char *out = malloc(len + len / 4 + 16);
	bool in_str = false;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		char c = text[i];

		if (in_str) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = text[++i];
			else if (c == '"')
				in_str = false;
			i++;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if ((c >= '0' && c <= '9') || c == '-') {
			/* a whole number token: only a non-negative integer is quoted (the digits
			 * of a fraction or an exponent are not an integer of their own) */
			size_t n = strspn(text + i, "-+0123456789.eE");
			size_t digits = strspn(text + i, "0123456789");

			if (digits == n && n >= EXACT_MIN_DIGITS) {
				out[o++] = '"';
				out[o++] = EXACT_MARK;
				memcpy(out + o, text + i, n);
				o += n;
				out[o++] = '"';
				i += n;
				continue;
			}
			memcpy(out + o, text + i, n);
			o += n;
			i += n;
			continue;
		}
		out[o++] = c;
		i++;
	}
	out[o] = 0;
	return out;
}

/* A non-negative integer, exact: a quoted long token or a number a double holds exactly. */
bool pf_exact__u64(const cJSON *v, uint64_t *out)
{
	if (cJSON_IsString(v) && v->valuestring[0] == EXACT_MARK) {
		const char *d = v->valuestring + 1;
		char *end;

		if (!*d || strspn(d, "0123456789") != strlen(d))
			return false;
		errno = 0;
		*out = strtoull(d, &end, 10);
		return !errno;
	}
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9007199254740992.0) ||
	    (double)(uint64_t)v->valuedouble != v->valuedouble)
		return false;
	*out = (uint64_t)v->valuedouble;
	return true;
}

bool pf_exact__get(const cJSON *o, const char *key, uint64_t *out)
{
	return pf_exact__u64(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

/* Turns quoted long integers back into numbers (for args; doubles are fine there). */
void pf_exact__unquote(cJSON *o)
{
	cJSON *v;

	cJSON_ArrayForEach(v, o) {
		uint64_t n;

		if (cJSON_IsString(v) && v->valuestring[0] == EXACT_MARK && pf_exact__u64(v, &n)) {
			cJSON *num = cJSON_CreateNumber((double)n);

			if (num)
				cJSON_ReplaceItemViaPointer(o, v, num);
			v = num;
			if (!v)
				return;
		} else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
			pf_exact__unquote(v);
		}
	}
}

cJSON *pf_exact__parse(const char *text, char *why, size_t why_size)
{
	char *q = quote_long_ints(text);
	const char *end = NULL;
	cJSON *b;

	if (!q) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		return NULL;
	}
	b = cJSON_ParseWithOpts(q, &end, 0);
	if (!b)
		snprintf(why, why_size, "not valid JSON");
	else if (end[strspn(end, " \t\r\n")] || !cJSON_IsObject(b))
		snprintf(why, why_size, "not one JSON object");
	if (b && (end[strspn(end, " \t\r\n")] || !cJSON_IsObject(b))) {
		cJSON_Delete(b);
		b = NULL;
	}
	free(q);
	return b;
}
