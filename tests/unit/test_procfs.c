// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "proc/procfs.h"
#include "unit.h"

static void parse_file_mapping(void)
{
	const char *line = "7f3a1c000000-7f3a1c021000 r-xp 0001a000 fd:01 1311426"
			   "                    /opt/my libs/lib torch (v2).so\n";
	struct proc_map m = {};

	if (!ASSERT_OK(procfs__parse_maps_line(line, &m), "parse"))
		return;
	ASSERT_U64_EQ(m.start, 0x7f3a1c000000ull, "start");
	ASSERT_U64_EQ(m.end, 0x7f3a1c021000ull, "end");
	ASSERT_U64_EQ(m.offset, 0x1a000, "offset");
	ASSERT_TRUE(m.exec, "exec");
	ASSERT_EQ(major(m.dev), 0xfd, "dev major");
	ASSERT_EQ(minor(m.dev), 0x01, "dev minor");
	ASSERT_U64_EQ(m.ino, 1311426, "ino");
	/* spaces inside the path are kept, the newline is not */
	ASSERT_STREQ(m.path, "/opt/my libs/lib torch (v2).so", "path");
	free(m.path);
}

static void parse_perms_and_dev(void)
{
	const char *line = "55d0c0a00000-55d0c0a01000 rw-p 00003000 103:0a 42 /usr/bin/python3.11";
	struct proc_map m = {};

	if (!ASSERT_OK(procfs__parse_maps_line(line, &m), "parse rw-p"))
		return;
	ASSERT_FALSE(m.exec, "exec of rw-p");
	ASSERT_EQ(major(m.dev), 0x103, "dev major");
	ASSERT_EQ(minor(m.dev), 0x0a, "dev minor");
	ASSERT_U64_EQ(m.ino, 42, "ino");
	ASSERT_STREQ(m.path, "/usr/bin/python3.11", "path without a newline");
	free(m.path);

	m = (struct proc_map){};
	if (!ASSERT_OK(procfs__parse_maps_line("1000-2000 --xs 00000000 00:1f 7 /x\n", &m),
		       "parse --xs"))
		return;
	ASSERT_TRUE(m.exec, "exec of --xs");
	free(m.path);
}

static void parse_rejects_non_files(void)
{
	static const char *const lines[] = {
		"7ffd5a3e1000-7ffd5a3e3000 r-xp 00000000 00:00 0                          [vdso]\n",
		"55d0c2b9e000-55d0c2bbf000 rw-p 00000000 00:00 0                          [heap]\n",
		"7ffd5a3a0000-7ffd5a3c1000 rw-p 00000000 00:00 0                   [stack]\n",
		"7f3a1c200000-7f3a1c400000 rw-p 00000000 00:00 0 \n",
		"7f3a1c200000-7f3a1c400000 rw-p 00000000 00:00 0\n",
		"7f3a1c200000-7f3a1c400000 rw-p 00000000 00:00 0",
		"",
		"garbage\n",
		"7f3a1c200000-7f3a1c400000 r-xp\n",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct proc_map m = { .path = NULL };
		char what[64];

		snprintf(what, sizeof(what), "line #%zu rejected", i);
		ASSERT_EQ(procfs__parse_maps_line(lines[i], &m), -EINVAL, what);
		ASSERT_NULL(m.path, "no path allocated");
	}
}

static void parse_deleted_file(void)
{
	const char *line = "7f0000000000-7f0000010000 r-xp 00000000 08:02 998877"
			   "  /usr/lib/libold.so (deleted)\n";
	struct proc_map m = {};

	if (!ASSERT_OK(procfs__parse_maps_line(line, &m), "parse deleted"))
		return;
	/* Kept verbatim: stripping the suffix would name whatever file replaced it. */
	ASSERT_STREQ(m.path, "/usr/lib/libold.so (deleted)", "path");
	ASSERT_U64_EQ(m.ino, 998877, "ino");
	ASSERT_TRUE(m.exec, "exec");
	free(m.path);
}

static long env_from(const char *block, size_t len, const char *name, long def)
{
	/* An exact-size heap copy: ASan catches any read past the block. */
	char *copy = malloc(len ? len : 1);
	long v;

	if (!copy)
		return LONG_MIN;
	memcpy(copy, block, len);
	v = procfs__env_long_from(copy, len, name, def);
	free(copy);
	return v;
}

