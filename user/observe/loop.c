// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `attach`, `run` and `watch`: set up, poll the ring buffers until done or stopped, check
// for exits and hangs, flush batches on time, and detach cleanly.
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "attach/ldso_watch.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/py_sample.h"
#include "attach/skel.h"
#include "attach/watchdog.h"
#include "attach/write_hook.h"
#include "common/caps.h"
#include "common/exit_codes.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "observe/discovery.h"
#include "observe/dispatch.h"
#include "observe/launch.h"
#include "observe/loop.h"
#include "observe/registry.h"
#include "observe/sessions.h"
#include "observe/setup.h"
#include "observe/targets.h"
#include "observe/tf_events.h"
#include "observe/wall_clock.h"
#include "sink/log_sink.h"
#include "sink/metrics.h"
#include "ship/ship_outputs.h"
#include "proc/procfs.h"
#include "proc/sysstat.h"
#include "snap/snapshots.h"

static volatile sig_atomic_t stop_requested;
/* What SIGINT, SIGTERM and SIGPIPE were when we started: the command `run` starts gets
 * them back (launch.c), so it runs as it would without us (an ignored SIGINT stays ignored,
 * SIGPIPE is not ignored because we ignore it). */
static struct sigaction inherited_sa[3];

static void on_signal(int sig)
{
	stop_requested = sig;
}

/* A target's snapshot read is due or under way: the loop turns faster. */
static bool snapshots_active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (snapshots__active(t))
			return true;
	return false;
}

/* Targets whose exit event came, or that vanished without one (e.g. missed while
 * attaching). */
static void check_alive(struct observer *o)
{
	struct target *t, *next;

	for (t = o->targets; t; t = next) {
		next = t->next;
		if (t->pid == o->child && !o->child_reaped)
			continue;	/* launch__reap gets its exact status */
		if (t->exited || !registry__alive(t)) {
			ring_buffer__consume(o->rb);
			if (registry__find(o, t->pid) != t)
				continue;
			targets__vanished(o, t);
			next = o->targets;	/* the list may have changed */
		}
	}
}

/* A span open far longer than usual: one warning line, and a record in the spool now (the
 * job may be killed next). */
static void check_hangs(struct observer *o)
{
	char line[1024];

	for (struct target *t = o->targets; t; t = t->next) {
		uint64_t now = clock_map__now(&t->clock);
		const struct torch_tree *tr = &t->tree;
		/* A batch being loaded is not a span until the tree knows what it is for */
		struct span loading = { .name = "data_load", .index = -1, .status = SPAN_OPEN,
					.start_ns = tr->pending_start,
					.parent_id = tr->epoch ? tr->epoch->id : 0 };
		bool pending = tr->pending && !tr->pending_end;
		cJSON *rec;

		/* After the loader ran out, the last step stays open until the next epoch's
		 * first batch (validation or a checkpoint in between is not that step hanging),
		 * and a __next__ that returned but nothing confirmed yet may have been the
		 * loop's last (StopIteration): neither is judged. */
		if (!t->session || (tr->train_exhausted && !pending) ||
		    (tr->pending && tr->pending_end))
			continue;
		rec = hang__check(&t->report.hang, t->session, pending ? &loading : NULL, now, line,
				  sizeof(line));
		if (!rec)
			continue;
		wlog("pid %d: %s", t->pid, line);
		if (!t->report.hangs)
			t->report.hangs = cJSON_CreateArray();
		cJSON_AddItemToArray(t->report.hangs, rec);
		metrics__hang(o->metrics, t->session);
		sessions__flush(o, t, false);
	}
}

/* --sys-interval: one sample per traced process, for its next batch and --metrics; when not
 * due, only of sessions that have none yet (a run shorter than the interval still gets one). */
static void sample_sys(struct observer *o, bool due)
{
	struct sys_sample node = {}, s;
	bool have_node = false;

	for (struct target *t = o->targets; t; t = t->next) {
		cJSON *js;

		if (!t->session || (!due && t->report.sys_sampled))
			continue;
		if (!have_node) {
			sysstat__node(&node);
			have_node = true;
		}
		s = node;
		s.ts_ns = clock_map__now(&t->clock);
		if (sysstat__proc(t->pid, &s))
			continue;	/* gone: its exit is handled elsewhere */
		t->report.sys_sampled = true;
		js = sysstat__to_json(&s);
		metrics__sys(o->metrics, t->session, js);
		if (!t->report.sys)
			t->report.sys = cJSON_CreateArray();
		cJSON_AddItemToArray(t->report.sys, js);
	}
}

