// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A span on its own: its text line (trace), its JSON (the spool), its marks.
#include <stdint.h>
#include "tree/span.h"
#include "unit.h"

#define T0 1795423440131994182ull	/* a wall-clock ns value a double cannot hold */

static struct span *new_span(const char *name, long index, uint64_t start, uint64_t end,
			     enum span_status st)
{
	struct span *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = 7;
	s->name = strdup(name);
	s->index = index;
	s->start_ns = start;
	s->end_ns = end;
	s->status = st;
	s->attrs = cJSON_CreateObject();
	s->marks = cJSON_CreateArray();
	return s;
}

static void free_span(struct span *s)
{
	if (!s)
		return;
	cJSON_Delete(s->attrs);
	cJSON_Delete(s->marks);
	free(s->name);
	free(s);
}

static void format_line_name_and_index(void)
{
	struct span *with = new_span("epoch", 0, T0, T0 + 142000, SPAN_OK);
	struct span *without = new_span("forward", -1, T0, T0 + 12300000, SPAN_OK);
	char buf[256];

	if (ASSERT_OK_PTR(with, "span") && ASSERT_OK_PTR(without, "span")) {
		ASSERT_STREQ(span__format_line(with, buf, sizeof(buf)),
			     "[cirron] epoch[0] - 142us", "with index");
		ASSERT_STREQ(span__format_line(without, buf, sizeof(buf)),
			     "[cirron] forward - 12.3ms", "without index");
		with->index = 12;
		ASSERT_STREQ(span__format_line(with, buf, sizeof(buf)),
			     "[cirron] epoch[12] - 142us", "index 12");
	}
	free_span(with);
	free_span(without);
}

static void format_line_attrs(void)
{
	struct span *s = new_span("epoch", 1, T0, T0 + 3210000000ull, SPAN_OK);
	cJSON *nested;
	char buf[512];

	if (!ASSERT_OK_PTR(s, "span"))
		return;
	cJSON_AddNumberToObject(s->attrs, "epoch_loss", 0.523449);
	cJSON_AddNumberToObject(s->attrs, "steps", 1875);
	cJSON_AddNumberToObject(s->attrs, "delta", -3);
	cJSON_AddNumberToObject(s->attrs, "lr", 2.5);
	cJSON_AddStringToObject(s->attrs, "model", "ResNet 50");
	cJSON_AddBoolToObject(s->attrs, "train", true);
	cJSON_AddBoolToObject(s->attrs, "amp", false);
	nested = cJSON_AddObjectToObject(s->attrs, "cuda");
	cJSON_AddNumberToObject(nested, "launches", 12);
	cJSON_AddStringToObject(nested, "dev", "a");
	ASSERT_STREQ(span__format_line(s, buf, sizeof(buf)),
		     "[cirron] epoch[1] - 3.21s {epoch_loss=0.5234, steps=1875, delta=-3, "
		     "lr=2.5000, model=ResNet 50, train=true, amp=false, "
		     "cuda={\"launches\":12,\"dev\":\"a\"}}",
		     "attrs in order");
	free_span(s);
}

static void format_line_big_numbers(void)
{
	struct span *s = new_span("x", -1, 1000, 1850, SPAN_OK);
	char buf[256];

	if (!ASSERT_OK_PTR(s, "span"))
		return;
	cJSON_AddNumberToObject(s->attrs, "bytes", 4294967296.0 * 1024);
	cJSON_AddNumberToObject(s->attrs, "huge", 1e20);
	ASSERT_STREQ(span__format_line(s, buf, sizeof(buf)),
		     "[cirron] x - 850ns {bytes=4398046511104, huge=100000000000000000000.0000}",
		     "large integers and beyond int64");
	free_span(s);
}

static void format_line_status(void)
{
	struct span *open = new_span("step", 4, T0, 0, SPAN_OPEN);
	struct span *inc = new_span("step", 5, T0, T0 + 1500000, SPAN_INCOMPLETE);
	char buf[256];

	if (ASSERT_OK_PTR(open, "span") && ASSERT_OK_PTR(inc, "span")) {
		ASSERT_STREQ(span__format_line(open, buf, sizeof(buf)),
			     "[cirron] step[4] - ? (open)", "open");
		cJSON_AddNumberToObject(inc->attrs, "n", 1);
		ASSERT_STREQ(span__format_line(inc, buf, sizeof(buf)),
			     "[cirron] step[5] - 1.5ms (incomplete) {n=1}", "incomplete");
	}
	free_span(open);
	free_span(inc);
}

