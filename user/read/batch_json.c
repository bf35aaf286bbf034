// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A fast parser for the JSON of spool batches, the same tree as cJSON's (batch_json.h).
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "read/batch_json.h"

#define DEPTH_MAX 500		/* cJSON's limit is 1000: deeper is left to it */

struct parser {
	const char *p;
	void *(*alloc)(size_t);
	int depth;
	bool fail;		/* not in the subset, or out of memory: cJSON decides */
};

static cJSON *item(struct parser *ps)
{
	cJSON *it = ps->alloc(sizeof(cJSON));

	if (!it) {
		ps->fail = true;
		return NULL;
	}
	memset(it, 0, sizeof(*it));
	return it;
}

static void ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r')
		ps->p++;
}

/* A string at ps->p (its opening quote): its bytes unescaped, or NULL. */
static char *string(struct parser *ps)
{
	const char *s = ps->p + 1, *e = s;
	size_t len;
	char *out, *o;
	bool escaped = false;

	for (;; e++) {
		unsigned char c = (unsigned char)*e;

		if (c == '"')
			break;
		if (c < 0x20) {		/* the end of the text, or a control character */
			ps->fail = true;
			return NULL;
		}
		if (c == '\\') {
			escaped = true;
			if (!e[1]) {
				ps->fail = true;
				return NULL;
			}
			e++;
		}
	}
	len = (size_t)(e - s);
	out = ps->alloc(len + 1);
	if (!out) {
		ps->fail = true;
		return NULL;
	}
	if (!escaped) {
		memcpy(out, s, len);
		out[len] = 0;
		ps->p = e + 1;
		return out;
	}
	for (o = out; s < e; s++) {
		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		switch (*++s) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case '"': case '\\': case '/': *o++ = *s; break;
		default:	/* \u (cJSON's own UTF-16 rules), or not an escape */
			ps->fail = true;
			return NULL;
		}
	}
	*o = 0;
	ps->p = e + 1;
	return out;
}

/* A number of JSON's grammar; a whole one of up to 19 digits is read exactly and converted
 * to the nearest double, which is what strtod gives for its digits. */
static void number(struct parser *ps, cJSON *it)
{
	const char *s = ps->p, *d = s + (*s == '-');
	uint64_t v = 0;
	size_t digits;
	double num;
	char *end;

	if (*d == '0' && d[1] >= '0' && d[1] <= '9') {
		ps->fail = true;	/* a leading zero: not JSON (cJSON reads it, though) */
		return;
	}
	for (digits = 0; d[digits] >= '0' && d[digits] <= '9'; digits++)
		v = v * 10 + (uint64_t)(d[digits] - '0');
	if (!digits) {
		ps->fail = true;
		return;
	}
	end = (char *)d + digits;
	if (*end == '.' || *end == 'e' || *end == 'E' || digits > 19) {
		const char *q = end;

		if (*q == '.') {
			if (!(q[1] >= '0' && q[1] <= '9')) {
				ps->fail = true;
				return;
			}
			for (q++; *q >= '0' && *q <= '9'; q++)
				;
		}
		if (*q == 'e' || *q == 'E') {
			q += q[1] == '+' || q[1] == '-' ? 2 : 1;
			if (!(*q >= '0' && *q <= '9')) {
				ps->fail = true;
				return;
			}
			while (*q >= '0' && *q <= '9')
				q++;
		}
		num = strtod(s, &end);	/* the C locale's '.', as cJSON's is here */
		if (end != q) {
			ps->fail = true;
			return;
		}
	} else {
		num = (double)v;
		if (*s == '-')
			num = -num;
	}
	/* what follows a number in cJSON's reading is not one of its characters */
	if (*end == '+' || *end == '-' || *end == '.' || *end == 'e' || *end == 'E' ||
	    (*end >= '0' && *end <= '9')) {
		ps->fail = true;
		return;
	}
	it->type = cJSON_Number;
	it->valuedouble = num;
	it->valueint = num >= INT_MAX ? INT_MAX : num <= (double)INT_MIN ? INT_MIN : (int)num;
	ps->p = end;
}

static cJSON *value(struct parser *ps);

/* The members of an array or object, up to close; keyed: an object's. */
static cJSON *members(struct parser *ps, cJSON *it, char close, bool keyed)
{
	cJSON *head = NULL, *tail = NULL;

	if (++ps->depth > DEPTH_MAX) {
		ps->fail = true;
		return NULL;
	}
	ps->p++;
	ws(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return it;
	}
	for (;;) {
		char *key = NULL;
		cJSON *m;

		ws(ps);
		if (keyed) {
			if (*ps->p != '"' || !(key = string(ps)))
				break;
			ws(ps);
			if (*ps->p != ':')
				break;
			ps->p++;
			ws(ps);
		}
		m = value(ps);
		if (!m)
			break;
		m->string = key;
		if (tail) {
			tail->next = m;
			m->prev = tail;
		} else {
			head = m;
		}
		tail = m;
		ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p != close)
			break;
		ps->p++;
		head->prev = tail;	/* as cJSON links a list: the first's prev is the last */
		it->child = head;
		ps->depth--;
		return it;
	}
	ps->fail = true;
	return NULL;
}

static cJSON *value(struct parser *ps)
{
	cJSON *it = item(ps);
	const char *p = ps->p;

	if (!it)
		return NULL;
	switch (*p) {
	case '{':
		it->type = cJSON_Object;
		return members(ps, it, '}', true);
	case '[':
		it->type = cJSON_Array;
		return members(ps, it, ']', false);
	case '"':
		it->type = cJSON_String;
		it->valuestring = string(ps);
		return it->valuestring ? it : NULL;
	case 'n':
		if (strncmp(p, "null", 4) != 0)
			break;
		it->type = cJSON_NULL;
		ps->p += 4;
		return it;
	case 't':
		if (strncmp(p, "true", 4) != 0)
			break;
		it->type = cJSON_True;
		it->valueint = 1;
		ps->p += 4;
		return it;
	case 'f':
		if (strncmp(p, "false", 5) != 0)
			break;
		it->type = cJSON_False;
		ps->p += 5;
		return it;
	default:
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			number(ps, it);
			return ps->fail ? NULL : it;
		}
	}
	ps->fail = true;
	return NULL;
}

cJSON *batch_json__parse(const char *text, const char **end, void *(*alloc)(size_t),
			 bool *gave_up)
{
	struct parser ps = { .p = text, .alloc = alloc };
	cJSON *j;

	ws(&ps);
	j = *ps.p == '{' || *ps.p == '[' ? value(&ps) : NULL;
	*gave_up = !j || ps.fail;
	if (*gave_up)
		return NULL;	/* what was made is the caller's to drop (the arena) */
	*end = ps.p;
	return j;
}
