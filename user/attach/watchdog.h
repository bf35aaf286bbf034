/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_WATCHDOG_H
#define __CIRRON_WATCHDOG_H

#include <sys/types.h>

/*
 * `run` holds its targets stopped (SIGSTOP from BPF) for the moment it takes to attach to a
 * new image or library. If the observer dies then (SIGKILL, OOM), nobody would send the
 * SIGCONT. The watchdog is a small process that waits on a pipe; when the observer dies
 * without saying goodbye, it resumes every stopped process of the traced command's tree.
 */
struct watchdog {
	pid_t pid;
	int fd;		/* write end; closing it without watchdog__disarm() triggers the rescue */
};

/* Starts the watchdog for the tree rooted at root. Returns 0 or -errno. */
int watchdog__start(struct watchdog *w, pid_t root);
/* A clean exit: the observer resumed its targets itself. */
void watchdog__disarm(struct watchdog *w);
/* Sends SIGCONT to root and its descendants that are stopped. Returns how many. */
int watchdog__resume_tree(pid_t root);

#endif
