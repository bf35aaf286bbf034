// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdio.h>
#include "sink/stdout_sink.h"

void stdout_sink__span(const struct span *sp)
{
	char line[2048];

	puts(span__format_line(sp, line, sizeof(line)));
	fflush(stdout);
}
