// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A traced process's session: its start (ids, rank, role, attributes), launcher tags, what
// each closed span feeds (hang detection, the stdout sink), and its batches to the spool.
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "attach/observer.h"
#include "common/json.h"
#include "common/log.h"
#include "observe/attrs.h"
#include "observe/gpu_time.h"
#include "observe/kernel_split.h"
#include "observe/registry.h"
#include "observe/session_job.h"
#include "observe/sessions.h"
#include "sink/log_sink.h"
#include "sink/metrics.h"
#include "sink/stdout_sink.h"
#include "proc/forks.h"
#include "proc/procfs.h"
#include "snap/snapshots.h"
#include "traced/versions.h"

/* --metrics: the observer's endpoint; --output log (one observer per process), for
 * on_span_closed. */
static struct metrics *span_metrics;
static bool log_spans;

/* Every closed span: its duration teaches hang detection what is usual; the stdout sink
 * prints it; --metrics counts it. */
static void on_span_closed(const struct session *s, const struct span *sp, void *ctx)
{
	struct target *t = ctx;

	metrics__span_closed(span_metrics, s, sp);
	t->report.closed_since_flush++;
	hang__span_closed(&t->report.hang, sp);
	if (t->print_spans)
		stdout_sink__span(sp);
	if (log_spans)
		log_sink__span(sp);
}

/* The CUDA counters carried by the anchor event being handled (snapshotted in BPF). */
static bool read_cuda_counters(void *ctx, uint64_t out[SESSION_NCOUNTERS])
{
	const struct target *t = ctx;

	memcpy(out, t->anchor.counters, sizeof(t->anchor.counters));
	return true;
}

/* torchrun and its kind: a process whose descendants carry RANK in their environment but
 * which has none itself launches ranks; it is not one (role=launcher). */
static void tag_launcher(struct observer *o, struct target *worker)
{
	int pid = worker->pid, ppid;
	char state;

	for (int depth = 0; depth < 8 && !procfs__stat(pid, &state, &ppid) && ppid > 1; depth++) {
		struct target *t = registry__find(o, ppid);

		pid = ppid;
		if (!t || !t->session || t->ranked)
			continue;
		json__set_num(worker->session->root->attrs, "launcher_pid", t->pid);
		session__touch_root(worker->session);
		if (t->launcher)
			return;
		t->launcher = true;
		json__set_str(t->session->root->attrs, "role", "launcher");
		session__touch_root(t->session);
		ilog("pid %d launches ranks (pid %d is rank %ld): not a rank itself", t->pid,
		     worker->pid, worker->session->rank);
		return;
	}
}

/* Ranks attached before their launcher's session existed: tag it now. */
void sessions__tag_launchers(struct observer *o)
{
	for (struct target *d = o->targets; d; d = d->next)
		if (d->session && d->ranked)
			tag_launcher(o, d);
}

/* What a process started below a traced job is to it, if a helper (role=helper, never a job):
 *   inductor: torch.compile's CPU ISA probes, `python -c` code that dlopens a library built in
 *     its cache (each loads libtorch), its compile worker pool (compile_worker/__main__.py, or
 *     the binary that replaces it, with --parent= and --torch-key=);
 *   dataloader: a DataLoader worker torch named (pt_data_worker);
 *   fork: any other process that runs the job's image, forked and not exec'd (torch 1.x's
 *     DataLoader workers, which it does not name; a fork context's pool), proc/forks.h, or
 *     one that exited as its session began (no command line left to tell);
 *   multiprocessing: a worker a multiprocessing context started with a new interpreter
 *     (spawn, forkserver: DataLoader workers with such a context, pools), or its forkserver;
 *     one that then trains (torch.multiprocessing.spawn's ranks) becomes a job
 *     (unhelp_if_training);
 *   tool: a program that is no Python interpreter (nvidia-smi, which transformers runs; a
 *     CUDA client), which maps a probed library.
 * A Python child of a job that is none of these (a training script the job runs) is a job. */
