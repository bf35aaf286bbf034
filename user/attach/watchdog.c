// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>
#include "attach/watchdog.h"
#include "cirron.h"
#include "proc/procfs.h"

static int in_tree(pid_t pid, pid_t root)
{
	char state;
	int ppid;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		if (pid == root)
			return 1;
		if (procfs__stat(pid, &state, &ppid))
			return 0;
		pid = ppid;
	}
	return 0;
}

/* Stopped, or about to be: a probe's SIGSTOP (bpf_send_signal) stops a process only when
 * its thread next returns to user space, which may come after the observer died. SIGCONT
 * also discards a pending SIGSTOP. */
static bool stopped(pid_t pid)
{
	char state;
	int ppid;

	return !procfs__stat(pid, &state, &ppid) && (state == 'T' || procfs__stop_pending(pid));
}

/* The observer's BPF links go with its files, when its last thread exits; a probe may stop
 * a process until then. Its children (this one) get another parent only after that (the
 * kernel's exit_notify follows exit_files): from then on nothing stops the tree again. */
static void wait_observer_gone(pid_t observer)
{
	while (getppid() == observer)
		usleep(1000);
}

int watchdog__resume_tree(pid_t root)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || !stopped(pid))
			continue;
		if (in_tree(pid, root) && !kill(pid, SIGCONT))
			n++;
	}
	closedir(d);
	return n;
}

static void resume_traced(const struct watchdog *w)
{
	for (size_t i = 0; i < w->ntraced; i++)
		if (w->traced[i] > 0 && stopped(w->traced[i]))
			kill(w->traced[i], SIGCONT);
}

void watchdog__trace(struct watchdog *w, pid_t pid, bool traced)
{
	size_t free_slot = w->ntraced;

	if (!w->traced)
		return;
	for (size_t i = 0; i < w->ntraced; i++) {
		if (w->traced[i] == pid) {
			if (!traced)
				w->traced[i] = 0;
			return;
		}
		if (!w->traced[i] && free_slot == w->ntraced)
			free_slot = i;
	}
	if (traced && free_slot < w->ntraced)
		w->traced[free_slot] = pid;
}

int watchdog__start(struct watchdog *w, pid_t root)
{
	size_t size = CIRRON_MAX_TARGETS * sizeof(pid_t);
	pid_t observer;
	ssize_t n;
	int p[2];
	char c;

	w->pid = -1;
	w->fd = -1;
	w->traced = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->traced == MAP_FAILED) {
		w->traced = NULL;
		return -errno;
	}
	w->ntraced = CIRRON_MAX_TARGETS;
	observer = getpid();
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (w->pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* Hold nothing of the observer's: not its BPF links (they must go when it dies),
		 * not its stdout/stderr pipes. */
		if (null >= 0)
			for (int fd = 0; fd < 3; fd++)
				dup2(null, fd);
		for (int fd = 3; fd < p[0]; fd++)
			close(fd);
		close_range((unsigned int)p[0] + 1, ~0U, 0);
		signal(SIGINT, SIG_IGN);	/* a Ctrl-C for the job is not for us */
		signal(SIGTERM, SIG_IGN);
		prctl(PR_SET_NAME, "cirron-watchdog");
		while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n == 1 && c == 'q')
			_exit(0);	/* disarmed: the observer resumed its targets */
		wait_observer_gone(observer);
		if (root > 0)
			watchdog__resume_tree(root);
		resume_traced(w);
		_exit(0);
	}
	close(p[0]);
	w->fd = p[1];
	return 0;
}

void watchdog__disarm(struct watchdog *w)
{
	if (w->traced)
		munmap(w->traced, w->ntraced * sizeof(pid_t));
	w->traced = NULL;
	if (w->fd < 0)
		return;
	if (write(w->fd, "q", 1) != 1)
		kill(w->pid, SIGKILL);
	close(w->fd);
	waitpid(w->pid, NULL, 0);
	w->fd = -1;
}
