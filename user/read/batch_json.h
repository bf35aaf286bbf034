/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BATCH_JSON_H
#define __CIRRON_BATCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

/*
 * A batch's text into the cJSON tree cJSON_ParseWithOpts would make of it, faster, for the
 * plain JSON the writer makes: integers read as integers (no strtod), strings copied whole
 * when they hold no escape, literals compared as bytes. It takes only a strict subset of JSON
 * (whitespace, escapes but \u, numbers of JSON's grammar, nesting under 500) and gives up on
 * anything else, returning NULL with *gave_up set: the caller then parses with cJSON, which
 * decides what the text is. So whatever it takes, cJSON takes too and makes the same tree of
 * (tests/fuzz checks it). Allocations go through alloc (the batch arena).
 */
cJSON *batch_json__parse(const char *text, const char **end, void *(*alloc)(size_t),
			 bool *gave_up);

#endif
