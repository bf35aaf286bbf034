// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <ctype.h>
#include <string.h>
#include "sink/batch_name.h"

size_t batch_name__id_len(const char *name)
{
	size_t len = strlen(name), d = 0;

	if (name[0] == '.' || len < 5 || strcmp(name + len - 5, ".json") != 0)
		return 0;
	while (d + 6 < len && isdigit((unsigned char)name[len - 6 - d]))
		d++;
	if (d < 8 || d + 7 > len || name[len - 6 - d] != '.')
		return 0;
	return len - 6 - d;
}
