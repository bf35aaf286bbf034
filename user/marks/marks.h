/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_MARKS_H
#define __CIRRON_MARKS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Marks from what a job prints (issues 18, 25): the bytes a traced process wrote to its
 * stdout or stderr, cut into lines (marks.c), and the numeric metrics in each line
 * (marks_line.c):
 * - Python dict reprs and JSON objects (HF Trainer: {'loss': '1.387', 'epoch': '0.5'}, the
 *   quoted numbers of transformers 5; {'loss': 0.69}): each number a mark; a dict with an
 *   eval_/val_/test_ key or a whole-number epoch is an end-of-epoch summary;
 * - `key: value` and `key=value` pairs (Keras, Lightning's bars, tqdm postfixes, plain
 *   prints, logging lines), `key value` with a metric-like key and a decimal value, a
 *   two-cell table row (Lightning's metric tables), a key that ends one line and its value
 *   that starts the next (rich wraps a narrow column); values are numbers, quoted numbers
 *   in dicts and scalar reprs (tensor(0.51), tensor(0.51, grad_fn=<...>), np.float32(0.5));
 * - the named groups of --marks-regex.
 * Not metrics: counts (an integer followed by what it counts, `0 TPU cores`, or keyed by a
 * phrase, `Total params: 610`), ids and versions (v_num, rank, seed, LOCAL_RANK, ...),
 * numbers with a unit (0s, 2ms/step, 12.5it/s), fractions, times, thousands (11,456), a
 * bar's percentage (100%|), the arguments of a repr (Linear(in_features=16), Namespace(lr=..)).
 * Lines are never kept beyond the parse: a line in progress waits in a bounded buffer for
 * its end; a longer one, a line cut by a write over the copy bound, and a line with bytes
 * that are not text (binary output) are skipped. Progress bars redraw a line (\r, \b) or
 * several (cursor-up escapes, rich's live display): a redraw gives a mark only when a value
 * changed, or a value becomes a summary. A bar's frame is ended only by the next one (tqdm
 * writes "\rframe", Keras "frame" then "\b\b...\r" with the next): a redraw that a flushed
 * write leaves open is read at the write's end, so its values come at the write that showed
 * them.
 */
#define MARKS_LINE_MAX	1024
#define MARKS_NAME_MAX	64
#define MARKS_REGEX_GROUPS 16
#define MARKS_LAST	32	/* values remembered per stream for redraws */
/* A write shorter than a full buffer of a block-buffered stream (Python's and C's are 8 KiB)
 * ended where the program flushed it. */
#define MARKS_FLUSHED_BELOW 8192

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
	bool redraw;		/* the line in progress overwrites one on screen */
	int redraw_rows;	/* rows below it that a cursor-up left to be redrawn */
	int esc;		/* in an escape sequence (enum in marks.c) */
	int csi_n;		/* its first numeric parameter */
	char pending[MARKS_NAME_MAX];	/* a key that ended the last line, without its value */
	size_t read_len;	/* the line in progress was read up to here at a write's end */
	struct { char name[MARKS_NAME_MAX]; double value; bool summary; } last[MARKS_LAST];
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

/* Parses one line (no line terminator in it, no escapes). redraw: it overwrites a line on
 * screen, and gives marks only for values that changed (st remembers them; st may be NULL);
 * ended: a newline ended it (the line stays on screen). */
void marks__parse_line(struct marks_stream *st, const char *line, size_t n, bool redraw,
		       bool ended, const struct marks_regex *rx, struct marks_counts *c,
		       marks_fn fn, void *ctx);

/* A target's printed output on its way to marks: its stdout and stderr streams (what they
 * hold of a line not yet ended), the marks made, and the writes seen (observe/writes.c). */
struct marks_feed {
	struct marks_stream streams[2];
	struct marks_counts counts;
	uint64_t writes, bytes, over_bound;	/* writes seen, their bytes, those cut at the copy's
						 * bound */
};

#endif
