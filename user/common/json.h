/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_JSON_H
#define __CIRRON_JSON_H

#include <stdint.h>
#include <cjson/cJSON.h>

/* Adds an exact unsigned 64-bit number (cJSON numbers are doubles). */
void json__add_u64(cJSON *o, const char *key, uint64_t v);
/* And a signed one. */
void json__add_i64(cJSON *o, const char *key, int64_t v);
/* A finite double that reads back exactly (cJSON_AddNumberToObject may lose its last bit). */
void json__add_double(cJSON *o, const char *key, double v);
/* An attribute value as the stdout line shows it: 12, 0.5234, text, true, {"a":1}. */
void json__format_value(const cJSON *v, char *out, int size);

/* Sets key to a number or a string, in place where o has it (its order kept), else added. */
void json__set_num(cJSON *o, const char *key, double v);
void json__set_str(cJSON *o, const char *key, const char *v);

#endif
