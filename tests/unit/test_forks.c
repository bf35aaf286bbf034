// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A fork that did not exec runs its parent's image (proc/forks.h), on real processes: a
// fork of this test, the same binary exec'd with other arguments, another program, a child
// gone. Each waits for its event (a pipe's end), never for time.
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "proc/forks.h"
#include "unit.h"

/* A child that holds on until killed: forked only, or exec'd as argv (its exec closes the
 * pipe's close-on-exec end, which is how the parent knows it happened). */
static pid_t child(char *const argv[])
{
	int fds[2];
	char c;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (argv)
			execv(argv[0], argv);
		else
			(void)!write(fds[1], "x", 1);	/* forked: say so */
		pause();
		_exit(0);
	}
	close(fds[1]);
	(void)!read(fds[0], &c, 1);	/* a byte (fork) or the end (exec) */
	close(fds[0]);
	return pid;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_fork_runs_its_parents_image(void)
{
	pid_t pid = child(NULL);

	if (!ASSERT_GT(pid, 0, "fork"))
		return;
	ASSERT_EQ(forks__parent_image(pid), getpid(), "a fork runs its parent's image");
	end(pid);
	ASSERT_EQ(forks__parent_image(pid), 0, "a child gone");
}

static void test_exec_runs_another(void)
{
	char self[] = "/proc/self/exe", arg[] = "--hold", sleep_bin[] = "/bin/sleep", secs[] = "60";
	char *same[] = { self, arg, NULL }, *other[] = { sleep_bin, secs, NULL };
	pid_t a = child(same), b = child(other);

	if (ASSERT_GT(a, 0, "exec of the same binary")) {
		ASSERT_EQ(forks__parent_image(a), 0, "the same file, other arguments: exec'd");
		end(a);
	}
	if (ASSERT_GT(b, 0, "exec of another program")) {
		ASSERT_EQ(forks__parent_image(b), 0, "another program");
		end(b);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--hold")) {	/* the exec'd child above */
		pause();
		return 0;
	}
	RUN_TEST(test_fork_runs_its_parents_image);
	RUN_TEST(test_exec_runs_another);
	return unit__done();
}