#define ENV(lit) lit, sizeof(lit)	/* with the final NUL */
#define ENV_NO_NUL(lit) lit, sizeof(lit) - 1

static void env_long(void)
{
	ASSERT_EQ(env_from(ENV("PATH=/bin\0RANK=3\0WORLD_SIZE=8"), "RANK", -1), 3, "RANK");
	ASSERT_EQ(env_from(ENV("PATH=/bin\0RANK=3\0WORLD_SIZE=8"), "WORLD_SIZE", -1), 8,
		  "WORLD_SIZE (last)");
	ASSERT_EQ(env_from(ENV("PATH=/bin\0RANK=3"), "LOCAL_RANK", -7), -7, "absent");
	ASSERT_EQ(env_from(ENV("RANK=abc"), "RANK", -7), -7, "non-numeric");
	ASSERT_EQ(env_from(ENV("RANK=3x"), "RANK", -7), -7, "trailing junk");
	ASSERT_EQ(env_from(ENV("RANK="), "RANK", -7), -7, "empty value");
	ASSERT_EQ(env_from(ENV("RANK=-2"), "RANK", -7), -7, "negative");
	ASSERT_EQ(env_from(ENV("RANK=99999999999999999999999"), "RANK", -7), -7, "overflow");
	ASSERT_EQ(env_from(ENV("RANK"), "RANK", -7), -7, "no '='");
	ASSERT_EQ(env_from("", 0, "RANK", -7), -7, "empty block");
	/* A name that is a prefix or a suffix of another must not match it. */
	ASSERT_EQ(env_from(ENV("LOCAL_RANK=5\0RANK=2"), "RANK", -1), 2, "RANK after LOCAL_RANK");
	ASSERT_EQ(env_from(ENV("LOCAL_RANK=5\0RANK=2"), "LOCAL_RANK", -1), 5, "LOCAL_RANK");
	ASSERT_EQ(env_from(ENV("RANKS=9\0RANK=1"), "RANK", -1), 1, "RANKS is not RANK");
	ASSERT_EQ(env_from(ENV("LOCAL_RANK=5"), "RANK", -1), -1, "only LOCAL_RANK");
	/* /proc/PID/environ's last entry may lack its NUL (a truncated read) */
	ASSERT_EQ(env_from(ENV_NO_NUL("A=1\0RANK=4"), "RANK", -1), 4, "last entry, no NUL");
	ASSERT_EQ(env_from(ENV_NO_NUL("RANK=12"), "RANK", -1), 12, "only entry, no NUL");
	ASSERT_EQ(env_from(ENV_NO_NUL("A=1\0RANK"), "RANK", -1), -1, "bare name, no NUL");
	/* the block may end in the middle of the number: read only what is there */
	ASSERT_EQ(env_from("RANK=12345", 7, "RANK", -1), 12, "value cut by len");
}

/* Waits until pid shows in /proc as running the program named comm (after its exec). */
static bool wait_comm(int pid, const char *comm)
{
	char buf[64];

	for (int i = 0; i < 500; i++) {
		if (!procfs__comm(pid, buf, sizeof(buf)) && !strcmp(buf, comm))
			return true;
		usleep(10000);
	}
	return false;
}

