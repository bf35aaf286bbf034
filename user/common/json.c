// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// cJSON numbers that keep their digits, and values as a line shows them (json.h).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/json.h"

void json__add_u64(cJSON *o, const char *key, uint64_t v)
{
	char num[24];

	/* As raw digits: a double would round ns timestamps (~1.8e18) to 256 ns. */
	snprintf(num, sizeof(num), "%" PRIu64, v);
	cJSON_AddRawToObject(o, key, num);
}

void json__add_i64(cJSON *o, const char *key, int64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRId64, v);
	cJSON_AddRawToObject(o, key, num);
}

void json__add_double(cJSON *o, const char *key, double v)
{
	char num[32];

	/* The shortest digits that read back as v: cJSON's own printing may drop the last bit
	 * (it compares within an epsilon), and a printed metric should come back as printed. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(num, sizeof(num), "%.*g", prec, v);
		if (strtod(num, NULL) == v)
			break;
	}
	cJSON_AddRawToObject(o, key, num);
}

void json__format_value(const cJSON *v, char *out, int size)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d < 9e15 && d > -9e15 && d == (double)(int64_t)d)	/* cast in range only */
			snprintf(out, size, "%" PRId64, (int64_t)d);
		else
			snprintf(out, size, "%.4f", d);
	} else if (cJSON_IsString(v)) {
		snprintf(out, size, "%s", v->valuestring);
	} else if (cJSON_IsBool(v)) {
		snprintf(out, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNull(v)) {
		snprintf(out, size, "null");
	} else {
		char *s = cJSON_PrintUnformatted(v);

		snprintf(out, size, "%s", s ? s : "?");
		cJSON_free(s);
	}
}

void json__set_num(cJSON *o, const char *key, double v)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (it && cJSON_IsNumber(it))
		cJSON_SetNumberValue(it, v);
	else if (it)
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateNumber(v));
	else
		cJSON_AddNumberToObject(o, key, v);
}

void json__set_str(cJSON *o, const char *key, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateString(v));
	else
		cJSON_AddStringToObject(o, key, v);
}