static void format_line_truncates(void)
{
	struct span *s = new_span("a_rather_long_span_name", 3, T0, T0 + 5000, SPAN_OK);
	const char *full = "[cirron] a_rather_long_span_name[3] - 5us {key=value}";
	char buf[20];

	if (!ASSERT_OK_PTR(s, "span"))
		return;
	cJSON_AddStringToObject(s->attrs, "key", "value");
	memset(buf, 'x', sizeof(buf));
	span__format_line(s, buf, sizeof(buf));
	ASSERT_EQ(strnlen(buf, sizeof(buf)), sizeof(buf) - 1, "NUL-terminated in the buffer");
	ASSERT_TRUE(!strncmp(buf, full, sizeof(buf) - 1), "a prefix of the full line");
	free_span(s);
}

static void json_u64_exact(void)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	if (!ASSERT_OK_PTR(o, "object"))
		return;
	json__add_u64(o, "t", T0);
	json__add_u64(o, "max", UINT64_MAX);
	json__add_u64(o, "zero", 0);
	json__add_i64(o, "back", -3600000000001);	/* a wall clock set back an hour, and 1 ns */
	json__add_i64(o, "min", INT64_MIN);
	text = cJSON_PrintUnformatted(o);
	ASSERT_STREQ(text, "{\"t\":1795423440131994182,\"max\":18446744073709551615,\"zero\":0,"
		     "\"back\":-3600000000001,\"min\":-9223372036854775808}", "printed exactly");
	cJSON_free(text);
	cJSON_Delete(o);
}

static void span_to_json(void)
{
	struct span *s = new_span("epoch", 2, T0, T0 + 142000, SPAN_INCOMPLETE);
	cJSON *j, *back;
	char *text;

	if (!ASSERT_OK_PTR(s, "span"))
		return;
	s->parent_id = 3;
	j = span__to_json(s);
	text = cJSON_PrintUnformatted(j);
	ASSERT_HAS_SUBSTR(text, "\"span_id\":7,\"parent_id\":3,\"name\":\"epoch\",\"index\":2,"
			  "\"start_ns\":1795423440131994182,\"end_ns\":1795423440132136182,"
			  "\"duration_ns\":142000,\"status\":\"incomplete\"", "fields");
	back = cJSON_Parse(text);
	ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItem(back, "attrs")), "attrs object");
	ASSERT_TRUE(cJSON_IsArray(cJSON_GetObjectItem(back, "marks")), "marks array");
	cJSON_Delete(back);
	cJSON_free(text);
	cJSON_Delete(j);

	s->parent_id = 0;
	s->index = -1;
	s->end_ns = 0;
	s->status = SPAN_OPEN;
	j = span__to_json(s);
	text = cJSON_PrintUnformatted(j);
	ASSERT_HAS_SUBSTR(text, "\"parent_id\":null,\"name\":\"epoch\",\"index\":null,"
			  "\"start_ns\":1795423440131994182,\"end_ns\":null,\"status\":\"open\"",
			  "open root fields");
	ASSERT_FALSE(strstr(text, "duration_ns"), "no duration while open");
	cJSON_free(text);
	cJSON_Delete(j);
	free_span(s);
}

static void marks_capped(void)
{
	struct span *s = new_span("step", 0, T0, 0, SPAN_OPEN);
	const cJSON *d;

	if (!ASSERT_OK_PTR(s, "span"))
		return;
	for (int i = 0; i < SPAN_MAX_MARKS + 3; i++)
		span__add_mark(s, cJSON_CreateNumber(i));
	ASSERT_EQ(cJSON_GetArraySize(s->marks), SPAN_MAX_MARKS, "marks kept");
	d = cJSON_GetObjectItem(s->attrs, "marks_dropped");
	ASSERT_TRUE(cJSON_IsNumber(d) && d->valuedouble == 3, "marks_dropped = 3");
	ASSERT_TRUE(s->dirty, "dirty");
	free_span(s);
}
int main(void)
{
	RUN_TEST(format_line_name_and_index);
	RUN_TEST(format_line_attrs);
	RUN_TEST(format_line_big_numbers);
	RUN_TEST(format_line_status);
	RUN_TEST(format_line_truncates);
	RUN_TEST(json_u64_exact);
	RUN_TEST(span_to_json);
	RUN_TEST(marks_capped);
	return unit__done();
}
