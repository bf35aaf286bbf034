// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Numeric metrics in what a job prints, as marks (marks.h says which forms).
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tree/marks.h"

#define MARKS_DICT_MAX 32

int marks_regex__compile(struct marks_regex *r, const char *pattern, char *err, size_t errsz)
{
	size_t n = strlen(pattern);
	char *ere = malloc(n + 1), *out = ere;
	const char *p = pattern;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!ere) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	while (*p) {
		if (*p == '\\' && p[1]) {
			*out++ = *p++;
			*out++ = *p++;
			continue;
		}
		if (*p == '[') {	/* a bracket expression: no groups inside */
			*out++ = *p++;
			if (*p == '^')
				*out++ = *p++;
			if (*p == ']')
				*out++ = *p++;
			while (*p && *p != ']')
				*out++ = *p++;
			continue;
		}
		if (*p != '(') {
			*out++ = *p++;
			continue;
		}
		*out++ = *p++;
		if (++r->ngroups > MARKS_REGEX_GROUPS) {
			snprintf(err, errsz, "more than %d groups", MARKS_REGEX_GROUPS);
			goto fail;
		}
		if (*p != '?')
			continue;
		if (p[1] == 'P')
			p++;
		if (p[1] != '<') {
			snprintf(err, errsz, "only (?<name>...) and (?P<name>...) groups are supported");
			goto fail;
		}
		p += 2;
		const char *end = strchr(p, '>');

		if (!end || end == p || end - p >= MARKS_NAME_MAX) {
			snprintf(err, errsz, "a group name must be 1 to %d characters", MARKS_NAME_MAX - 1);
			goto fail;
		}
		r->names[r->ngroups] = strndup(p, (size_t)(end - p));
		p = end + 1;
	}
	*out = 0;
	bool named = false;

	for (int i = 1; i <= r->ngroups; i++)
		named |= r->names[i] != NULL;
	if (!named) {
		snprintf(err, errsz, "no named group: name the values with (?<name>...)");
		goto fail;
	}
	rc = regcomp(&r->rx, ere, REG_EXTENDED);
	if (rc) {
		regerror(rc, &r->rx, err, errsz);
		goto fail;
	}
	r->compiled = true;
	free(ere);
	return 0;
fail:
	free(ere);
	marks_regex__free(r);
	return -1;
}

void marks_regex__free(struct marks_regex *r)
{
	if (r->compiled)
		regfree(&r->rx);
	for (int i = 0; i <= MARKS_REGEX_GROUPS; i++)
		free(r->names[i]);
	memset(r, 0, sizeof(*r));
}

/* A mark, unless a redraw repeats the value the stream last gave for that name. */
static void give(struct marks_stream *st, const char *name, double value, bool summary,
		 bool redraw, struct marks_counts *c, marks_fn fn, void *ctx)
{
	int i;

	if (!isfinite(value))
		return;	/* JSON has no NaN or infinity */
	if (st) {
		for (i = 0; i < st->nlast; i++)
			if (!strcmp(st->last[i].name, name))
				break;
		if (i < st->nlast && redraw && st->last[i].value == value) {
			c->redraws_unchanged++;
			return;
		}
		if (i == st->nlast) {
			if (st->nlast < MARKS_LAST) {
				st->nlast++;
			} else {
				i = st->next_last;
				st->next_last = (st->next_last + 1) % MARKS_LAST;
			}
			snprintf(st->last[i].name, sizeof(st->last[i].name), "%s", name);
		}
		st->last[i].value = value;
	}
	c->marks++;
	fn(ctx, name, value, summary);
}

static bool number_start(char ch)
{
	return isdigit((unsigned char)ch) || ch == '-' || ch == '+' || ch == '.';
}

/* A number at s that ends where a value may end; *end: past it. */
static bool number_at(const char *s, double *v, const char **end)
{
	char *e;

	if (!number_start(*s) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return false;
	*v = strtod(s, &e);
	if (e == s)
		return false;
	if (*e && !strchr(" \t,;])}|%", *e))
		return false;	/* 0s, 1/10, 0:01, 12ms: not a metric's value */
	*end = e;
	return true;
}

static bool key_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '/' || ch == '-';
}

/* {'loss': 0.69, 'learning_rate': 5e-05, 'epoch': 0.5}: true when it gave a mark. */
static bool parse_dict(struct marks_stream *st, const char *s, bool redraw,
		       struct marks_counts *c, marks_fn fn, void *ctx)
{
	struct { char name[MARKS_NAME_MAX]; double v; } kv[MARKS_DICT_MAX];
	int n = 0;
	bool summary = false;

	s++;	/* '{' */
	for (;;) {
		char q;
		const char *k, *e;
		double v;

		while (*s == ' ')
			s++;
		if (*s != '\'' && *s != '"')
			break;
		q = *s++;
		k = s;
		while (*s && *s != q)
			s++;
		if (!*s)
			break;
		size_t klen = (size_t)(s - k);

		s++;
		while (*s == ' ')
			s++;
		if (*s++ != ':')
			break;
		while (*s == ' ')
			s++;
		if (number_at(s, &v, &e) && (*e == ',' || *e == '}' || *e == ' ')) {
			if (n < MARKS_DICT_MAX && klen > 0 && klen < MARKS_NAME_MAX) {
				memcpy(kv[n].name, k, klen);
				kv[n].name[klen] = 0;
				kv[n].v = v;
				if (!strncmp(kv[n].name, "eval_", 5) ||
				    (!strcmp(kv[n].name, "epoch") && v == floor(v)))
					summary = true;
				n++;
			}
			s = e;
		} else {	/* not a number: skip the value, strings and brackets whole */
			int depth = 0;
			char inq = 0;

			for (; *s; s++) {
				if (inq) {
					if (*s == '\\' && s[1])
						s++;
					else if (*s == inq)
						inq = 0;
				} else if (*s == '\'' || *s == '"') {
					inq = *s;
				} else if (*s == '[' || *s == '(' || *s == '{') {
					depth++;
				} else if (*s == ']' || *s == ')' || *s == '}') {
					if (!depth--)
						break;
				} else if (*s == ',' && !depth) {
					break;
				}
			}
		}
		while (*s == ' ')
			s++;
		if (*s != ',')
			break;
		s++;
	}
	for (int i = 0; i < n; i++)
		give(st, kv[i].name, kv[i].v, summary, redraw, c, fn, ctx);
	return n > 0;
}

