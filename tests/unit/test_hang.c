// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Hang detection on a real session: usual durations learned from closed spans, the open
// path checked against them, one report per hang.
#include "tree/hang.h"
#include "tree/session.h"
#include "unit.h"

#define T0 1795423440000000000ull
#define MS 1000000ull
#define SEC 1000000000ull

static struct session *new_session(struct hang_watch *w)
{
	struct session_ids ids = { .pid = 42, .start_ticks = 1000, .world_size = 1, .host = "vm" };
	struct session *s = session__new(&ids, T0);

	hang__init(w, 10, 1.0);
	return s;
}

static void close_steps(struct session *s, struct hang_watch *w, struct span *epoch, int n)
{
	for (int i = 0; i < n; i++) {
		struct span *st = session__open(s, epoch, "step", i, T0 + (uint64_t)i * 10 * MS);

		session__close(s, st, st->start_ns + 2 * MS, SPAN_OK);
		hang__span_closed(w, st);
	}
}

static void median_of_closed_spans(void)
{
	struct hang_watch w;
	struct session *s = new_session(&w);
	struct span *epoch = session__open(s, NULL, "epoch", 0, T0);

	ASSERT_EQ(hang__median(&w, "step"), 0, "no history");
	close_steps(s, &w, epoch, 2);
	ASSERT_EQ(hang__median(&w, "step"), 0, "too few");
	close_steps(s, &w, epoch, 3);
	ASSERT_U64_EQ(hang__median(&w, "step"), 2 * MS, "median of five 2 ms steps");
	session__free(s);
}

static void reports_once_per_hang(void)
{
	struct hang_watch w;
	struct session *s = new_session(&w);
	struct span *epoch = session__open(s, NULL, "epoch", 0, T0), *st;
	char line[512];
	cJSON *rec;

	close_steps(s, &w, epoch, 5);
	st = session__open(s, epoch, "step", 5, T0 + SEC);
	ASSERT_NULL(hang__check(&w, s, NULL, T0 + SEC + 500 * MS, line, sizeof(line)),
		    "20 ms x 10 is 20 ms, but under --hang-min");
	rec = hang__check(&w, s, NULL, T0 + 3 * SEC, line, sizeof(line));
	if (ASSERT_OK_PTR(rec, "2 s open: hung")) {
		ASSERT_STREQ(cJSON_GetObjectItem(rec, "name")->valuestring, "step", "name");
		ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(rec, "open_path")), 3,
			  "session > epoch > step");
		ASSERT_HAS_SUBSTR(line, "rank 0: no progress for 2.00s in cirron.session > epoch[0] > "
				  "step[5] (usually 2.0ms)", "warning line");
	}
	cJSON_Delete(rec);
	ASSERT_NULL(hang__check(&w, s, NULL, T0 + 9 * SEC, line, sizeof(line)), "told once");
	session__close(s, st, T0 + 10 * SEC, SPAN_OK);
	st = session__open(s, epoch, "step", 6, T0 + 11 * SEC);
	rec = hang__check(&w, s, NULL, T0 + 20 * SEC, line, sizeof(line));
	ASSERT_OK_PTR(rec, "the next hang is a new one");
	cJSON_Delete(rec);
	session__free(s);
}

static void pending_batch_is_innermost(void)
{
	struct hang_watch w;
	struct session *s = new_session(&w);
	struct span *epoch = session__open(s, NULL, "epoch", 0, T0), *dl;
	struct span loading = { .name = "data_load", .index = -1, .status = SPAN_OPEN };
	char line[512];
	cJSON *rec;

	for (int i = 0; i < 3; i++) {
		dl = session__open(s, epoch, "data_load", -1, T0 + (uint64_t)i * MS);
		session__close(s, dl, dl->start_ns + 100000, SPAN_OK);
		hang__span_closed(&w, dl);
	}
	loading.parent_id = epoch->id;
	loading.start_ns = T0 + SEC;
	rec = hang__check(&w, s, &loading, T0 + 4 * SEC, line, sizeof(line));
	if (ASSERT_OK_PTR(rec, "loading for 3 s")) {
		ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(rec, "pending")), "pending");
		ASSERT_HAS_SUBSTR(line, "epoch[0] > data_load (usually 100us)", "line");
	}
	cJSON_Delete(rec);
	w.factor = 0;
	w.reported_start_ns = 0;	/* as if never told */
	ASSERT_NULL(hang__check(&w, s, &loading, T0 + 99 * SEC, line, sizeof(line)),
		    "factor 0: off");
	session__free(s);
}

/* A step opened after the fact at its stalled data_load's start: once the batch is in and the
 * training thread is busy again, the step is not hung, however long ago it started; when the
 * events stop again for long enough, it is. */
static void progress_after_a_stall_is_not_a_hang(void)
{
	struct hang_watch w;
	struct session *s = new_session(&w);
	struct span *epoch = session__open(s, NULL, "epoch", 0, T0), *st;
	char line[512];
	cJSON *rec;

	close_steps(s, &w, epoch, 5);	/* steps of 2 ms */
	st = session__open(s, epoch, "step", 5, T0 + SEC);	/* its data_load took 3 s */
	hang__progress(&w, T0 + 4 * SEC);	/* the batch came; forward began */
	ASSERT_NULL(hang__check(&w, s, NULL, T0 + 4 * SEC + 10 * MS, line, sizeof(line)),
		    "3 s old, but busy 10 ms ago");
	rec = hang__check(&w, s, NULL, T0 + 6 * SEC, line, sizeof(line));
	if (ASSERT_OK_PTR(rec, "then 2 s without an input: hung")) {
		ASSERT_HAS_SUBSTR(line, "no progress for 2.00s in", "counted from the last input");
		ASSERT_STREQ(cJSON_GetObjectItem(rec, "open_ns")->valuestring, "5000000000",
			     "open_ns: since the step began");
		ASSERT_STREQ(cJSON_GetObjectItem(rec, "no_progress_ns")->valuestring, "2000000000",
			     "no_progress_ns: since the last input");
	}
	cJSON_Delete(rec);
	(void)st;
	session__free(s);
}

int main(void)
{
	RUN_TEST(median_of_closed_spans);
	RUN_TEST(reports_once_per_hang);
	RUN_TEST(pending_batch_is_innermost);
	RUN_TEST(progress_after_a_stall_is_not_a_hang);
	return unit__done();
}
