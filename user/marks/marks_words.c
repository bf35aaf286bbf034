// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the words and values of a printed line are (marks_words.h): a number and where it
// ends, a scalar's repr, a name that is a metric, an id, a count, a summary.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "marks/marks_words.h"

static const char *const STOPWORDS[] = {
	"a", "all", "an", "and", "any", "are", "as", "at", "be", "best", "by", "each", "for",
	"from", "got", "had", "has", "have", "in", "into", "is", "it", "its", "just", "last",
	"max", "min", "new", "next", "no", "not", "now", "of", "old", "on", "only", "or", "over",
	"per", "set", "than", "that", "the", "then", "this", "to", "top", "up", "via", "vs", "was",
	"were", "with", NULL
};

/* Names that say which run, process or device, not how training goes. */
static const char *const IDS[] = {
	"v_num", "version", "seed", "pid", "port", "rank", "local_rank", "global_rank",
	"node_rank", "group_rank", "world_size", "local_world_size", "num_nodes", "num_devices",
	"num_gpus", "num_processes", "num_workers", "devices", "gpus", "nodes", "workers", NULL
};

/* Words in the names of what `key value` (no colon, no equals sign) may mark. */
static const char *const METRIC_STEMS[] = {
	"loss", "acc", "err", "lr", "ppl", "perplex", "f1", "auc", "mae", "mse", "bleu", "rouge",
	"score", "norm", "reward", "entropy", "iou", "dice", "prec", "recall", "metric", "grad",
	"kl", NULL
};

static bool in_list(const char *const *list, const char *w, size_t n)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == n && !strncasecmp(list[i], w, n))
			return true;
	return false;
}

bool marks_words__key_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '/' || ch == '-';
}

static bool number_start(char ch)
{
	return isdigit((unsigned char)ch) || ch == '-' || ch == '+' || ch == '.';
}

/* What may follow a value. Anything else makes it no value: 0s, 1/10, 0:01, 12ms/step,
 * 2.13.0, 12.5it/s. */
static bool value_end(char ch)
{
	return !ch || strchr(" ,;])}|'\"", ch);
}