/* Would the kernel let us read pid as its owner: the same user and group (ptrace's rule for
 * /proc/PID/mem, environ, root), not a process made undumpable (/proc/PID is root's then). */
static bool own_process(int pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return !stat(path, &st) && st.st_uid == geteuid() && st.st_gid == getegid();
}

/* Root, or the capabilities of deploy/capabilities: those every command needs, and for watch
 * and another user's process those that read other users' processes. Checked before anything
 * is created or loaded. */
static int check_permission(const struct options *opts)
{
	bool others = opts->cmd == CMD_WATCH ||
		      (opts->cmd == CMD_ATTACH && !own_process(opts->pid));
	char missing[256], whom[64] = "";

	if (opts->run_user && geteuid() != 0) {
		elog("no permission to run the command as %s: --user needs root (sudo)",
		     opts->run_user);
		return EXIT_NO_PERMISSION;
	}
	if (!caps__missing(others, missing, sizeof(missing)))
		return 0;
	if (opts->cmd == CMD_WATCH)
		snprintf(whom, sizeof(whom), " every user's processes");
	else if (others)
		snprintf(whom, sizeof(whom), " process %d of another user", opts->pid);
	elog("no permission to trace%s: run as root, or grant %s (the set is in "
	     "deploy/capabilities; 'cirron-probe doctor' shows it)", whom, missing);
	return EXIT_NO_PERMISSION;
}

static bool done(struct observer *o)
{
	if (o->opts->cmd == CMD_WATCH)
		return false;	/* until stopped */
	if (o->opts->cmd == CMD_RUN)
		return o->child_reaped && !o->targets;
	return !o->targets;
}

/* --output s3://, otlp: their shippers, on the spool just opened. */
static int start_upload(struct observer *o, const struct options *opts)
{
	char why[600];

	o->ship = ship_outputs__start(opts, o->host, o->spool.dirfd, why, sizeof(why));
	if (!o->ship) {
		elog("--output: %s", why);
		return EXIT_FAILURE_RUNTIME;
	}
	o->spool.on_written = ship_outputs__written;
	o->spool.on_written_ctx = o->ship;
	return 0;
}

