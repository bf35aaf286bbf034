/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_FORKS_H
#define __CIRRON_FORKS_H

/* Whether pid runs its parent's image: forked and not exec'd since (DataLoader workers, a
 * fork context's pool), told by the same executable file (device and inode) and the same
 * command line as its parent's. Returns the parent's pid, or 0 (an exec'd child, a setproctitle
 * one, a process gone, its parent gone). */
int forks__parent_image(int pid);

#endif
