/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_ENV_H
#define __CIRRON_SNAP_ENV_H

struct options;
struct probe_set;
struct sym_cache;

/* What the snapshots need of the loader: the options, its caches, BPF's maps. */
struct snap_env {
	const struct options *opts;
	struct sym_cache *syms;
	const struct probe_set *probes;
	int states_fd, wakes_fd, roles_fd;	/* snap_states, snap_wakes, snap_roles (bpf/snap.h) */
	int copy_plans_fd, copies_fd;		/* snap_copy_plans, snap_copies */
	int stats_fd;		/* BPF's counters (ring-buffer drops) */
};

#endif
