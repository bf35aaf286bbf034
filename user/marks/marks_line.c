// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The metrics in one printed line (marks.h says which forms, and what is no metric). The
// shapes come from what HF Trainer, Lightning (tqdm and rich bars), Keras 3, tqdm and
// logging print today: tests/unit/test_marks.c holds them line by line.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "marks/marks.h"
#include "marks/marks_words.h"

#define FOUND_MAX	32
#define PARENS_MAX	32

struct found {
	int n;
	struct {
		char name[MARKS_NAME_MAX];
		double v;
		bool summary;
		const char *end;	/* where the value ended in the line */
	} m[FOUND_MAX];
};

static void add(struct found *f, const char *name, size_t n, double v, bool summary,
		const char *end)
{
	if (f->n >= FOUND_MAX || !n || n >= MARKS_NAME_MAX)
		return;
	memcpy(f->m[f->n].name, name, n);
	f->m[f->n].name[n] = 0;
	if (marks_words__id_name(f->m[f->n].name))
		return;
	f->m[f->n].v = v;
	f->m[f->n].summary = summary || marks_words__summary_name(f->m[f->n].name);
	f->m[f->n].end = end;
	f->n++;
}

/* {'loss': '0.69', 'learning_rate': 5e-05, 'epoch': 0.5}, {"loss": 0.69}: true when it held
 * a number. */
