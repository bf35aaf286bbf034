// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Runs a command as a given pid: the pid of a process that ended, so that a test sees a pid
// reused at once instead of after a wraparound (pid_max, hours of process starts). Root
// only (clone3 with set_tid, Linux 5.5+). Waits for the command and exits as it did.
//
//   with_pid PID CMD [ARG...]
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t tid, child;
	struct clone_args ca = { .exit_signal = SIGCHLD };
	int status;

	if (argc < 3 || (tid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: with_pid PID CMD [ARG...]\n");
		return 64;
	}
	ca.set_tid = (uintptr_t)&tid;
	ca.set_tid_size = 1;
	child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (child < 0) {	/* EEXIST: someone has it; EPERM: not root */
		fprintf(stderr, "with_pid: cannot start a process as pid %d: %s\n", tid,
			strerror(errno));
		return 125;
	}
	if (child == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "with_pid: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return 125;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
