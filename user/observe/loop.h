/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_LOOP_H
#define __CIRRON_OBSERVE_LOOP_H

struct options;

/* The attach, run and watch commands: the observer's loop. Returns the process exit code. */
int loop__main(const struct options *opts);

#endif