bool marks_words__number_at(const char *s, struct marks_value *out)
{
	const char *e;
	char *x;

	if (!number_start(*s) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return false;
	out->v = strtod(s, &x);
	e = x;
	if (e == s || e[-1] == '.')
		return false;	/* "the best epoch: 4.": a full stop ends prose */
	out->integer = true;
	for (const char *p = s; p < e; p++)
		if ((*p == '.' && isdigit((unsigned char)p[1])) || *p == 'e' || *p == 'E')
			out->integer = false;
	if (*e == '%') {
		if (e[1] == '|')
			return false;	/* a bar's own percentage: "Epoch 0: 100%|####|" */
		e++;
	}
	if (*e == ',' && isdigit((unsigned char)e[1]))
		return false;		/* 11,456 */
	if (!value_end(*e))
		return false;
	out->end = e;
	return true;
}

/* tensor(0.5123), tensor(0.5123, grad_fn=<NllLossBackward0>), np.float32(0.5),
 * numpy.float64(0.5), array(0.5, dtype=float32): a scalar's repr, read as its number. */
static bool scalar_at(const char *s, struct marks_value *out)
{
	const char *p = NULL, *q;
	int depth = 0;
	char inq = 0;

	if (!strncmp(s, "tensor(", 7))
		p = s + 7;
	else if (!strncmp(s, "array(", 6) || !strncmp(s, "Array(", 6))
		p = s + 6;
	else if (!strncmp(s, "np.", 3) || !strncmp(s, "numpy.", 6)) {
		q = s + (s[1] == 'p' ? 3 : 6);
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		if (*q == '(')
			p = q + 1;
	}
	if (!p || !marks_words__number_at(p, out) || out->end[-1] == '%')
		return false;
	q = out->end;
	if (*q != ')' && *q != ',')
		return false;
	for (; *q; q++) {	/* to the closing parenthesis, past quoted strings */
		if (inq) {
			if (*q == inq)
				inq = 0;
		} else if (*q == '\'' || *q == '"') {
			inq = *q;
		} else if (*q == '(' || *q == '[' || *q == '{') {
			depth++;
		} else if (*q == ')' || *q == ']' || *q == '}') {
			if (!depth--)
				break;
		}
	}
	if (*q != ')' || !value_end(q[1]))
		return false;
	out->end = q + 1;
	return true;
}

bool marks_words__value_at(const char *s, struct marks_value *out)
{
	return marks_words__number_at(s, out) || scalar_at(s, out);
}

/* The integer just read is followed by what it counts: "using: 0 TPU cores", "2 GPUs".
 * Words that are the next key ("3 acc: 0.5", "1 Training Loss: 0.12", "3 acc 0.5") are no
 * such thing. */
bool marks_words__counts_things(const char *e)
{
	for (int words = 0; words < 3; words++) {
		while (*e == ' ')
			e++;
		if (!isalpha((unsigned char)*e))
			return words > 0;
		while (marks_words__key_char(*e))
			e++;
		while (*e == ' ')
			e++;
		if (*e == ':' || *e == '=' || number_start(*e))
			return false;
	}
	return true;
}

bool marks_words__summary_name(const char *name)
{
	static const char *const pre[] = {
		"validation", "valid", "val", "evaluation", "eval", "test", NULL
	};
	size_t n = strlen(name);

	for (int i = 0; pre[i]; i++) {
		size_t l = strlen(pre[i]);

		if (!strncasecmp(name, pre[i], l) && strchr("_/ -.", name[l]))
			return true;
	}
	return (n > 6 && (!strcasecmp(name + n - 6, "_epoch") || !strcasecmp(name + n - 6, "/epoch")))
	       || !strncasecmp(name, "epoch_", 6) || !strncasecmp(name, "epoch/", 6);
}

/* Lightning names a value logged per step and per epoch train_loss_step, train_loss_epoch. */
bool marks_words__step_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && (!strcasecmp(name + n - 5, "_step") || !strcasecmp(name + n - 5, "/step"));
}

bool marks_words__id_name(const char *name)
{
	const char *w = strrchr(name, ' ');
	bool caps = true, underscore = false;

	for (const char *p = name; *p; p++) {
		caps &= !islower((unsigned char)*p) && *p != ' ';
		underscore |= *p == '_';
	}
	if (caps && underscore)
		return true;	/* LOCAL_RANK: 0, MASTER_PORT=29500: the environment */
	w = w ? w + 1 : name;
	return in_list(IDS, name, strlen(name)) || in_list(IDS, w, strlen(w));
}

bool marks_words__metric_like(const char *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (k[i] == '_' || k[i] == '/' || isdigit((unsigned char)k[i]))
			return true;
	for (int i = 0; METRIC_STEMS[i]; i++) {
		size_t l = strlen(METRIC_STEMS[i]);

		for (size_t j = 0; j + l <= n; j++)
			if (!strncasecmp(k + j, METRIC_STEMS[i], l))
				return true;
	}
	return n <= 4 && !in_list(STOPWORDS, k, n);
}

/* Where the name of the key at k begins: up to two words before it make one phrase
 * ("Train Loss: 0.54", "learning rate: 0.001"), not a log level, an id or a stopword. */
const char *marks_words__phrase_start(const char *line, const char *k)
{
	const char *start = k;

	for (int words = 0; words < 2; words++) {
		const char *we = start - 1, *ws = we;
		bool caps = true;

		if (start - line < 2 || *we != ' ')
			break;
		while (ws > line && (isalnum((unsigned char)ws[-1]) || ws[-1] == '_' || ws[-1] == '-'))
			ws--;
		if (ws == we || !isalpha((unsigned char)*ws) || (ws > line && marks_words__key_char(ws[-1])))
			break;
		for (const char *p = ws; p < we; p++)
			caps &= !islower((unsigned char)*p);
		if ((caps && we - ws > 1) || memchr(ws, '_', (size_t)(we - ws)) ||
		    in_list(STOPWORDS, ws, (size_t)(we - ws)))
			break;
		start = ws;
	}
	return start;
}