static void env_long_of_a_process(void)
{
	char *const argv[] = { "sleep", "30", NULL };
	char *const envp[] = { "PATH=/usr/bin:/bin", "LOCAL_RANK=1", "RANK=6", "WORLD_SIZE=16",
			       NULL };
	int status;
	pid_t pid = fork();

	if (!ASSERT_GE(pid, 0, "fork"))
		return;
	if (pid == 0) {
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	if (ASSERT_TRUE(wait_comm(pid, "sleep"), "child exec'd sleep")) {
		ASSERT_EQ(procfs__env_long(pid, "RANK", -1), 6, "RANK");
		ASSERT_EQ(procfs__env_long(pid, "LOCAL_RANK", -1), 1, "LOCAL_RANK");
		ASSERT_EQ(procfs__env_long(pid, "WORLD_SIZE", -1), 16, "WORLD_SIZE");
		ASSERT_EQ(procfs__env_long(pid, "MASTER_PORT", 29500), 29500, "unset");
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_EQ(procfs__env_long(pid, "RANK", -3), -3, "reaped process");
}

static void alive(void)
{
	int pipefd[2], status;
	siginfo_t si = {};
	char proc[64];
	struct stat st;
	pid_t pid;

	ASSERT_EQ(procfs__alive(getpid()), 1, "self");
	if (!ASSERT_OK(pipe(pipefd), "pipe"))
		return;
	pid = fork();
	if (!ASSERT_GE(pid, 0, "fork"))
		return;
	if (pid == 0) {
		char c;

		/* comm with spaces and parentheses must not confuse the stat parser */
		prctl(PR_SET_NAME, "a) Z (b", 0, 0, 0);
		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) == 0 ? 0 : 1);
	}
	close(pipefd[0]);
	/* the child blocks in read() until we close the pipe */
	ASSERT_EQ(procfs__alive(pid), 1, "blocked child");
	if (ASSERT_TRUE(wait_comm(pid, "a) Z (b"), "child renamed"))
		ASSERT_EQ(procfs__alive(pid), 1, "child with a tricky comm");
	close(pipefd[1]);

	/* exited, not reaped: a zombie */
	if (ASSERT_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), "waitid WNOWAIT")) {
		snprintf(proc, sizeof(proc), "/proc/%d", pid);
		ASSERT_OK(stat(proc, &st), "zombie still in /proc");
		ASSERT_EQ(procfs__alive(pid), 0, "zombie");
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "reap");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status");
	ASSERT_EQ(procfs__alive(pid), 0, "reaped child");
	ASSERT_EQ(procfs__alive(0x3ffffff0), 0, "pid that never existed");
}

static uint64_t uptime_ticks(void)
{
	double up = 0;
	FILE *f = fopen("/proc/uptime", "re");

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return (uint64_t)(up * (double)sysconf(_SC_CLK_TCK));
}

static void start_ticks(void)
{
	uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK), self, child = 0, now;
	int pipefd[2], status;
	pid_t pid;

	self = procfs__start_ticks(getpid());
	now = uptime_ticks();
	ASSERT_NEQ(self, 0, "self");
	/* this process started moments ago */
	ASSERT_LE(self, now + 1, "self not in the future");
	ASSERT_GE(self + 600 * hz, now, "self started within 10 minutes");
	ASSERT_EQ(procfs__start_ticks(0x3ffffff0), 0, "missing pid");

	if (!ASSERT_OK(pipe(pipefd), "pipe"))
		return;
	pid = fork();
	if (!ASSERT_GE(pid, 0, "fork"))
		return;
	if (pid == 0) {
		char c;

		prctl(PR_SET_NAME, "x) R 1 2 3 (y", 0, 0, 0);
		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) == 0 ? 0 : 1);
	}
	close(pipefd[0]);
	ASSERT_TRUE(wait_comm(pid, "x) R 1 2 3 (y"), "child renamed");
	child = procfs__start_ticks(pid);
	close(pipefd[1]);
	waitpid(pid, &status, 0);
	ASSERT_GE(child, self, "child started after us");
	ASSERT_LE(child, uptime_ticks() + 1, "child not in the future");
	ASSERT_LE(child - self, 600 * hz, "child start near ours");
}

static void comm(void)
{
	char buf[16];

	if (!ASSERT_OK(procfs__comm(getpid(), buf, sizeof(buf)), "comm"))
		return;
	ASSERT_STREQ(buf, "test_procfs", "comm of self");
	ASSERT_ERR(procfs__comm(0x3ffffff0, buf, sizeof(buf)), "comm of a missing pid");
}

static void host_path(void)
{
	uintptr_t fn = (uintptr_t)&host_path;
	struct proc_maps maps;
	char buf[PATH_MAX];
	struct stat st;
	bool found = false;

	if (!ASSERT_OK(procfs__read_maps(getpid(), &maps), "read_maps"))
		return;
	for (size_t i = 0; i < maps.n; i++) {
		struct proc_map m = maps.v[i];

		if (fn < m.start || fn >= m.end)
			continue;
		found = true;
		/* the same root: the maps path itself */
		ASSERT_OK(procfs__host_path(getpid(), &m, buf, sizeof(buf)), "host_path");
		ASSERT_STREQ(buf, m.path, "own root: the path as mapped");
		/* a path that is not the file (as a chroot's would be): map_files finds it */
		m.path = "/nonexistent/elsewhere";
		ASSERT_OK(procfs__host_path(getpid(), &m, buf, sizeof(buf)), "host_path fallback");
		ASSERT_OK(stat(buf, &st), "fallback path opens");
		ASSERT_EQ(st.st_ino, maps.v[i].ino, "fallback is the same file");
		/* a file that is not mapped there at all */
		m.ino++;
		ASSERT_ERR(procfs__host_path(getpid(), &m, buf, sizeof(buf)), "wrong inode");
	}
	ASSERT_TRUE(found, "this function's mapping");
	procfs__free_maps(&maps);
}