int loop__main(const struct options *opts)
{
	struct observer *o = calloc(1, sizeof(*o));
	uint64_t start, last_flush, flush_ns = (uint64_t)(opts->flush_interval_s * 1e9);
	uint64_t last_sys = 0, sys_ns = (uint64_t)(opts->sys_interval_s * 1e9);
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (!o)
		return EXIT_FAILURE_RUNTIME;
	/* before anything is made: the symbol cache, the spool */
	err = check_permission(opts);
	if (err) {
		free(o);
		return err;
	}
	err = setup__init(o, opts);
	if (!err && opts->cmd == CMD_WATCH &&
	    watch__init(&o->watch, &o->probes, opts->match))
		err = EXIT_FAILURE_RUNTIME;
	if (err)
		goto out;
	if (opts->cmd == CMD_ATTACH && !procfs__alive(opts->pid)) {
		elog("no such process: %d", opts->pid);
		err = EXIT_NO_SUCH_PROCESS;
		goto out;
	}
	if (opts->sinks & SINK_SPOOL) {
		err = spool__open(&o->spool, opts->path, opts->max_spool_bytes);
		if (err) {
			const char *lvl = o->spool.refused;

			elog("cannot write spool under %s: %s%s%s", opts->path, lvl,
			     *lvl ? ": " : "", fs__strerror(err));
			err = EXIT_SPOOL_UNWRITABLE;
			goto out;
		}
	}
	if (opts->s3_url || opts->otlp_url) {
		err = start_upload(o, opts);
		if (err)
			goto out;
	}
	if (opts->sinks & SINK_LOG) {
		err = log_sink__open(opts->syslog_socket);
		if (err) {
			elog("cannot reach syslog at %s: %s", opts->syslog_socket, strerror(-err));
			err = EXIT_FAILURE_RUNTIME;
			goto out;
		}
	}
	if (opts->metrics_addr) {	/* before anything is attached: a busy port stops us here */
		o->metrics = metrics__listen(opts->metrics_ip, opts->metrics_port,
					     opts->metrics_grace_s, &err);
		if (!o->metrics) {
			elog("cannot listen on --metrics %s: %s", opts->metrics_addr, strerror(-err));
			err = EXIT_METRICS_LISTEN;
			goto out;
		}
		elog("metrics at http://%.*s:%u/metrics",
		     (int)(strrchr(opts->metrics_addr, ':') - opts->metrics_addr),
		     opts->metrics_addr, metrics__port(o->metrics));
	}
	err = skel__load(o, dispatch__event);
	if (err)
		goto out;
	sigaction(SIGINT, &sa, &inherited_sa[0]);
	sigaction(SIGTERM, &sa, &inherited_sa[1]);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &inherited_sa[2]);
	/* attach and watch hold no process, so they need no watchdog; `run` starts its own */
	if (opts->cmd == CMD_RUN)
		err = launch__run(o, inherited_sa);
	else if (opts->cmd == CMD_WATCH)
		err = discovery__start(o);
	else
		err = launch__attach(o);
	if (err)
		goto out;

	start = last_flush = clock__mono_ns();
	while (!stop_requested) {
		uint64_t now;

		err = ring_buffer__poll(o->rb, py_sample__active(o) || snapshots_active(o) ||
					       tf_events__reading(o) ? 2 : 100 /* ms */);
		/* High-rate events do not wake us (it would cost the target an IPI each):
		 * drain them on every round. */
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(o->rb);
		if (err < 0 && err != -EINTR) {
			elog("reading events failed: %s", strerror(-err));
			err = EXIT_FAILURE_RUNTIME;
			goto out;
		}
		/* first: a wakeup for a read came with this round */
		for (struct target *t = o->targets; t; t = t->next)
			snapshots__poll(&o->snap, t);
		tf_events__round(o);
		launch__reap(o);
		check_alive(o);
		discovery__round(o);
		check_hangs(o);
		now = clock__mono_ns();
		wall_clock__check(o, now);
		metrics__serve(o->metrics, now);
		if (sys_ns) {
			bool due = now - last_sys >= sys_ns;

			sample_sys(o, due);
			if (due)
				last_sys = now;
		}
		if (now - last_flush >= flush_ns) {
			for (struct target *t = o->targets; t; t = t->next)
				sessions__flush(o, t, false);
			last_flush = now;
		}
		if (done(o))
			break;
		if (opts->duration_s > 0 && now - start >= (uint64_t)(opts->duration_s * 1e9))
			break;
	}
	err = 0;
	if (stop_requested)
		ilog("%s: detaching", strsignal(stop_requested));
	/* Detach: what is still open stays open; a target `run` holds is let go (only `run`
	 * holds, and only a stopped process needs a SIGCONT). */
	ring_buffer__consume(o->rb);
	while (o->targets) {
		struct target *t = o->targets;
		char state = 0;
		int ppid;

		if (t->stop_on_load && !procfs__stat(t->pid, &state, &ppid) && state == 'T')
			registry__resume(o, t->pid);
		targets__end(o, t, "detach");
	}
	if (opts->cmd == CMD_WATCH)
		watch__summary(&o->watch);
	if (opts->cmd == CMD_RUN) {
		if (!o->any_session)
			wlog("no process of '%s' mapped a library that probes/ knows",
			     opts->run_argv[0]);
		if (!o->child_reaped && !stop_requested && waitpid(o->child, &o->child_status, 0) > 0)
			o->child_reaped = true;
		if (o->child_reaped && WIFEXITED(o->child_status))
			err = WEXITSTATUS(o->child_status);
		else if (o->child_reaped && WIFSIGNALED(o->child_status))
			err = 128 + WTERMSIG(o->child_status);
	}
out:
	setup__free(o);
	metrics__free(o->metrics);
	if (log_sink__dropped())
		wlog("--output log: %llu messages the syslog daemon did not take were dropped",
		     (unsigned long long)log_sink__dropped());
	log_sink__close();
	watchdog__disarm(&o->watchdog);	/* after the links are gone: nothing stops them now */
	watch__free(&o->watch);
	free(o);
	return err;
}
