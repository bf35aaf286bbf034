// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What a job prints, cut into lines: newlines end a line that stays on screen; carriage
// returns, backspaces and cursor moves end one that a progress bar will redraw. The metrics
// in each line: marks_line.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "marks/marks.h"

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

enum { ESC_NONE, ESC_START, ESC_CSI, ESC_OSC, ESC_OSC_END, ESC_CHARSET };
enum line_end { END_NEWLINE, END_RETURN, END_MOVE };

static void end_line(struct marks_stream *st, enum line_end how, const struct marks_regex *rx,
		     struct marks_counts *c, marks_fn fn, void *ctx)
{
	bool blank = true;
	uint64_t marks = c->marks;

	for (size_t i = 0; i < st->len && blank; i++)
		blank = st->line[i] == ' ';
	if (st->skip) {
		c->lines_skipped++;
		st->pending[0] = 0;
	} else if (st->read_len && st->read_len == st->len && how != END_NEWLINE) {
		;	/* read whole at a write's end: a frame that stays a frame */
	} else if (!blank) {
		marks__parse_line(st, st->line, st->len, st->redraw, how == END_NEWLINE, rx, c, fn,
				  ctx);
	} else if (how == END_NEWLINE) {
		st->pending[0] = 0;
	}
	if (how == END_NEWLINE && !st->redraw && !blank && !st->skip && c->marks == marks) {
		/* a line of its own with no value ("Epoch 2/3"): the bar drawn next is a new one,
		 * its values new even where they equal the last bar's (Keras's, epoch after
		 * epoch); a line with values (tqdm.write's) leaves the bar as it was */
		st->nlast = 0;
		st->next_last = 0;
	}
	if (how == END_NEWLINE) {
		st->redraw = st->redraw_rows > 0;
		if (st->redraw_rows)
			st->redraw_rows--;
	} else if (how == END_RETURN && st->len && blank) {
		/* tqdm blanks its bars with spaces before it prints a line of its own */
		st->redraw = false;
		st->redraw_rows = 0;
	} else {
		st->redraw = true;
	}
	st->len = 0;
	st->read_len = 0;
	st->skip = false;
}

/* The end of a CSI sequence: cursor moves end the line in progress (the next text goes
 * elsewhere on screen); moving up n rows means the n rows below get redrawn. */
static void csi_final(struct marks_stream *st, unsigned char b, const struct marks_regex *rx,
		      struct marks_counts *c, marks_fn fn, void *ctx)
{
	int n = st->csi_n ? st->csi_n : 1;

	switch (b) {
	case 'A': case 'F':
		end_line(st, END_MOVE, rx, c, fn, ctx);
		st->redraw_rows += n;
		if (st->redraw_rows > 64)
			st->redraw_rows = 64;
		break;
	case 'B': case 'E':
		end_line(st, END_MOVE, rx, c, fn, ctx);
		st->redraw_rows = st->redraw_rows > n ? st->redraw_rows - n : 0;
		break;
	case 'G': case 'H': case 'f': case 'd': case 'J':
		end_line(st, END_MOVE, rx, c, fn, ctx);
		break;
	case 'K':	/* erase the line (1, 2); erasing to its end (0) keeps what came before */
		if (st->csi_n)
			end_line(st, END_MOVE, rx, c, fn, ctx);
		break;
	default:	/* colours and modes */
		break;
	}
}

void marks__feed(struct marks_stream *st, const char *data, size_t copied, uint64_t len,
		 const struct marks_regex *rx, struct marks_counts *c, marks_fn fn, void *ctx)
{
	for (size_t i = 0; i < copied; i++) {
		unsigned char b = (unsigned char)data[i];

		switch (st->esc) {
		case ESC_START:
			st->esc = b == '[' ? ESC_CSI : b == ']' ? ESC_OSC :
				  b && strchr("()*+", b) ? ESC_CHARSET : ESC_NONE;
			st->csi_n = 0;
			continue;
		case ESC_CSI:
			if (b >= '0' && b <= '9') {
				if (st->csi_n < 1000)
					st->csi_n = st->csi_n * 10 + (b - '0');
			} else if (b >= 0x40 && b <= 0x7e) {
				st->esc = ESC_NONE;
				csi_final(st, b, rx, c, fn, ctx);
			}
			continue;
		case ESC_OSC:	/* a title or a hyperlink's target: ends at BEL or ESC \ */
			if (b == 0x07)
				st->esc = ESC_NONE;
			else if (b == 0x1b)
				st->esc = ESC_OSC_END;
			continue;
		case ESC_OSC_END:
		case ESC_CHARSET:
			st->esc = ESC_NONE;
			continue;
		}
		if (b == '\n') {
			end_line(st, END_NEWLINE, rx, c, fn, ctx);
		} else if (b == '\r' || b == '\b') {
			end_line(st, END_RETURN, rx, c, fn, ctx);
		} else if (b == 0x1b) {
			st->esc = ESC_START;
		} else if ((b >= 0x20 || b == '\t') && b != 0x7f && st->len < MARKS_LINE_MAX - 1) {
			st->line[st->len++] = (char)(b == '\t' ? ' ' : b);
		} else {
			st->skip = true;	/* not text, or longer than a metrics line */
		}
	}
	if (len > copied) {	/* the rest went unseen: so does the end of this line */
		st->skip = true;
		st->esc = ESC_NONE;
	} else if (len < MARKS_FLUSHED_BELOW && st->redraw && st->len > st->read_len && !st->skip &&
		   st->esc == ESC_NONE) {
		/* a frame the program flushed and the next frame will end: read it now (the
		 * redraw that ends it gives only what changed) */
		marks__parse_line(st, st->line, st->len, true, false, rx, c, fn, ctx);
		st->read_len = st->len;
	}
}