static const char *helper_kind(int pid, bool forked)
{
	char cmd[4096], comm[64] = "", exe[PATH_MAX], path[64];
	bool have_cmd = !procfs__cmdline(pid, cmd, sizeof(cmd));
	const char *base;
	ssize_t n;

	if (have_cmd && ((strstr(cmd, " -c ") && strstr(cmd, "cdll.LoadLibrary(")) ||
			 strstr(cmd, "torch/_inductor/compile_worker/__main__.py") ||
			 (strstr(cmd, " --parent=") && strstr(cmd, " --torch-key="))))
		return "inductor";
	procfs__comm(pid, comm, sizeof(comm));
	if (!strncmp(comm, "pt_data_worker", 14))
		return "dataloader";
	/* a fork seen, or one that runs its parent's image: whatever /proc says of it now (a
	 * worker that exits as its session starts is a zombie with no command line) */
	if (forked || forks__parent_image(pid))
		return "fork";
	/* no command line: it exited (a zombie) as its session began, before its fork was
	 * seen (a worker /proc showed first): a job's child that can no longer train; events
	 * of its that train make it a job all the same (unhelp_if_training) */
	if (!have_cmd)
		return "fork";
	if (strstr(cmd, "from multiprocessing.spawn import spawn_main") ||
	    strstr(cmd, "from multiprocessing.forkserver import main") ||
	    strstr(cmd, " --multiprocessing-fork"))
		return "multiprocessing";
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	if (strncmp(base, "python", 6) != 0)
		return "tool";
	return NULL;
}

/* The traced job above pid (its nearest traced ancestor that is no helper): one with a session,
 * or one being attached whose session starts after its children's (attach -p, which takes the
 * processes under the job first). */
static struct target *job_above(struct observer *o, int pid)
{
	int ppid;
	char state;

	for (int depth = 0; depth < 8 && !procfs__stat(pid, &state, &ppid) && ppid > 1; depth++) {
		struct target *t = registry__find(o, ppid);

		pid = ppid;
		if (t && (t->session || target__has_signal_source(t)) && !t->helper)
			return t;
	}
	return NULL;
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

int sessions__start(struct observer *o, struct target *t, uint64_t start_mono_ns)
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
	const char *kind;
	struct target *job;
	cJSON *a;

	if (t->mid_run)
		ids.observation = observation(o, &ids);
	t->clock = o->clock;	/* the clock of its start, all its life */
	t->clock_step_ns = 0;
	t->session = session__new(&ids, clock_map__to_wall(&t->clock, start_mono_ns));
	if (!t->session)
		return -ENOMEM;
	t->report.sys_sampled = false;
	t->session->resend_open = true;	/* the newest batch alone holds the open path (readers) */
	o->any_session = true;
	t->print_spans = o->opts->sinks & SINK_STDOUT;
	t->session->on_close = on_span_closed;
	span_metrics = o->metrics;
	log_spans = o->opts->sinks & SINK_LOG;
	t->session->on_close_ctx = t;
	hang__init(&t->report.hang, o->opts->hang_factor, o->opts->hang_min_s);
	a = t->session->root->attrs;
	procfs__comm(t->pid, comm, sizeof(comm));
	cJSON_AddNumberToObject(a, "pid", t->pid);
	cJSON_AddNumberToObject(a, "rank", (double)ids.rank);
	cJSON_AddNumberToObject(a, "local_rank", (double)ids.local_rank);
	cJSON_AddNumberToObject(a, "world_size", (double)ids.world_size);
	/* rank: one of a distributed job (RANK set, by torchrun or the like); process: a
	 * job of its own; launcher: see tag_launcher; helper: see helper_kind */
	t->ranked = rank >= 0;
	job = job_above(o, t->pid);
	if (!job && t->forked_from && (job = registry__find(o, t->forked_from)) &&
	    (job->helper || !(job->session || target__has_signal_source(job))))
		job = NULL;	/* its parent, gone from /proc's view of it (it exits) */
	kind = job ? helper_kind(t->pid, t->forked_from != 0) : NULL;
	t->helper = kind != NULL;
	if (t->helper) {
		t->ranked = false;
		cJSON_AddStringToObject(a, "role", "helper");
		cJSON_AddNumberToObject(a, "helper_of", job->pid);
		cJSON_AddStringToObject(a, "helper", kind);
	} else {
		cJSON_AddStringToObject(a, "role", t->ranked ? "rank" : "process");
	}
	cJSON_AddStringToObject(a, "host", o->host);
	session_job__set(o, t);
	cJSON_AddStringToObject(a, "comm", comm);
	cJSON_AddBoolToObject(a, "attached_mid_run", t->mid_run);
	/* Epoch and step indices are counted by the observer, not read from the target. */
	cJSON_AddStringToObject(a, "index_origin", t->mid_run ? "attach" : "start");
	attrs__libraries(o, t);
	torch_tree__init(&t->tree, t->session, o->opts->epoch_steps);
	infer_tree__init(&t->infer, t->session);
	tf_tree__init(&t->tf, t->session, o->opts->epoch_steps, t->mid_run);
	t->tree.frames_always = o->opts->python_frames == PYF_ALWAYS;
	t->infer.frames = t->tree.frames_always;
	versions__detect(o->syms, t);
	t->session->counters = read_cuda_counters;	/* per-span CUDA deltas */
	t->session->counters_ctx = t;
	t->session->kernels = kernel_split__attrs;	/* top kernels of steps and requests */
	gpu_time__start(o, t);	/* GPU time on every span */
	t->unannounced = true;	/* "started" once its events flow: targets__arm */
	if (t->ranked)
		tag_launcher(o, t);
	return 0;
}

