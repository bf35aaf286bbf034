// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// peak_rss CMD [ARG...]: runs CMD with its output thrown away and prints "<peak RSS in KiB>
// <exit status>" of CMD alone: a process forked by Python already holds Python's pages before
// it execs, and its peak counts them; this one is small when it forks.
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status, fd;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: peak_rss CMD [ARG...]\n");
		return 64;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 1;
	printf("%ld %d\n", ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status));
	return 0;
}
