/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_LINK_REAPER_H
#define __CIRRON_LINK_REAPER_H

#include <stdatomic.h>
#include <stdbool.h>

struct bpf_link;

/* Destroys uprobe links on a thread of its own. Closing a uprobe's perf event takes the
 * breakpoint out at once, then waits 50-80 ms for RCU grace periods (uprobe_unregister_sync)
 * while holding the kernel's global event_mutex (perf_uprobe_destroy), which creating any
 * uprobe perf event needs too. Closed one after the other on the loader's thread, the ~20
 * links of a torch job kept the loader from reading events for 1-2 s; closed on other
 * threads while the loader attaches to the next job, every one of its perf_event_open
 * calls waited behind them. Either way a short job that started meanwhile was gone before
 * it was attached (issue 15). So links are closed here one at a time, and never while the
 * loader holds the reaper (link_reaper__hold) to attach: an attach waits for at most one
 * close in flight. Falls back to destroying here when no thread can be started. */
void link_reaper__destroy(struct bpf_link *link);
/* The same; *pending was incremented by the caller for this link and is decremented once
 * the link is gone (a probe id stays reserved until then, so that a link still being
 * closed never fires under the id of a probe attached since). */
void link_reaper__destroy_then(struct bpf_link *link, atomic_uint *pending);
/* Runs close(arg) on a reaper thread: serial (a perf link: one at a time, not while held, as
 * above) or not (a uprobe_multi link: no event_mutex, closed at once, in parallel). */
void link_reaper__run(void (*close)(void *arg), void *arg, bool serial);
/* While held (calls nest), no serial close starts: the loader attaches without waiting for the
 * event_mutex behind a queue of closes. */
void link_reaper__hold(void);
void link_reaper__release(void);
/* Waits until every link handed over is destroyed. */
void link_reaper__wait(void);
/* Links handed over and not destroyed yet. */
unsigned int link_reaper__in_flight(void);

#endif