static void read_maps_self(void)
{
	char exe[PATH_MAX];
	uintptr_t fn = (uintptr_t)&read_maps_self;
	struct proc_maps maps;
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	bool found = false;

	if (!ASSERT_GT(n, 0, "readlink /proc/self/exe"))
		return;
	exe[n] = 0;
	if (!ASSERT_OK(stat(exe, &st) ? -errno : 0, "stat exe"))
		return;
	if (!ASSERT_OK(procfs__read_maps(getpid(), &maps), "read_maps"))
		return;
	ASSERT_GT(maps.n, 2, "file mappings");
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];

		ASSERT_TRUE(m->path && m->path[0] == '/', "only file mappings");
		if (m->start > fn || fn >= m->end)
			continue;
		found = true;
		ASSERT_STREQ(m->path, exe, "mapping of our code");
		ASSERT_TRUE(m->exec, "our code is executable");
		ASSERT_U64_EQ(m->ino, st.st_ino, "inode");
		ASSERT_U64_EQ(m->dev, st.st_dev, "device");
	}
	ASSERT_TRUE(found, "a mapping holds this function");
	procfs__free_maps(&maps);
	ASSERT_EQ(maps.n, 0, "freed");
	ASSERT_EQ(procfs__read_maps(0x3ffffff0, &maps), -ENOENT, "missing pid");
}

/* A parent of a CLONE_VFORK child waits killable (only a fatal signal wakes it): a SIGSTOP
 * sent meanwhile stays pending, the state not T, as a probe's SIGSTOP does until its thread
 * returns to user space. The watchdog must see it (user/attach/watchdog.c). */
static void stop_pending(void)
{
	int go[2], status = -1;
	char state = 0;
	int ppid;
	pid_t a;

	if (!ASSERT_OK(pipe(go) ? -errno : 0, "pipe"))
		return;
	a = fork();
	if (a == 0) {
		/* no CLONE_VM: the child has a copy to run read() in; the parent still waits */
		long b = syscall(SYS_clone, CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
		char c;

		if (b == 0)
			_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
		_exit(b > 0 && waitpid((pid_t)b, &status, 0) == b && status == 0 ? 0 : 2);
	}
	close(go[0]);
	for (int i = 0; i < 5000 && !(state == 'D' || state == 'T'); i++) {
		usleep(1000);
		if (procfs__stat(a, &state, &ppid))
			break;
	}
	ASSERT_EQ(state, 'D', "the vfork parent waits killable");
	ASSERT_FALSE(procfs__stop_pending(a), "nothing pending yet");
	kill(a, SIGSTOP);
	ASSERT_TRUE(procfs__stop_pending(a), "SIGSTOP pending");
	ASSERT_OK(procfs__stat(a, &state, &ppid), "stat");
	ASSERT_EQ(state, 'D', "not stopped yet");
	kill(a, SIGCONT);
	ASSERT_FALSE(procfs__stop_pending(a), "SIGCONT discards it");
	ASSERT_EQ(write(go[1], "x", 1), 1, "release the child");
	close(go[1]);
	ASSERT_EQ(waitpid(a, &status, 0), a, "waitpid");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "it ran to its end");
}

int main(void)
{
	RUN_TEST(parse_file_mapping);
	RUN_TEST(parse_perms_and_dev);
	RUN_TEST(parse_rejects_non_files);
	RUN_TEST(parse_deleted_file);
	RUN_TEST(env_long);
	RUN_TEST(env_long_of_a_process);
	RUN_TEST(alive);
	RUN_TEST(start_ticks);
	RUN_TEST(comm);
	RUN_TEST(host_path);
	RUN_TEST(read_maps_self);
	RUN_TEST(stop_pending);
	return unit__done();
}