/* A multiprocessing worker or a fork that trains (torch.multiprocessing.spawn's ranks, a
 * fork context's, not a DataLoader's workers) was a job after all: its root says so from the next batch on. */
static void unhelp_if_training(struct target *t)
{
	cJSON *a = t->session->root->attrs;
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(a, "helper");

	if (!t->helper || t->tree.step_index <= 0 || !cJSON_IsString(kind) ||
	    (strcmp(kind->valuestring, "multiprocessing") != 0 &&
	     strcmp(kind->valuestring, "fork") != 0))
		return;
	t->helper = false;
	t->ranked = procfs__env_long(t->pid, "RANK", -1) >= 0;
	json__set_str(a, "role", t->ranked ? "rank" : "process");
	cJSON_DeleteItemFromObjectCaseSensitive(a, "helper");
	cJSON_DeleteItemFromObjectCaseSensitive(a, "helper_of");
	session__touch_root(t->session);
	ilog("pid %d trains: a job, not a helper of its parent", t->pid);
}

void sessions__flush(struct observer *o, struct target *t, bool final)
{
	uint64_t seq;
	cJSON *batch, *snaps;
	int err;

	if (!t->session)
		return;
	unhelp_if_training(t);
	if (!t->exited)
		versions__detect(o->syms, t);	/* frameworks come after torch */
	attrs__cuda(o, t);
	kernel_split__read(t);	/* keeps BPF's split to a few intervals a process */
	gpu_time__flush(o, t, final);	/* spans whose GPU time is in, released */
	seq = t->session->seq;
	t->report.closed_since_flush = 0;
	batch = session__take_batch(t->session, attrs__health(o, t), clock_map__now(&t->clock),
				    final);
	metrics__flush(o->metrics, t->session, cJSON_GetObjectItemCaseSensitive(batch, "health"));
	if (t->report.hangs) {
		cJSON_AddItemToObject(batch, "hangs", t->report.hangs);
		t->report.hangs = NULL;
	}
	if (t->report.sys) {
		cJSON_AddItemToObject(batch, "sys", t->report.sys);
		t->report.sys = NULL;
	}
	snaps = snapshots__take_records(t);
	if (snaps)
		cJSON_AddItemToObject(batch, "snapshots", snaps);
	if (o->opts->sinks & SINK_SPOOL) {
		err = spool__write(&o->spool, t->session->id, seq, batch);
		if (err && err != o->spool.lost_err)	/* said once; health counts each */
			elog("pid %d: cannot write spool batch to %s: %s; tracing goes on, and what "
			     "cannot be written is lost (counted in health: spool_lost_files, "
			     "spool_lost_spans)", t->pid, o->spool.dir, strerror(-err));
		if (err)
			o->spool.lost_err = err;
	}
	cJSON_Delete(batch);
}

/* The target exited, exec'd or is left (detach): the tree's last spans close, the root gets
 * the exit status, and the final batch goes out. */
void sessions__end(struct observer *o, struct target *t, const char *cause)
{
	uint64_t now = clock_map__now(&t->clock);
	cJSON *a = t->session->root->attrs;
	bool seen = t->exited && !t->exit_unseen;	/* no status is made up */
	bool clean = seen && WIFEXITED(t->exit_status) && !WEXITSTATUS(t->exit_status);

	attrs__cuda(o, t);	/* before the root's stdout line is printed */
	t->infer.exited = clean;
	infer_tree__finish(&t->infer, now);
	torch_tree__finish(&t->tree, clean);
	tf_tree__finish(&t->tf, clean);
	if (seen && WIFSIGNALED(t->exit_status)) {
		cJSON_AddNumberToObject(a, "exit_signal", WTERMSIG(t->exit_status));
		cJSON_AddStringToObject(a, "exit_signal_name",
					sigabbrev_np(WTERMSIG(t->exit_status)) ?: "?");
	} else if (seen) {
		cJSON_AddNumberToObject(a, "exit_code", WEXITSTATUS(t->exit_status));
	}
	snapshots__end(&o->snap, t);	/* its record goes into the final batch */
	session__end(t->session, t->exited ? now : 0, clean, cause);
	sessions__flush(o, t, true);
	metrics__session_ended(o->metrics, t->session, clock__mono_ns());
	ilog("pid %d: session %s ended (%s)", t->pid, t->session->id, cause);
}
