// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `attach`, `run` and `watch`: load the BPF object, attach to the target(s), turn
// ring-buffer events into sessions and spans, flush batches to the sinks, and end cleanly
// on detach, target exit (any cause) or a signal.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "exit_codes.h"
#include "fsutil.h"
#include "link_reaper.h"
#include "log.h"
#include "observer.h"
#include "procfs.h"
#include "versions.h"
#include "watchdog.h"

#define FLUSH_AFTER_SPANS 4096	/* closed spans held before an early batch */

static volatile sig_atomic_t stop_requested;
/* What SIGINT, SIGTERM and SIGPIPE were when we started: the command `run` starts gets
 * them back, so it runs as it would without us (an ignored SIGINT stays ignored, SIGPIPE
 * is not ignored because we ignore it). */
static const int own_signals[] = { SIGINT, SIGTERM, SIGPIPE };
static struct sigaction inherited_sa[3];

static void on_signal(int sig)
{
	stop_requested = sig;
}

static struct target *find_target(struct observer *o, int pid)
{
	for (struct target *t = o->targets; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

static struct target *add_target(struct observer *o, int pid)
{
	struct target *t = target__new(pid);

	if (!t)
		return NULL;
	t->next = o->targets;
	o->targets = t;
	return t;
}

/* Per-kernel launch counts are keyed by pid: an exec'd image or a reused pid must not
 * inherit them. */
static void forget_kernels(struct observer *o, int pid)
{
	size_t n;
	struct kernel_key *keys = attrs__kernel_keys(o, pid, &n);

	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(o->kernels_fd, &keys[i]);
	free(keys);
}

static void remove_target(struct observer *o, struct target *t)
{
	struct target **pp;

	for (pp = &o->targets; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	bpf_map_delete_elem(o->targets_fd, &t->pid);
	bpf_map_delete_elem(o->cuda_fd, &t->pid);
	forget_kernels(o, t->pid);
	attach__detach(o, t);
	target__free(t);
}

/* Every closed span: its duration teaches hang detection what is usual; the stdout sink
 * prints it. */
static void on_span_closed(const struct session *s, const struct span *sp, void *ctx)
{
	struct target *t = ctx;
	char line[2048];

	(void)s;
	t->closed_since_flush++;
	hang__span_closed(&t->hang, sp);
	if (t->print_spans) {
		puts(span__format_line(sp, line, sizeof(line)));
		fflush(stdout);
	}
}

/* ---- session attributes ---- */

/* The CUDA counters carried by the anchor event being handled (snapshotted in BPF). */
static bool read_cuda_counters(void *ctx, uint64_t out[SESSION_NCOUNTERS])
{
	const struct target *t = ctx;

	memcpy(out, t->event_counters, sizeof(t->event_counters));
	return true;
}

/* torchrun and its kind: a process whose descendants carry RANK in their environment but
 * which has none itself launches ranks; it is not one (role=launcher). */
static void tag_launcher(struct observer *o, struct target *worker)
{
	int pid = worker->pid, ppid;
	char state;

	for (int depth = 0; depth < 8 && !procfs__stat(pid, &state, &ppid) && ppid > 1; depth++) {
		struct target *t = find_target(o, ppid);

		pid = ppid;
		if (!t || !t->session || t->ranked)
			continue;
		attrs__set_num(worker->session->root->attrs, "launcher_pid", t->pid);
		session__touch_root(worker->session);
		if (t->launcher)
			return;
		t->launcher = true;
		attrs__set_str(t->session->root->attrs, "role", "launcher");
		session__touch_root(t->session);
		ilog("pid %d launches ranks (pid %d is rank %ld): not a rank itself", t->pid,
		     worker->pid, worker->session->rank);
		return;
	}
}

/* Ranks attached before their launcher's session existed: tag it now. */
static void tag_launchers(struct observer *o)
{
	for (struct target *d = o->targets; d; d = d->next)
		if (d->session && d->ranked)
			tag_launcher(o, d);
}

/* A process found running may have been traced into this spool before (an earlier attach,
 * the agent before its restart): this observation gets an id of its own, "<id>.N". */
static int observation(struct observer *o, const struct session_ids *ids)
{
	char id[SESSION_ID_MAX];

	if (!(o->opts->sinks & SINK_SPOOL))
		return 1;
	session__format_id(ids, id, sizeof(id));
	return spool__sessions_like(&o->spool, id) + 1;
}

static int start_session(struct observer *o, struct target *t, uint64_t start_ns)
{
	long rank = procfs__env_long(t->pid, "RANK", -1);
	struct session_ids ids = {
		.pid = t->pid,
		.start_ticks = t->id_ticks ? t->id_ticks : procfs__start_ticks(t->pid),
		.rank = rank >= 0 ? rank : 0,
		.local_rank = procfs__env_long(t->pid, "LOCAL_RANK", 0),
		.world_size = procfs__env_long(t->pid, "WORLD_SIZE", 1),
		.host = o->host,
	};
	char comm[64] = "";
	cJSON *a;

	if (t->mid_run)
		ids.observation = observation(o, &ids);
	t->session = session__new(&ids, start_ns);
	if (!t->session)
		return -ENOMEM;
	t->session->resend_open = o->spool.max_bytes > 0;	/* removed batches lose no open span */
	o->any_session = true;
	t->print_spans = o->opts->sinks & SINK_STDOUT;
	t->session->on_close = on_span_closed;
	t->session->on_close_ctx = t;
	hang__init(&t->hang, o->opts->hang_factor, o->opts->hang_min_s);
	a = t->session->root->attrs;
	procfs__comm(t->pid, comm, sizeof(comm));
	cJSON_AddNumberToObject(a, "pid", t->pid);
	cJSON_AddNumberToObject(a, "rank", (double)ids.rank);
	cJSON_AddNumberToObject(a, "local_rank", (double)ids.local_rank);
	cJSON_AddNumberToObject(a, "world_size", (double)ids.world_size);
	/* rank: one of a distributed job (RANK set, by torchrun or the like); process: a
	 * job of its own; launcher: see tag_launcher */
	t->ranked = rank >= 0;
	cJSON_AddStringToObject(a, "role", t->ranked ? "rank" : "process");
	cJSON_AddStringToObject(a, "host", o->host);
	cJSON_AddStringToObject(a, "comm", comm);
	cJSON_AddBoolToObject(a, "attached_mid_run", t->mid_run);
	/* Epoch and step indices are counted by the observer, not read from the target. */
	cJSON_AddStringToObject(a, "index_origin", t->mid_run ? "attach" : "start");
	attrs__libraries(o, t);
	torch_tree__init(&t->tree, t->session, o->opts->epoch_steps);
	versions__detect(o, t);
	t->session->counters = read_cuda_counters;	/* per-span CUDA deltas */
	t->session->counters_ctx = t;
	ilog("pid %d: session %s started", t->pid, t->session->id);
	if (t->ranked)
		tag_launcher(o, t);
	return 0;
}

static void flush_target(struct observer *o, struct target *t, bool final)
{
	uint64_t seq;
	cJSON *batch;
	int err;

	if (!t->session)
		return;
	attrs__cuda(o, t);
	seq = t->session->seq;
	t->closed_since_flush = 0;
	batch = session__take_batch(t->session, attrs__health(o, t), clock__wall_ns(), final);
	if (t->hangs) {
		cJSON_AddItemToObject(batch, "hangs", t->hangs);
		t->hangs = NULL;
	}
	if (o->opts->sinks & SINK_SPOOL) {
		err = spool__write(&o->spool, t->session->id, seq, batch);
		if (err)
			elog("pid %d: cannot write spool batch to %s: %s", t->pid, o->spool.dir,
			     strerror(-err));
	}
	cJSON_Delete(batch);
}

/* ---- ending a target ---- */

static void end_target(struct observer *o, struct target *t, const char *cause)
{
	uint64_t now = clock__wall_ns();

	if (t->session) {
		cJSON *a = t->session->root->attrs;

		attrs__cuda(o, t);	/* before the root's stdout line is printed */
		torch_tree__finish(&t->tree, t->exited && WIFEXITED(t->exit_status) &&
					     !WEXITSTATUS(t->exit_status));
		if (t->exited && WIFSIGNALED(t->exit_status)) {
			cJSON_AddNumberToObject(a, "exit_signal", WTERMSIG(t->exit_status));
			cJSON_AddStringToObject(a, "exit_signal_name",
						sigabbrev_np(WTERMSIG(t->exit_status)) ?: "?");
		} else if (t->exited) {
			cJSON_AddNumberToObject(a, "exit_code", WEXITSTATUS(t->exit_status));
		}
		session__end(t->session, t->exited ? now : 0,
			     t->exited && WIFEXITED(t->exit_status) && !WEXITSTATUS(t->exit_status),
			     cause);
		flush_target(o, t, true);
		ilog("pid %d: session %s ended (%s)", t->pid, t->session->id, cause);
	}
	remove_target(o, t);
}

static void target_exited(struct observer *o, struct target *t, int status)
{
	if (!t->exited) {
		t->exited = true;
		t->exit_status = status;
	}
	/* Drain what the target sent before it died, then close its spans. Never from a
	 * ring-buffer callback: libbpf would hand the same record over again, endlessly. */
	ring_buffer__consume(o->rb);
	end_target(o, t, WIFSIGNALED(t->exit_status) ? "signal" : "exit");
}

/* ---- events ---- */

static void resume(int pid)
{
	if (kill(pid, SIGCONT) && errno != ESRCH)
		wlog("pid %d: cannot resume: %s", pid, strerror(errno));
}

static __u32 target_flags(const struct target *t)
{
	if (!t->follow)
		return TARGET_F_TRACED;
	return TARGET_F_FOLLOW | (t->stop_on_load ? TARGET_F_STOP_ON_EXEC : 0);
}

/* Tells BPF how to treat the target; armed: all its probes are in, let its events flow
 * (set once after attaching, so a scope's enter and exit start together). */
static int track(struct observer *o, struct target *t, bool armed)
{
	struct target_info ti = { .flags = target_flags(t) | (armed ? TARGET_F_ARMED : 0) };

	return bpf_map_update_elem(o->targets_fd, &t->pid, &ti, BPF_ANY) ? -errno : 0;
}

static void arm(struct observer *o, struct target *t)
{
	if (track(o, t, true))
		wlog("pid %d: cannot arm probes: %s", t->pid, strerror(errno));
}

static void scan_target(struct observer *o, struct target *t)
{
	uint64_t start_ns = clock__wall_ns();
	int n = attach__scan(o, t);

	if (n < 0 && n != -ESRCH)
		wlog("pid %d: scanning for libraries failed: %s", t->pid, strerror(-n));
	if (n > 0 && !t->session && target__has_signal_source(t) && start_session(o, t, start_ns))
		elog("pid %d: out of memory starting a session", t->pid);
	else if (n > 0 && t->session) {
		versions__detect(o, t);
		attrs__libraries(o, t);
	}
	if (n > 0)
		arm(o, t);
}

/* The third part of a session id for an image exec'd now: the time since boot in clock
 * ticks, like a process's start time, and never the id the old image had. */
static uint64_t exec_ticks(const struct target *old)
{
	uint64_t prev = old->id_ticks ? old->id_ticks : procfs__start_ticks(old->pid);
	long clk_tck = sysconf(_SC_CLK_TCK);
	uint64_t hz = clk_tck > 0 ? (uint64_t)clk_tck : 100, now;
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = (uint64_t)ts.tv_sec * hz + (uint64_t)ts.tv_nsec / (1000000000ull / hz);
	return now > prev ? now : prev + 1;
}

static void on_exec(struct observer *o, const struct event *e)
{
	struct target *t = find_target(o, (int)e->pid);
	bool held = e->args[0], follow, stop, root;
	uint64_t ticks;

	if (!t)
		return;
	/* The old image is gone: its session (if any) ends; a followed process starts over. */
	follow = t->follow;
	stop = t->stop_on_load;
	root = t->root_child;
	/* Same pid, same start time: the new image's session needs an id of its own */
	ticks = exec_ticks(t);
	if (t->session) {
		t->exited = true;
		t->exit_status = 0;
		end_target(o, t, "exec");
	} else {
		remove_target(o, t);
	}
	if (!follow)
		return;
	t = add_target(o, (int)e->pid);
	if (!t)
		return;
	t->follow = true;
	t->stop_on_load = stop;
	t->root_child = root;
	t->id_ticks = ticks;
	track(o, t, false);
	scan_target(o, t);
	if (held)
		resume(t->pid);
}

static void on_fork(struct observer *o, const struct event *e)
{
	struct target *parent = find_target(o, (int)e->pid), *t;

	if (!parent || !parent->follow || find_target(o, (int)e->args[0]))
		return;
	/* A forked child shares its parent's image (DataLoader workers): it becomes a
	 * session only if it execs. BPF already follows it. */
	t = add_target(o, (int)e->args[0]);
	if (t) {
		t->follow = true;
		t->stop_on_load = parent->stop_on_load;
	}
}

/* ---- watch ---- */

/* A process whose link map changed (its ld.so said so), or found running at start
 * (mid_run): traced if it maps a library to trace and passes --match. */
static void watch_process(struct observer *o, int pid, bool mid_run)
{
	struct target_info ignored = { .flags = TARGET_F_IGNORED }, ti;
	struct target *t = find_target(o, pid);

	if (t) {	/* a load before its own ld.so probe was in */
		scan_target(o, t);
		return;
	}
	/* events sent before BPF knew it was ignored */
	if (!bpf_map_lookup_elem(o->targets_fd, &pid, &ti) && (ti.flags & TARGET_F_IGNORED))
		return;
	o->watch.looked_at++;
	if (pid == getpid() || !watch__maps_wanted(&o->watch, pid))
		return;	/* nothing of interest (yet): most processes end here */
	if (!watch__process_wanted(&o->watch, pid)) {
		/* BPF tells nothing more of it until it execs */
		bpf_map_update_elem(o->targets_fd, &pid, &ignored, BPF_NOEXIST);
		if (!procfs__alive(pid))	/* its exit went by: the entry would stay */
			bpf_map_delete_elem(o->targets_fd, &pid);
		o->watch.ignored++;
		dlog("pid %d: command line does not match --match: ignored", pid);
		return;
	}
	t = add_target(o, pid);
	if (!t)
		return;
	t->mid_run = mid_run;
	o->watch.wanted++;
	if (track(o, t, false)) {
		wlog("pid %d: cannot follow: %s", pid, strerror(errno));
		remove_target(o, t);
		return;
	}
	scan_target(o, t);
}

static void watch_ldso(void *ctx, int pid, const struct proc_map *m)
{
	int err = attach__ldso_watch(ctx, pid, m);

	if (err < 0)
		wlog("cannot probe %s (mapped by pid %d) in every process: %s; the processes "
		     "it serves are not watched", m->path, pid, strerror(-err));
}

/* The first exec through a dynamic linker not probed yet (a new container image): probe
 * it, then look at that process, whose libraries may have loaded before the probe. */
static void on_new_ldso(struct observer *o, const struct event *e)
{
	struct proc_maps maps;

	if (procfs__read_maps((int)e->pid, &maps))
		return;
	for (size_t i = 0; i < maps.n; i++)
		if ((!e->args[0] ||	/* no bpf_find_vma: whichever ld.so it maps */
		     (maps.v[i].start <= e->args[0] && e->args[0] < maps.v[i].end)) &&
		    watch__is_ldso(&o->watch, &maps.v[i]))
			watch_ldso(o, (int)e->pid, &maps.v[i]);
	procfs__free_maps(&maps);
	watch_process(o, (int)e->pid, false);
}

static void watch_running(void *ctx, int pid)
{
	watch_process(ctx, pid, true);
}

/* Jobs running now (after a restart of the agent, say) are found in /proc, once, with the
 * dynamic linkers in use; BPF reports the rest as it happens. */
static int watch_start(struct observer *o)
{
	struct watch_scan_ops ops = { .on_process = watch_running, .on_ldso = watch_ldso,
				      .ctx = o };
	int n = watch__scan(&o->watch, getpid(), &ops);

	if (n < 0) {
		elog("cannot list processes in /proc: %s", strerror(-n));
		return EXIT_FAILURE_RUNTIME;
	}
	tag_launchers(o);
	ilog("watching for processes that load torch or the CUDA runtime (%zu dynamic linkers "
	     "probed); %d running now", o->watch.nldsos, n);
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct observer *o = ctx;
	const struct event *e = data;
	struct target *t;

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case EV_EXEC:
		on_exec(o, e);
		return 0;
	case EV_FORK:
		on_fork(o, e);
		return 0;
	case EV_EXIT:
		t = find_target(o, (int)e->pid);
		/* The command `run` started is reaped instead: waitpid has its exact status.
		 * Others end in check_alive, after this callback (see target_exited). */
		if (t && t->pid != o->child && !t->exited) {
			t->exited = true;
			t->exit_status = (int)e->args[0];
		}
		return 0;
	case EV_WATCH_LOAD:
		watch_process(o, (int)e->pid, false);
		return 0;
	case EV_NEW_LDSO:
		on_new_ldso(o, e);
		return 0;
	case EV_LINK_MAP:
		t = find_target(o, (int)e->pid);
		if (t)
			scan_target(o, t);
		if (e->args[0])
			resume((int)e->pid);
		return 0;
	case EV_CALL:
	case EV_RETURN:
	case EV_DEVICE_COUNT:
		break;
	default:
		dlog("unknown event type %u", e->type);
		return 0;
	}
	if (e->probe_id >= CIRRON_MAX_PROBES || !(t = o->slots[e->probe_id].target))
		return 0;	/* from a probe detached since */
	t->events++;
	const struct probe_result *r = &t->probes[o->slots[e->probe_id].probe];

	if (e->type == EV_DEVICE_COUNT)
		events__device_count(t, e);
	else if (t->session && r->def->action == ACT_EMIT) {
		events__anchor(o, t, r, e);
		py_sample__after_event(o, t);
		/* A fast loop closes thousands of spans a second: write them out before the
		 * flush interval, so the loader's memory stays bounded */
		if (t->closed_since_flush >= FLUSH_AFTER_SPANS)
			flush_target(o, t, false);
	}
	else if (e->type == EV_CALL && t->session)
		events__cuda_detail(o, t, r, e);
	return 0;
}

/* ---- setup ---- */

int observer__init_common(struct observer *o, const struct options *opts)
{
	char dir[4096];

	memset(o, 0, sizeof(*o));
	o->opts = opts;
	o->child = -1;
	o->watchdog.fd = -1;
	if (gethostname(o->host, sizeof(o->host) - 1))
		strcpy(o->host, "unknown");
	if (probe_set__load_embedded(&o->probes))
		return EXIT_FAILURE_RUNTIME;
	o->syms = sym_cache__new(opts->cache_dir ? opts->cache_dir :
				 sym_cache__default_dir(dir, sizeof(dir)));
	if (!o->syms)
		return EXIT_FAILURE_RUNTIME;
	clock_map__init(&o->clock);
	return 0;
}

void observer__free_common(struct observer *o)
{
	while (o->targets)
		remove_target(o, o->targets);
	attach__ldso_unwatch(o);
	link_reaper__wait();
	bpf_object__unload_all(o);
	probe_set__free(&o->probes);
	sym_cache__free(o->syms);
	spool__close(&o->spool);
}

/* The processes under pid (torchrun's workers): each followed, and a session if it maps a
 * known library. */
static void attach_descendants(struct observer *o, int pid)
{
	int kids[256], n = procfs__descendants(pid, kids, 256);

	for (int i = 0; i < n; i++) {
		struct target *t = find_target(o, kids[i]) ? NULL : add_target(o, kids[i]);

		if (!t)
			continue;
		t->mid_run = true;
		t->follow = true;	/* what the others exec may map a known library */
		if (!track(o, t, false))
			scan_target(o, t);
	}
}

static int attach_pid(struct observer *o)
{
	int pid = o->opts->pid, n;
	uint64_t start_ns;
	struct target *t;

	t = add_target(o, pid);
	if (!t)
		return EXIT_FAILURE_RUNTIME;
	t->mid_run = true;
	t->follow = true;	/* a launcher's restarted workers, a script's subprocesses */
	if (track(o, t, false))
		return EXIT_FAILURE_RUNTIME;
	start_ns = clock__wall_ns();
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
	if (start_session(o, t, start_ns))
		return EXIT_FAILURE_RUNTIME;
	arm(o, t);
	ilog("attached %zu probes to process %d", t->nprobes, pid);
	tag_launchers(o);
	return 0;
}

/* run: the child waits on a pipe until BPF follows it, then execs; the exec stops it
 * (SIGSTOP from BPF) until its image is probed, so nothing runs unobserved. */
static int spawn(struct observer *o)
{
	int go[2], status[2], child_err = 0;
	struct target *t;
	ssize_t n;

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
		execvp(o->opts->run_argv[0], o->opts->run_argv);
		child_err = errno;
		if (write(status[1], &child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	if (watchdog__start(&o->watchdog, o->child))
		wlog("no watchdog: if the observer is killed while %s is held at a library "
		     "load, it stays stopped", o->opts->run_argv[0]);
	t = add_target(o, o->child);
	if (!t)
		return EXIT_FAILURE_RUNTIME;
	t->follow = t->stop_on_load = t->root_child = true;
	if (track(o, t, false))
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

static void reap_child(struct observer *o)
{
	int status;
	struct target *t;

	if (o->child <= 0 || o->child_reaped || waitpid(o->child, &status, WNOHANG) != o->child)
		return;
	o->child_reaped = true;
	o->child_status = status;
	t = find_target(o, o->child);
	if (t)
		target_exited(o, t, status);
}

/* Targets whose exit event came, or that vanished without one (e.g. missed while
 * attaching). */
static void check_alive(struct observer *o)
{
	struct target *t, *next;

	for (t = o->targets; t; t = next) {
		next = t->next;
		if (t->pid == o->child && !o->child_reaped)
			continue;	/* reap_child gets its exact status */
		if (t->exited || !procfs__alive(t->pid)) {
			ring_buffer__consume(o->rb);
			if (find_target(o, t->pid) == t)
				target_exited(o, t, 0);
			next = o->targets;	/* the list may have changed */
		}
	}
}

/* A span open far longer than usual: one warning line, and a record in the spool now (the
 * job may be killed next). */
static void check_hangs(struct observer *o)
{
	uint64_t now = clock__wall_ns();
	char line[1024];

	for (struct target *t = o->targets; t; t = t->next) {
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
		rec = hang__check(&t->hang, t->session, pending ? &loading : NULL, now, line,
				  sizeof(line));
		if (!rec)
			continue;
		wlog("pid %d: %s", t->pid, line);
		if (!t->hangs)
			t->hangs = cJSON_CreateArray();
		cJSON_AddItemToArray(t->hangs, rec);
		flush_target(o, t, false);
	}
}

static bool done(struct observer *o)
{
	if (o->opts->cmd == CMD_WATCH)
		return false;	/* until stopped */
	if (o->opts->cmd == CMD_RUN)
		return o->child_reaped && !o->targets;
	return !o->targets;
}

int observer__main(const struct options *opts)
{
	struct observer *o = calloc(1, sizeof(*o));
	uint64_t start, last_flush, flush_ns = (uint64_t)(opts->flush_interval_s * 1e9);
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (!o)
		return EXIT_FAILURE_RUNTIME;
	err = observer__init_common(o, opts);
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
			elog("cannot write spool under %s: %s", opts->path, strerror(-err));
			err = EXIT_SPOOL_UNWRITABLE;
			goto out;
		}
	}
	if (!fs__have_bpf_caps()) {
		elog("no permission to trace: run as root, or grant CAP_BPF, CAP_PERFMON and "
		     "CAP_SYS_PTRACE");
		err = EXIT_NO_PERMISSION;
		goto out;
	}
	err = bpf_object__load_all(o, handle_event);
	if (err)
		goto out;
	sigaction(SIGINT, &sa, &inherited_sa[0]);
	sigaction(SIGTERM, &sa, &inherited_sa[1]);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &inherited_sa[2]);
	err = opts->cmd == CMD_RUN ? spawn(o) : opts->cmd == CMD_WATCH ? watch_start(o)
								       : attach_pid(o);
	if (err)
		goto out;

	start = last_flush = clock__mono_ns();
	while (!stop_requested) {
		uint64_t now;

		err = ring_buffer__poll(o->rb, py_sample__active(o) ? 2 : 100 /* ms */);
		/* High-rate events do not wake us (it would cost the target an IPI each):
		 * drain them on every round. */
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(o->rb);
		if (err < 0 && err != -EINTR) {
			elog("reading events failed: %s", strerror(-err));
			err = EXIT_FAILURE_RUNTIME;
			goto out;
		}
		reap_child(o);
		check_alive(o);
		check_hangs(o);
		now = clock__mono_ns();
		if (now - last_flush >= flush_ns) {
			for (struct target *t = o->targets; t; t = t->next)
				flush_target(o, t, false);
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
	/* Detach: what is still open stays open; held targets are let go. */
	ring_buffer__consume(o->rb);
	while (o->targets) {
		struct target *t = o->targets;

		if (t->follow)
			resume(t->pid);
		end_target(o, t, "detach");
	}
	if (opts->cmd == CMD_WATCH)
		ilog("watch: traced %" PRIu64 " processes, ignored %" PRIu64 " (--match), looked "
		     "at %" PRIu64 " library loads of others", o->watch.wanted, o->watch.ignored,
		     o->watch.looked_at);
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
	observer__free_common(o);
	watchdog__disarm(&o->watchdog);	/* after the links are gone: nothing stops them now */
	watch__free(&o->watch);
	free(o);
	return err;
}
