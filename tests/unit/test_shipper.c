// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// ship/shipper.c with a destination of the test's own: order, retries, the state log across
// a restart, groups, a rejected batch in a group, the backoff's bounds.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ship/shipper.h"
#include "unit.h"

struct dest {
	int fail_first;		/* answer RETRY to this many requests */
	int requests;
	size_t max_group;	/* the largest group seen */
	char sent[64][64];	/* names taken, in order */
	size_t nsent;
};

static enum ship_result send(void *ctx, const struct ship_item *items, size_t n,
			     struct ship_answer *a, char *why, size_t size)
{
	struct dest *d = ctx;

	d->requests++;
	if (n > d->max_group)
		d->max_group = n;
	if (d->fail_first-- > 0) {
		snprintf(why, size, "down");
		return SHIP_RETRY;
	}
	for (size_t i = 0; i < n; i++)
		if (strstr(items[i].data, "bad")) {
			snprintf(why, size, "HTTP 400: bad");
			return SHIP_REJECTED;
		}
	for (size_t i = 0; i < n && d->nsent < 64; i++)
		snprintf(d->sent[d->nsent++], 64, "%s", items[i].name);
	a->items += n;
	return SHIP_SENT;
}

static const struct ship_ops ops = { .send = send };

static void put_batch(const char *dir, const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/spool/%s", dir, name);
	unit__write_file(path, text, strlen(text));
}

static bool wait_idle(struct shipper *sh)
{
	struct timespec t = { .tv_nsec = 10 * 1000000 };

	for (int i = 0; i < 1000; i++) {	/* 10 s at most: the backoffs are < 2 s */
		if (shipper__idle(sh))
			return true;
		nanosleep(&t, NULL);
	}
	return false;
}

static struct shipper *start(const char *dir, struct dest *d, size_t group)
{
	char path[512], why[256];
	struct shipper_config c = { .what = "test", .where = "nowhere", .log_name = "test.log",
				    .log_prefix = "dest/", .items = "things", .ops = &ops, .ctx = d,
				    .group_max = group };
	struct shipper *sh;
	int fd;

	snprintf(path, sizeof(path), "%s/spool", dir);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	sh = shipper__start(&c, dir, fd, why, sizeof(why));
	close(fd);
	return sh;
}

static void retries_then_restart(void)
{
	struct dest d = { .fail_first = 2 }, d2 = { 0 };
	char dir[256], path[512], *log;
	struct shipper *sh;
	cJSON *h;

	if (!unit__mkdtemp(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/spool", dir);
	mkdir(path, 0700);
	put_batch(dir, "s-1-1.00000000.json", "{}");
	sh = start(dir, &d, 1);
	if (!ASSERT_OK_PTR(sh, "start"))
		goto out;
	shipper__written(sh, "s-1-1.00000000.json", 2);
	put_batch(dir, "s-1-1.00000001.json", "{}");
	shipper__written(sh, "s-1-1.00000001.json", 2);
	ASSERT_TRUE(wait_idle(sh), "sent after the failures");
	ASSERT_EQ(d.nsent, 2, "both");
	ASSERT_STREQ(d.sent[0], "s-1-1.00000000.json", "oldest first");
	ASSERT_EQ(d.requests, 4, "2 failed, 2 taken");
	h = shipper__health(sh);
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "failed")), 2, "failed");
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "retries")), 2, "retries");
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "sent_things")), 2, "items");
	ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(h, "error")), "no error once it works");
	cJSON_Delete(h);
	shipper__stop(sh, 0);
	snprintf(path, sizeof(path), "%s/test.log", dir);
	log = unit__read_file(path, NULL);
	ASSERT_STREQ(log, "dest/s-1-1.00000000.json 2\ndest/s-1-1.00000001.json 2\n",
		     "a line per batch taken");
	free(log);
	/* a new start sends only what the log does not name */
	put_batch(dir, "s-1-1.00000002.json", "{}");
	sh = start(dir, &d2, 1);
	if (ASSERT_OK_PTR(sh, "restart")) {
		ASSERT_TRUE(wait_idle(sh), "idle");
		ASSERT_EQ(d2.nsent, 1, "the batch written while it was down, alone");
		ASSERT_STREQ(d2.sent[0], "s-1-1.00000002.json", "that one");
		shipper__stop(sh, 0);
	}
out:
	unit__rm_rf(dir);
}

static void groups(void)
{
	struct dest d = { 0 };
	char dir[256], path[512], name[64];
	struct shipper *sh;
	cJSON *h;

	if (!unit__mkdtemp(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/spool", dir);
	mkdir(path, 0700);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "s-1-1.%08d.json", i);
		put_batch(dir, name, i == 5 ? "{\"bad\":1}" : "{}");
	}
	sh = start(dir, &d, 4);	/* all ten are an earlier run's */
	if (!ASSERT_OK_PTR(sh, "start"))
		goto out;
	ASSERT_TRUE(wait_idle(sh), "idle");
	ASSERT_EQ(d.max_group, 4, "groups of 4 at most");
	ASSERT_EQ(d.nsent, 9, "all but the bad one");
	for (size_t i = 1; i < d.nsent; i++)
		ASSERT_LT(strcmp(d.sent[i - 1], d.sent[i]), 0, "in order");
	h = shipper__health(sh);
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "rejected")), 1, "rejected");
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "sent")), 9, "sent");
	cJSON_Delete(h);
	shipper__stop(sh, 0);
out:
	unit__rm_rf(dir);
}

static void backoff(void)
{
	uint64_t prev = 0;

	ASSERT_EQ(shipper__backoff_ns(1, 0, 0, false), 125000000, "0.25 s, its lower half");
	ASSERT_EQ(shipper__backoff_ns(1, 0.999, 0, false) / 1000000, 249, "its upper end");
	for (unsigned int n = 1; n < 12; n++) {
		uint64_t b = shipper__backoff_ns(n, 0.5, 0, false);

		ASSERT_GE(b, prev, "never shorter");
		ASSERT_LE(b, 4000000000ull, "4 s at most");
		prev = b;
	}
	ASSERT_EQ(shipper__backoff_ns(20, 0, 0, false), 2000000000ull, "the cap's lower half");
	ASSERT_EQ(shipper__backoff_ns(20, 0.9, 0, true), 500000000, "draining: every 0.5 s");
	ASSERT_EQ(shipper__backoff_ns(1, 0, 3, true), 3000000000ull, "Retry-After, even then");
	ASSERT_EQ(shipper__backoff_ns(1, 0, 3600, false), 60000000000ull, "capped at a minute");
}

int main(void)
{
	RUN_TEST(retries_then_restart);
	RUN_TEST(groups);
	RUN_TEST(backoff);
	return unit__done();
}
