/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_WATCHDOG_H
#define __CIRRON_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * `run` holds a traced process stopped (SIGSTOP from BPF) for the moment it takes to attach
 * to a new image (at exec) or library (at a load, only while the process has one thread);
 * attach and watch hold nothing.
 * If the observer dies then (SIGKILL, OOM), nobody would send the SIGCONT. The watchdog is
 * a small process that waits on a pipe; when the observer dies without saying goodbye, it
 * resumes every stopped process of the command's tree (`run`) and every stopped process
 * the observer traced (a table it shares with the observer).
 */
struct watchdog {
	pid_t pid;
	int fd;		/* write end; closing it without watchdog__disarm() triggers the rescue */
	pid_t *traced;	/* shared with the watchdog process: 0 for a free slot */
	size_t ntraced;
};

/* Starts the watchdog for the tree rooted at root (0: no tree). Returns 0 or -errno. */
int watchdog__start(struct watchdog *w, pid_t root);
/* Adds pid to the processes the watchdog resumes, or (traced false) takes it out. */
void watchdog__trace(struct watchdog *w, pid_t pid, bool traced);
/* A clean exit: the observer resumed its targets itself. */
void watchdog__disarm(struct watchdog *w);
/* Sends SIGCONT to root and its descendants that are stopped. Returns how many. */
int watchdog__resume_tree(pid_t root);

#endif
