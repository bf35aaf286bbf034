/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_MARKS_H
#define __CIRRON_MARKS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Marks from what a job prints (issue 18): the bytes a traced process wrote to its stdout
 * or stderr, cut into lines, and the numeric metrics in each line:
 * - Python dict reprs with numeric values (HF Trainer: {'loss': 0.69, 'epoch': 0.5}): each
 *   numeric key a mark; a dict with an eval_* key or a whole-number epoch is an end-of-epoch
 *   summary;
 * - `key: value` and `key=value` pairs (Keras, Lightning, tqdm postfixes, plain prints), and
 *   `key value` with a lowercase key and a decimal value (`print(f"loss {x}")`);
 * - the named groups of --marks-regex.
 * Lines are never kept beyond the parse: a line in progress waits in a bounded buffer for
 * its end; a longer one, a line cut by a write over the copy bound, and a line with bytes
 * that are not text (binary output) are skipped. tqdm's carriage-return redraws give a mark
 * only when a value changed.
 */
#define MARKS_LINE_MAX	512
#define MARKS_NAME_MAX	64
#define MARKS_REGEX_GROUPS 16
#define MARKS_LAST	32	/* values remembered per stream for redraws */

struct marks_regex {
	regex_t rx;
	bool compiled;
	int ngroups;			/* capture groups, named or not */
	char *names[MARKS_REGEX_GROUPS + 1];	/* [group number]: its name, or NULL */
};

struct marks_stream {
	char line[MARKS_LINE_MAX];
	size_t len;
	bool skip;		/* drop the line in progress up to its end */
	bool after_cr;		/* the line in progress follows a carriage return: a redraw */
	int esc;		/* inside an ANSI escape sequence (1: after ESC, 2: CSI) */
	struct { char name[MARKS_NAME_MAX]; double value; } last[MARKS_LAST];
	int nlast, next_last;
};

struct marks_counts {
	uint64_t lines, lines_skipped, marks, redraws_unchanged;
};

/* One metric found: summary is true for end-of-epoch values. */
typedef void (*marks_fn)(void *ctx, const char *name, double value, bool summary);

/* Compiles an extended regex whose named groups ((?<name>...) or (?P<name>...)) name the
 * marks. Returns 0, or -1 with a reason in err. */
int marks_regex__compile(struct marks_regex *r, const char *pattern, char *err, size_t errsz);
void marks_regex__free(struct marks_regex *r);

/* Feeds one write: copied bytes of the len the process wrote (len > copied: the write went
 * over the copy bound and the rest is unseen). rx may be NULL. */
void marks__feed(struct marks_stream *st, const char *data, size_t copied, uint64_t len,
		 const struct marks_regex *rx, struct marks_counts *c, marks_fn fn, void *ctx);

/* Parses one line (no line terminator in it). redraw: a carriage-return redraw, whose marks
 * are given only when their value changed (st remembers them; st may be NULL). */
void marks__parse_line(struct marks_stream *st, const char *line, size_t n, bool redraw,
		       const struct marks_regex *rx, struct marks_counts *c, marks_fn fn,
		       void *ctx);

#endif
