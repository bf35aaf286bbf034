/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_LDSO_WATCH_H
#define __CIRRON_ATTACH_LDSO_WATCH_H

struct observer;
struct proc_map;

/* watch: probes the dynamic linker that pid maps at m in every process (ACT_DL_WATCH).
 * Returns 0, 1 if that file is probed already, or -errno. */
int ldso_watch__add(struct observer *o, int pid, const struct proc_map *m);
/* Detaches every dynamic linker's probe. */
void ldso_watch__remove_all(struct observer *o);

#endif