static bool parse_dict(const char *s, struct found *f)
{
	bool summary = false;
	int first = f->n;

	s++;	/* '{' */
	for (;;) {
		char q;
		const char *k, *e = NULL;
		struct marks_value val;

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
		if ((*s == '\'' || *s == '"') && marks_words__number_at(s + 1, &val) && *val.end == *s)
			e = val.end + 1;	/* transformers 5 quotes its numbers */
		else if (marks_words__value_at(s, &val))
			e = val.end;
		if (e && (*e == ',' || *e == '}' || *e == ' ')) {
			add(f, k, klen, val.v, false, e);
			if (klen == 5 && !strncmp(k, "epoch", 5) && val.v == floor(val.v))
				summary = true;
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
	for (int i = first; i < f->n; i++)
		summary |= f->m[i].summary;
	for (int i = first; i < f->n; i++)
		f->m[i].summary = summary && !marks_words__step_name(f->m[i].name);
	return f->n > first;
}

static int cell_sep(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (*s == '|')
		return 1;
	/* U+2502 and U+2503 (rich's table bodies and heads), U+2551 */
	if (u[0] == 0xe2 && ((u[1] == 0x94 && (u[2] == 0x82 || u[2] == 0x83)) ||
			     (u[1] == 0x95 && u[2] == 0x91)))
		return 3;
	return 0;
}

/* "│ val_loss │ 0.6331080794334412 │": a table of one metric a row (Lightning's validate and
 * test results). True when the line is such a row. */
static bool parse_table_row(const char *s, struct found *f)
{
	const char *cell[2];
	size_t len[2];
	int n = 0, w;
	struct marks_value val;

	while (*s == ' ')
		s++;
	if (!(w = cell_sep(s)))
		return false;
	s += w;
	for (;;) {
		const char *c = s;

		while (*s && !cell_sep(s))
			s++;
		if (!*s) {
			while (*c == ' ')
				c++;
			if (*c)
				return false;
			break;
		}
		if (n == 2)
			return false;
		while (*c == ' ')
			c++;
		cell[n] = c;
		len[n] = (size_t)(s - c);
		while (len[n] && c[len[n] - 1] == ' ')
			len[n]--;
		n++;
		s += cell_sep(s);
	}
	if (n != 2 || !len[0] || !isalpha((unsigned char)cell[0][0]))
		return false;
	for (size_t i = 0; i < len[0]; i++)
		if (!marks_words__key_char(cell[0][i]))
			return false;
	if (!marks_words__value_at(cell[1], &val) || val.end != cell[1] + len[1])
		return false;
	add(f, cell[0], len[0], val.v, false, val.end);
	return true;
}

/* key: value, key=value, and key value (a metric-like key, a decimal value). A key that ends
 * a line that stays on screen goes to pending: rich wraps "train_loss_step:" and "0.724"
 * onto two lines of a narrow column. */
static void parse_pairs(const char *line, const char *s, bool ended, struct found *f,
			char *pending)
{
	bool call[PARENS_MAX];
	int depth = 0, calls = 0, first = f->n, open = 0;

	for (const char *p = s; *p; p++)
		open += *p == '[' ? 1 : *p == ']' ? -1 : 0;
	while (*s) {
		const char *k, *p, *start;
		bool lower = true, code;
		char sep = 0;
		struct marks_value val;
		size_t klen;

		if (*s == '(') {	/* Linear(in_features=16): a call's arguments are no metrics */
			bool c = s > line && (isalnum((unsigned char)s[-1]) || s[-1] == '_');

			if (depth < PARENS_MAX)
				call[depth] = c;
			depth++;
			calls += c;
			s++;
			continue;
		}
		if (*s == ')') {
			if (depth && --depth < PARENS_MAX)
				calls -= call[depth];
			s++;
			continue;
		}
		if (!(isalpha((unsigned char)*s) || *s == '_') || (s > line && marks_words__key_char(s[-1]))) {
			s++;
			continue;
		}
		k = s;
		while (marks_words__key_char(*s)) {
			lower &= !isupper((unsigned char)*s);
			s++;
		}
		klen = (size_t)(s - k);
		while (klen && strchr("./-", k[klen - 1]))
			klen--;
		code = memchr(k, '_', klen) || memchr(k, '/', klen) || memchr(k, '.', klen);
		p = s;
		while (*p == ' ')
			p++;
		if (*p == ':' || *p == '=') {
			sep = *p++;
			while (*p == ' ')
				p++;
		} else if (p == s || !lower) {
			continue;
		}
		if (calls)
			continue;
		start = code ? k : marks_words__phrase_start(line, k);
		if (sep && !*p) {
			size_t n = (size_t)(k + klen - start);

			if (ended && sep == ':' && n < MARKS_NAME_MAX) {
				memcpy(pending, start, n);
				pending[n] = 0;
			}
			continue;
		}
		if (!marks_words__value_at(p, &val))
			continue;
		s = val.end;
		if (!sep && (val.integer || !marks_words__metric_like(k, klen)))
			continue;
		if (sep == ':' && val.integer && memchr(k, '.', klen))
			continue;	/* port.cc:153] (TensorFlow's log lines), train.py:42: a line */
		if (val.integer && (start != k || marks_words__counts_things(val.end)))
			continue;	/* Total params: 610; using: 0 TPU cores */
		add(f, start, (size_t)(k + klen - start), val.v, false, val.end);
	}
	if (open > 0 && f->n > first) {
		/* a bar cut at the terminal's width ("[00:01, loss=0.5" without its "]"): its
		 * last value may be cut too */
		const char *e = f->m[f->n - 1].end;

		while (*e == ' ')
			e++;
		if (!*e)
			f->n--;
	}
}

/* A mark, unless a redraw repeats the value (and kind) the stream last gave for the name. */
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
		if (i < st->nlast && redraw && st->last[i].value == value &&
		    (st->last[i].summary || !summary)) {
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
		st->last[i].summary = summary;
	}
	c->marks++;
	fn(ctx, name, value, summary);
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
		       bool ended, const struct marks_regex *rx, struct marks_counts *c,
		       marks_fn fn, void *ctx)
{
	char buf[MARKS_LINE_MAX], pending[MARKS_NAME_MAX] = "";
	struct found f = {0};
	const char *d, *rest = buf;
	bool line_summary = false;
	struct marks_value val;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = 0;
	c->lines++;
	if (st && st->pending[0]) {	/* the value of the key that ended the last line */
		const char *p = buf;

		while (*p == ' ')
			p++;
		if (marks_words__value_at(p, &val) && (!*val.end || *val.end == ' ') &&
		    !(val.integer && marks_words__counts_things(val.end))) {
			add(&f, st->pending, strlen(st->pending), val.v, false, val.end);
			rest = val.end;
		}
		st->pending[0] = 0;
	}
	d = strchr(rest, '{');
	if (!(d && (d[1] == '\'' || d[1] == '"') && parse_dict(d, &f)) &&
	    !parse_table_row(rest, &f)) {
		int first = f.n;

		parse_pairs(buf, rest, ended, &f, pending);
		/* a line left on screen with a validation value in it ends an epoch: Keras's
		 * "16/16 - loss: 0.63 - mae: 0.63 - val_loss: 0.65 - val_mae: 0.72" */
		for (int i = first; i < f.n; i++)
			line_summary |= ended && f.m[i].summary;
		for (int i = first; i < f.n; i++)
			f.m[i].summary |= line_summary && !marks_words__step_name(f.m[i].name);
	}
	for (int i = 0; i < f.n; i++)
		give(st, f.m[i].name, f.m[i].v, f.m[i].summary, redraw, c, fn, ctx);
	if (st && pending[0])
		snprintf(st->pending, sizeof(st->pending), "%s", pending);
	if (rx && rx->compiled)
		parse_regex(st, buf, redraw, rx, c, fn, ctx);
}
