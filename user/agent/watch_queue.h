/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_WATCH_QUEUE_H
#define __CIRRON_WATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* watch: the processes to look at, and what became of them.
 *
 * A link-map change (EV_WATCH_LOAD) only notes the pid here; the loader looks at the noted
 * processes once per round, after it has drained both rings and ended the targets that
 * exited (a pid noted in the same round as its previous owner's exit is a new process, not
 * that target). A process looked at before it mapped torch is not marked in BPF: its next
 * link-map change (the dlopen of torch) notes it again.
 *
 * Events lost to a full control ring are not lost jobs: the BPF side counts them
 * (STAT_CONTROL_DROPS) and the next round looks at every process in /proc again. */
struct watch_queue {
	int *pending;		/* pids noted since the last round, each once */
	size_t npending, cap;
	uint64_t drops_seen;	/* STAT_CONTROL_DROPS at the last check */
	/* health (the agent's own counters) */
	uint64_t looked_at;	/* looks at a process not traced (one per round and pid) */
	uint64_t vanished;	/* processes gone before they could be looked at */
	uint64_t recovered;	/* processes traced only thanks to a rescan */
	uint64_t control_lost;	/* control events lost (ring full) */
	uint64_t rescans;	/* passes over /proc after lost events */
};

/* Notes pid for the next round (once however often it is noted). */
void watch_queue__note(struct watch_queue *d, int pid);
/* Calls look(ctx, pid) for every pid noted, in the order noted, then forgets them. */
void watch_queue__drain(struct watch_queue *d, void (*look)(void *ctx, int pid), void *ctx);
/* Control events lost since the last call (read from the BPF stats map, per-CPU sums);
 * 0 when none. */
uint64_t watch_queue__lost_since(struct watch_queue *d, int stats_fd);
void watch_queue__free(struct watch_queue *d);

#endif
