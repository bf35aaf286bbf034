// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// C++ symbol names for people: torch's probes are mangled names hundreds of characters long.
// The C++ runtime (libstdc++) demangles them; no demangler of our own.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/demangle.h"

/* libstdc++'s demangler, C linkage (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *demangle__full(const char *sym, char *out, size_t size)
{
	char *d = NULL;
	int status = -1;

	if (!strncmp(sym, "_Z", 2))
		d = __cxa_demangle(sym, NULL, NULL, &status);
	snprintf(out, size, "%s", d && !status ? d : sym);
	free(d);
	return out;
}

/* Where a function's parameter list begins: the '(' matching its last ')', so that
 * operator() and parameters of function type stay whole. */
static size_t params_start(const char *s)
{
	const char *close = strrchr(s, ')');
	int depth = 0;

	if (!close)
		return strlen(s);
	for (const char *p = close; p > s; p--) {
		depth += (*p == ')') - (*p == '(');
		if (!depth)
			return (size_t)(p - s);
	}
	return strlen(s);
}

/* name with every template argument list shown as <...> and without a return type:
 * "c10::intrusive_ptr<A, B> c10::IValue::toCustomClass<A>" -> "c10::IValue::toCustomClass<...>". */
static void simplify(const char *name, char *out, size_t size)
{
	size_t n = 0, last_space = 0;
	int angle = 0, paren = 0;

	for (const char *p = name; *p && n + 6 < size; p++) {
		bool op = p - name >= 8 && !strncmp(p - 8, "operator", 8);

		if (*p == '<' && !op) {
			if (!angle++)
				n += (size_t)snprintf(out + n, size - n, "<...>");
			continue;
		}
		if (*p == '>' && angle && !op) {
			angle--;
			continue;
		}
		if (angle)
			continue;
		paren += (*p == '(') - (*p == ')');
		if (*p == ' ' && !paren && !op)
			last_space = n + 1;
		out[n++] = *p;
	}
	out[n] = 0;
	if (last_space)
		memmove(out, out + last_space, n - last_space + 1);
}

const char *demangle__short(const char *sym, size_t width, char *out, size_t size)
{
	char full[1024], simple[1024];
	bool cxx = !strncmp(sym, "_Z", 2);
	size_t n;

	if (!size)
		return out;
	demangle__full(sym, full, sizeof(full));
	if (cxx) {
		full[params_start(full)] = 0;
		simplify(full, simple, sizeof(simple));
	} else {
		snprintf(simple, sizeof(simple), "%s", full);
	}
	n = strlen(simple);
	if (width <= 3 || n <= width)
		snprintf(out, size, "%s", simple);
	else if (cxx)	/* the class and function are at the end */
		snprintf(out, size, "...%s", simple + n - (width - 3));
	else		/* a plain name, maybe with a note after it: keep its start */
		snprintf(out, size, "%.*s...", (int)(width - 3), simple);
	return out;
}
