/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * Tree inputs recorded from real runs (CIRRON_DEBUG_TREE=1: "TREE pid=P tid=T ts=NS KIND
 * name=NAME obj=HEX val=V", one line per input of the training process) fed again through a
 * torch tree of torch_tree_world.h: for tests of the rules on what real jobs sent. The same
 * format as test_torch_tree_replay.c reads.
 */
#ifndef __CIRRON_TREE_REPLAY_H
#define __CIRRON_TREE_REPLAY_H

#include <stdio.h>
#include "torch_tree_world.h"

static const char *const replay_kinds[] = {
	[TI_SCOPE_ENTER] = "SCOPE+", [TI_SCOPE_EXIT] = "SCOPE-", [TI_BACKWARD_ENTER] = "BWD+",
	[TI_BACKWARD_EXIT] = "BWD-", [TI_GRAD_MODE] = "GRAD", [TI_FORWARD_ENTER] = "FWD+",
	[TI_FORWARD_EXIT] = "FWD-", [TI_LOST] = "LOST", [TI_COMPILE_ENTER] = "COMPILE+",
	[TI_COMPILE_EXIT] = "COMPILE-", [TI_COMPILED] = "COMPILED", [TI_SCALER_UPDATE] = "SCALER",
};

/* One line into ev (its name copied to name); false for a line that is no tree input. */
static inline bool replay_parse(char *line, struct tree_event *ev, char *name, size_t size)
{
	char *kind, *n, *o;
	unsigned int tid;
	unsigned long long ts;
	int off = 0;

	if (sscanf(line, "TREE pid=%*d tid=%u ts=%llu %n", &tid, &ts, &off) < 2 || !off)
		return false;
	kind = line + off;
	n = strstr(kind, " name=");
	o = n ? strstr(n, " obj=") : NULL;
	if (!o)
		return false;
	*n = 0;
	memset(ev, 0, sizeof(*ev));
	ev->kind = (enum tree_input)-1;
	for (size_t k = 0; k < sizeof(replay_kinds) / sizeof(replay_kinds[0]); k++)
		if (replay_kinds[k] && !strcmp(kind, replay_kinds[k]))
			ev->kind = (enum tree_input)k;
	if ((int)ev->kind < 0)
		return false;
	*o = 0;
	snprintf(name, size, "%s", n + 6);
	ev->name = strcmp(name, "-") ? name : NULL;
	ev->tid = tid;
	ev->ts_ns = ts;
	return sscanf(o + 1, "obj=%llx val=%d", (unsigned long long *)&ev->obj, &ev->value) == 2;
}

/* The whole file through a fresh world, then a clean exit: its spans in w. */
static inline bool replay_log(struct world *w, const char *file, bool frames_always)
{
	char line[512], name[256];
	FILE *f = fopen(file, "re");

	if (!ASSERT_OK_PTR(f, file))
		return false;
	world_init(w, 1000);
	w->t.frames_always = frames_always;
	while (fgets(line, sizeof(line), f)) {
		struct tree_event ev;

		line[strcspn(line, "\n")] = 0;
		if (!replay_parse(line, &ev, name, sizeof(name)))
			continue;
		w->ts = ev.ts_ns;
		torch_tree__feed(&w->t, &ev);
	}
	fclose(f);
	collect(w, true);
	return true;
}

#endif
