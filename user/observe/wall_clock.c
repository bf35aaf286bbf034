// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The wall clock watched for steps (wall_clock.h). CLOCK_MONOTONIC runs at the rate NTP
// gives CLOCK_REALTIME (slewing moves both alike), so their offset moves only when the wall
// clock is set: an agent started at boot, before chrony's first step, would otherwise put
// every later job's spans that far off for as long as it runs.
#include <stdlib.h>
#include "attach/observer.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "observe/wall_clock.h"
#include "traced/target.h"
#include "tree/clock.h"

#define CHECK_EVERY_NS 1000000000ull
#define STEP_MIN_NS 1000000ll		/* a sampled offset is within a few us: a step */
#define SAMPLE_MAX_ERR_NS 100000ull	/* a sample this unsure (preempted) is not judged */

uint64_t wall_clock__sample(struct clock_map *c)
{
	if (test_hooks__get()->wall_step_file)
		clock__test_step(test_hooks__wall_step_ns());
	return clock_map__init(c);
}

void wall_clock__check(struct observer *o, uint64_t now_mono_ns)
{
	static uint64_t last;
	struct clock_map now;
	long long step;

	if (now_mono_ns - last < CHECK_EVERY_NS)
		return;
	last = now_mono_ns;
	if (wall_clock__sample(&now) > SAMPLE_MAX_ERR_NS)
		return;
	step = (long long)(now.wall_minus_mono_ns - o->clock.wall_minus_mono_ns);
	if (llabs(step) < STEP_MIN_NS)
		return;
	o->clock = now;
	wlog("the wall clock stepped by %+.3f s: sessions under way keep the clock they began "
	     "with (their health says how far it moved: wall_clock_step_ns), new ones take it "
	     "as it is now", (double)step / 1e9);
	for (struct target *t = o->targets; t; t = t->next)	/* new ones: sessions__start */
		if (t->session)
			t->clock_step_ns += step;
}
