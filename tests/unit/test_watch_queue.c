// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// watch's queue of processes to look at, and the link reaper's bookkeeping (no BPF needed:
// a NULL link is "destroyed" at once).
#include "agent/watch_queue.h"
#include "attach/link_reaper.h"
#include "unit.h"

static int seen[16], nseen;

static void look(void *ctx, int pid)
{
	(void)ctx;
	if (nseen < 16)
		seen[nseen++] = pid;
}

/* A pid noted many times in a round is looked at once, in the order first noted. */
static void noted_once_in_order(void)
{
	struct watch_queue d = {};

	watch_queue__note(&d, 30);
	watch_queue__note(&d, 10);
	watch_queue__note(&d, 30);
	watch_queue__note(&d, 20);
	watch_queue__note(&d, 10);
	nseen = 0;
	watch_queue__drain(&d, look, NULL);
	ASSERT_EQ(nseen, 3, "looks");
	ASSERT_EQ(seen[0], 30, "first");
	ASSERT_EQ(seen[1], 10, "second");
	ASSERT_EQ(seen[2], 20, "third");
	ASSERT_EQ(d.npending, 0, "left");
	nseen = 0;
	watch_queue__drain(&d, look, NULL);
	ASSERT_EQ(nseen, 0, "nothing twice");
	watch_queue__note(&d, 30);	/* a later round looks at it again */
	watch_queue__drain(&d, look, NULL);
	ASSERT_EQ(nseen, 1, "next round");
	watch_queue__free(&d);
}

/* A crowd: thousands of pids in one round, all looked at, the memory given back after. */
static void crowd_round(void)
{
	struct watch_queue d = {};
	int n = 0;

	for (int pid = 1; pid <= 5000; pid++)
		watch_queue__note(&d, pid);
	ASSERT_EQ(d.npending, 5000, "noted");
	nseen = 0;
	watch_queue__drain(&d, look, &n);
	ASSERT_EQ(d.npending, 0, "drained");
	ASSERT_TRUE(d.pending == NULL, "memory given back");
	watch_queue__free(&d);
}

static void no_stats_map_no_loss(void)
{
	struct watch_queue d = {};

	ASSERT_EQ(watch_queue__lost_since(&d, -1), 0, "lost without a map");
	ASSERT_EQ(d.control_lost, 0, "counted");
	watch_queue__free(&d);
}

/* The pending count of a probe id drops to zero once its links are gone, held or not. */
static void reaper_counts_down(void)
{
	atomic_uint pending = 2;

	link_reaper__hold();
	link_reaper__destroy_then(NULL, &pending);
	link_reaper__destroy_then(NULL, &pending);
	link_reaper__release();
	link_reaper__wait();
	ASSERT_EQ(atomic_load(&pending), 0, "pending");
	ASSERT_EQ(link_reaper__in_flight(), 0, "in flight");
}

int main(void)
{
	RUN_TEST(noted_once_in_order);
	RUN_TEST(crowd_round);
	RUN_TEST(no_stats_map_no_loss);
	RUN_TEST(reaper_counts_down);
	return unit__done();
}
