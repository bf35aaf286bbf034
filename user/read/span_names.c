// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Span names kept once, with their kind (span_names.h).
#include <stdlib.h>
#include <string.h>
#include "read/phases.h"
#include "read/span_names.h"

const struct span_name *span_names__get(struct span_names *t, const char *s)
{
	size_t h = 5381, len = strlen(s);
	struct span_name *n;

	for (const char *c = s; *c; c++)
		h = h * 33 + (unsigned char)*c;
	h &= SPAN_NAMES_CAP - 1;
	for (n = t->b[h]; n; n = n->next)
		if (!strcmp(n->s, s))
			return n;
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->s, s, len + 1);
	n->kind = phase__of(s);
	if (n->kind < 0)
		n->kind = !strcmp(s, "step") ? TK_STEP :
			  !strcmp(s, "request") ? TK_REQUEST : TK_OTHER;
	n->next = t->b[h];
	t->b[h] = n;
	return n;
}

void span_names__free(struct span_names *t)
{
	for (size_t i = 0; i < SPAN_NAMES_CAP; i++)
		for (struct span_name *n = t->b[i], *next; n; n = next) {
			next = n->next;
			free(n);
		}
}