/* key: value, key=value, and key value (lowercase key, decimal value) */
static void parse_pairs(struct marks_stream *st, const char *line, bool redraw,
			struct marks_counts *c, marks_fn fn, void *ctx)
{
	const char *s = line;

	while (*s) {
		const char *k = s, *p, *e;
		char name[MARKS_NAME_MAX];
		bool lower = true, sep = false;
		size_t klen;
		double v;

		if (!(isalpha((unsigned char)*s) || *s == '_') || (s > line && key_char(s[-1]))) {
			s++;
			continue;
		}
		while (key_char(*s)) {
			lower &= islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_';
			s++;
		}
		klen = (size_t)(s - k);
		while (klen && strchr("./-", k[klen - 1]))
			klen--;
		p = s;
		while (*p == ' ')
			p++;
		if (*p == ':' || *p == '=') {
			sep = true;
			p++;
			while (*p == ' ')
				p++;
		} else if (p == s || !lower || !strchr(p, '.')) {
			continue;	/* key value needs a space, a lowercase key, a decimal value */
		}
		if (!number_at(p, &v, &e))
			continue;
		if (!sep) {	/* the value must be a decimal: "epoch 3" is a count */
			const char *d = memchr(p, '.', (size_t)(e - p));

			if (!d)
				continue;
		}
		if (klen == 0 || klen >= sizeof(name))
			continue;
		memcpy(name, k, klen);
		name[klen] = 0;
		give(st, name, v, false, redraw, c, fn, ctx);
		s = e;
	}
}

static void parse_regex(struct marks_stream *st, const char *line, bool redraw,
			const struct marks_regex *rx, struct marks_counts *c, marks_fn fn,
			void *ctx)
{
	regmatch_t m[MARKS_REGEX_GROUPS + 1];
	const char *s = line;

	while (*s && !regexec(&rx->rx, s, (size_t)rx->ngroups + 1, m, s > line ? REG_NOTBOL : 0)) {
		for (int g = 1; g <= rx->ngroups; g++) {
			char num[64], *e;
			size_t len;
			double v;

			if (!rx->names[g] || m[g].rm_so < 0)
				continue;
			len = (size_t)(m[g].rm_eo - m[g].rm_so);
			if (!len || len >= sizeof(num))
				continue;
			memcpy(num, s + m[g].rm_so, len);
			num[len] = 0;
			v = strtod(num, &e);
			if (e != num && !*e)
				give(st, rx->names[g], v, false, redraw, c, fn, ctx);
		}
		s += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
	}
}

void marks__parse_line(struct marks_stream *st, const char *line, size_t n, bool redraw,
		       const struct marks_regex *rx, struct marks_counts *c, marks_fn fn,
		       void *ctx)
{
	char buf[MARKS_LINE_MAX];
	const char *d;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = 0;
	c->lines++;
	d = strchr(buf, '{');
	if (!(d && (d[1] == '\'' || d[1] == '"') && parse_dict(st, d, redraw, c, fn, ctx)))
		parse_pairs(st, buf, redraw, c, fn, ctx);
	if (rx && rx->compiled)
		parse_regex(st, buf, redraw, rx, c, fn, ctx);
}

static void end_line(struct marks_stream *st, char term, const struct marks_regex *rx,
		     struct marks_counts *c, marks_fn fn, void *ctx)
{
	bool cr = term == '\r' || term == '\b';

	if (st->skip)
		c->lines_skipped++;
	else if (st->len)
		marks__parse_line(st, st->line, st->len, cr || st->after_cr, rx, c, fn, ctx);
	st->len = 0;
	st->skip = false;
	st->after_cr = cr;
}

void marks__feed(struct marks_stream *st, const char *data, size_t copied, uint64_t len,
		 const struct marks_regex *rx, struct marks_counts *c, marks_fn fn, void *ctx)
{
	for (size_t i = 0; i < copied; i++) {
		unsigned char b = (unsigned char)data[i];

		if (st->esc) {	/* an ANSI escape: ESC [ params final, or ESC and one byte */
			if (st->esc == 1)
				st->esc = b == '[' ? 2 : 0;
			else if (b >= 0x40 && b <= 0x7e)
				st->esc = 0;
			continue;
		}
		if (b == '\n' || b == '\r' || b == '\b') {
			end_line(st, (char)b, rx, c, fn, ctx);
		} else if (b == 0x1b) {
			st->esc = 1;
		} else if ((b >= 0x20 || b == '\t') && b != 0x7f && st->len < MARKS_LINE_MAX - 1) {
			st->line[st->len++] = (char)(b == '\t' ? ' ' : b);
		} else {
			st->skip = true;	/* not text, or longer than a metrics line */
		}
	}
	if (len > copied) {	/* the rest went unseen: so does the end of this line */
		st->skip = true;
		st->esc = 0;
	}
}
