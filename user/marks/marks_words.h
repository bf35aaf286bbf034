/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_MARKS_WORDS_H
#define __CIRRON_MARKS_WORDS_H

/* The words and values of a printed line, for marks_line.c. */
#include <stdbool.h>
#include <stddef.h>

struct marks_value {
	double v;
	bool integer;		/* no digit after a point, no exponent: it may count things */
	const char *end;
};

/* A character of a key (letters, digits, _ . / -). */
bool marks_words__key_char(char ch);
/* A number at s that ends where a value may end (not 0s, 1/10, 2.13.0, 12.5it/s, 11,456). */
bool marks_words__number_at(const char *s, struct marks_value *out);
/* A number, or a scalar's repr read as its number (tensor(0.51), np.float32(0.5)). */
bool marks_words__value_at(const char *s, struct marks_value *out);
/* The integer just read (ending at e) is followed by what it counts: "0 TPU cores". */
bool marks_words__counts_things(const char *e);
/* A validation or per-epoch name: a summary on the epoch. */
bool marks_words__summary_name(const char *name);
/* Lightning's per-step twin of a name (train_loss_step). */
bool marks_words__step_name(const char *name);
/* Which run, process or device, not how training goes (rank, seed, LOCAL_RANK). */
bool marks_words__id_name(const char *name);
/* A key that names a metric (loss, val_acc, f1) rather than a word of prose. */
bool marks_words__metric_like(const char *k, size_t n);
/* Where the name of the key at k begins: up to two words before it make one phrase
 * ("Train Loss: 0.54"). */
const char *marks_words__phrase_start(const char *line, const char *k);

#endif
