// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The targets a command starts with: `run` forks and execs the command, held until BPF follows
// it; `attach -p PID` takes PID and every process under it.
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "attach/attach.h"
#include "attach/observer.h"
#include "attach/watchdog.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "observe/gpu_companion.h"
#include "observe/launch.h"
#include "observe/registry.h"
#include "observe/sessions.h"
#include "observe/targets.h"
#include "proc/procfs.h"

/* The processes under pid (torchrun's workers): each followed, and a session if it maps a
 * known library. */
static void attach_descendants(struct observer *o, int pid)
{
	int kids[256], n = procfs__descendants(pid, kids, 256);

	for (int i = 0; i < n; i++) {
		struct target *t = registry__find(o, kids[i]) ? NULL : registry__add(o, kids[i]);

		if (!t)
			continue;
		t->mid_run = true;
		t->follow = true;	/* what the others exec may map a known library */
		if (!registry__track(o, t, false))
			targets__scan(o, t);
	}
}

int launch__attach(struct observer *o)
{
	int pid = o->opts->pid, n;
	uint64_t start_mono_ns;
	struct target *t;

	t = registry__add(o, pid);
	if (!t)
		return EXIT_FAILURE_RUNTIME;
	t->mid_run = true;
	t->follow = true;	/* a launcher's restarted workers, a script's subprocesses */
	if (registry__track(o, t, false))
		return EXIT_FAILURE_RUNTIME;
	start_mono_ns = clock__mono_ns();
	n = attach__scan(o, t);
	if (n == -ESRCH || !procfs__alive(pid)) {
		elog("process %d exited while attaching", pid);
		return EXIT_TARGET_GONE;
	}
	if (n < 0) {
		elog("cannot attach to process %d: %s", pid, strerror(-n));
		return EXIT_FAILURE_RUNTIME;
	}
	attach_descendants(o, pid);
	if (!target__has_signal_source(t)) {
		bool any = false;

		for (struct target *d = o->targets; d; d = d->next)
			any |= d->session != NULL;
		if (!any) {
			elog("process %d maps no library that probes/ knows (CUDA runtime, ...); "
			     "'cirron-probe doctor -p %d' shows what it maps", pid, pid);
			return EXIT_NO_KNOWN_LIBRARY;
		}
		return 0;	/* a launcher of no interest itself: its workers are traced */
	}
	if (sessions__start(o, t, start_mono_ns))
		return EXIT_FAILURE_RUNTIME;
	targets__arm(o, t);
	ilog("attached %zu probes to process %d", t->nprobes, pid);
	sessions__tag_launchers(o);
	return 0;
}

/* In the child, before exec: the command gets none of the observer's capabilities. The ambient
 * set (what a non-root observer was given, e.g. by systemd's AmbientCapabilities) and the
 * inheritable set are cleared, so the exec of a file without file capabilities leaves the
 * command with none; with --user (root only) it becomes that user, its groups included, and
 * setuid from root clears the permitted set too. The bounding set is left as it is: the
 * command may get what any process of its user gets (a file's own capabilities, ping's).
 * Returns 0 or errno. */
struct run_as {
	gid_t groups[256];	/* the user's groups, looked up before the fork (NSS) */
	int ngroups;
	char home[1024];
};

static int drop_privileges(const struct options *opts, const struct run_as *as)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (opts->run_user) {
		if (setgroups((size_t)as->ngroups, as->groups) || setresgid(opts->run_gid,
		    opts->run_gid, opts->run_gid) || setresuid(opts->run_uid, opts->run_uid,
		    opts->run_uid))
			return errno;
		/* as su (without -l) leaves them: the user's own */
		if (as->home[0])
			setenv("HOME", as->home, 1);
		setenv("USER", opts->run_user, 1);
		setenv("LOGNAME", opts->run_user, 1);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return errno;	/* EINVAL: a kernel before 4.3, no ambient set */
	if (syscall(SYS_capget, &hdr, data))
		return errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data))
		return errno;
	return 0;
}

/* The signals loop.c takes over, in the order of its inherited_sa. */
static const int own_signals[] = { SIGINT, SIGTERM, SIGPIPE };

/* run: the child waits on a pipe until BPF follows it, then execs; the exec stops it
 * (SIGSTOP from BPF) until its image is probed, so nothing runs unobserved. */
int launch__run(struct observer *o, const struct sigaction inherited_sa[3])
{
	int go[2], status[2], child_err = 0;
	struct run_as as = { .ngroups = 256 };
	struct target *t;
	ssize_t n;
	char companion_buf[4096];
	const char *why, *companion = gpu_companion__find(companion_buf, sizeof(companion_buf),
							  &why);

	if (o->opts->run_user) {
		struct passwd *pw = getpwuid(o->opts->run_uid);

		if (pw)
			snprintf(as.home, sizeof(as.home), "%s", pw->pw_dir);
		if (getgrouplist(o->opts->run_user, o->opts->run_gid, as.groups, &as.ngroups) < 0) {
			elog("cannot run %s as %s: more than 256 groups", o->opts->run_argv[0],
			     o->opts->run_user);
			return EXIT_FAILURE_RUNTIME;
		}
	}

	if (!companion)
		dlog("no CUPTI companion for %s: %s", o->opts->run_argv[0], why);
	if (pipe2(go, O_CLOEXEC) || pipe2(status, O_CLOEXEC))
		return EXIT_FAILURE_RUNTIME;
	o->child = fork();
	if (o->child < 0)
		return EXIT_FAILURE_RUNTIME;
	if (o->child == 0) {
		char c;

		close(go[1]);
		close(status[0]);
		for (int i = 0; i < 3; i++)
			sigaction(own_signals[i], &inherited_sa[i], NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		child_err = drop_privileges(o->opts, &as);
		gpu_companion__inject(companion);	/* GPU time (docs/gpu-time.md) */
		if (!child_err) {
			execvp(o->opts->run_argv[0], o->opts->run_argv);
			child_err = errno;
		}
		if (write(status[1], &child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	if (watchdog__start(&o->watchdog, o->child))
		wlog("no watchdog: if the observer is killed while %s is held at a library "
		     "load, it stays stopped", o->opts->run_argv[0]);
	t = registry__add(o, o->child);
	if (!t)
		return EXIT_FAILURE_RUNTIME;
	t->follow = t->stop_on_load = t->root_child = true;
	if (registry__track(o, t, false))
		return EXIT_FAILURE_RUNTIME;
	if (write(go[1], "g", 1) != 1)
		return EXIT_FAILURE_RUNTIME;
	close(go[1]);
	n = read(status[0], &child_err, sizeof(child_err));
	close(status[0]);
	if (n == sizeof(child_err)) {
		elog("cannot run %s: %s", o->opts->run_argv[0], strerror(child_err));
		waitpid(o->child, NULL, 0);
		o->child_reaped = true;
		return child_err == ENOENT ? 127 : 126;
	}
	return 0;
}

void launch__reap(struct observer *o)
{
	int status;
	struct target *t;

	if (o->child <= 0 || o->child_reaped || waitpid(o->child, &status, WNOHANG) != o->child)
		return;
	o->child_reaped = true;
	o->child_status = status;
	t = registry__find(o, o->child);
	if (t)
		targets__exited(o, t, status);
}
