/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BATCH_ARENA_H
#define __CIRRON_BATCH_ARENA_H

#include <stdbool.h>
#include <cjson/cJSON.h>

/*
 * A bump allocator for one parsed batch: cJSON makes a small allocation per value, and a
 * batch of 4096 spans is ~50k values, so parsing into an arena and dropping it whole reads a
 * spool about twice as fast as malloc and free per value. cJSON's allocator is global: the
 * hooks stay installed once set, send every allocation to malloc except while a parse is under
 * way, and ignore frees of arena memory. One batch at a time lives in the arena; a second
 * parse while one is alive gets malloc (batch_arena__parse says which it used).
 */

/* cJSON_ParseWithOpts(text, end, 0) into the arena when it is free (read by batch_json.c, the
 * same tree faster), else with malloc. *in_arena: release with batch_arena__release, else
 * cJSON_Delete. */
cJSON *batch_arena__parse(const char *text, const char **end, bool *in_arena);
/* Drops the arena's batch (json, parsed by batch_arena__parse into it). */
void batch_arena__release(cJSON *json);

#endif
