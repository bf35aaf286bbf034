/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_LINK_REAPER_H
#define __CIRRON_LINK_REAPER_H

struct bpf_link;

/* Destroys a uprobe link on a thread of its own. Closing a uprobe's perf event takes the
 * breakpoint out at once but then waits ~75 ms for RCU grace periods: closed one after
 * the other, an entry/return pair keeps the target trapping for the first one's wait, and
 * the loader stops reading events meanwhile. Falls back to destroying here. */
void link_reaper__destroy(struct bpf_link *link);
/* Waits until every link handed over is destroyed. */
void link_reaper__wait(void);

#endif
