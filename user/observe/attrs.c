// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What a session's root span says about its process (device, libraries, Python tier, CUDA
// totals) and the health block of every spool batch.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "attach/write_hook.h"
#include "common/bpf_maps.h"
#include "attach/link_reaper.h"
#include "attach/py_sample.h"
#include "common/json.h"
#include "observe/attrs.h"
#include "observe/gpu_time.h"
#include "ship/ship_outputs.h"
#include "proc/gpus.h"
#include "snap/snapshots.h"

static bool has_group(const struct target *t, const char *name)
{
	for (size_t i = 0; i < t->nprobes; i++)
		if (t->probes[i].id && !strcmp(t->probes[i].group->name, name))
			return true;
	return false;
}

/* The GPUs the process holds open (proc/gpus.h), once found: which, and, where its
 * cudaGetDeviceCount was not seen (attach mid-run), how many. */
static void attrs__gpus(struct target *t, cJSON *a)
{
	struct gpus g;
	cJSON *list;

	/* a process holds a GPU open only through a CUDA library it maps */
	if (t->cuda.gpus_found || !(has_group(t, "cudart") || has_group(t, "cuda_driver")) ||
	    gpus__of_pid("/proc", t->pid, "/proc/driver/nvidia", &g) || !g.n)
		return;
	t->cuda.gpus_found = true;
	list = cJSON_CreateArray();
	for (int i = 0; i < g.n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "minor", g.g[i].minor);
		if (g.g[i].model[0])
			cJSON_AddStringToObject(o, "model", g.g[i].model);
		if (g.g[i].uuid[0])
			cJSON_AddStringToObject(o, "uuid", g.g[i].uuid);
		if (g.g[i].bus[0])
			cJSON_AddStringToObject(o, "bus", g.g[i].bus);
		cJSON_AddItemToArray(list, o);
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(a, "gpus", list))
		cJSON_AddItemToObject(a, "gpus", list);
	json__set_str(a, "gpus_source", "open /dev/nvidiaN files, /proc/driver/nvidia/gpus");
	if (g.visible_set)
		json__set_str(a, "cuda_visible_devices", g.visible);
	if (t->cuda.count < 0) {
		t->cuda.count = g.n;
		t->cuda.count_from_files = true;
	}
}

void attrs__device(struct target *t)
{
	cJSON *a = t->session->root->attrs;

	/* torch or TensorFlow without a CUDA runtime mapped is a CPU build or a job that found
	 * no CUDA (CUDA builds load it at import) */
	if (t->cuda.count < 0 && (has_group(t, "libtorch") || has_group(t, "tensorflow")) &&
	    !has_group(t, "cudart")) {
		t->cuda.count = 0;
		t->cuda.count_no_runtime = true;
	}
	if (t->cuda.count != 0)
		attrs__gpus(t, a);

	json__set_str(a, "device", t->cuda.count > 0 ? "cuda" : t->cuda.count == 0 ? "cpu" : "unknown");
	if (t->cuda.count >= 0) {
		json__set_num(a, "cuda_count", (double)t->cuda.count);
		json__set_str(a, "cuda_count_source", t->cuda.count_from_files
			       ? "GPUs the process holds open" : t->cuda.count_no_runtime
			       ? "no CUDA runtime mapped" : "cudaGetDeviceCount");
	} else if (!cJSON_GetObjectItemCaseSensitive(a, "cuda_count")) {
		cJSON_AddNullToObject(a, "cuda_count");
	}
}

/* How forward spans are found: "exact" (slot_tp_call probed), "sampled" (probed during one
 * step in N, the others inferred), "off" (not asked for), or "unavailable" (asked for, but
 * no way found slot_tp_call or the layout of this CPython, t->py_why says why: forward is
 * inferred, as with off). */
static const char *python_frames_state(const struct observer *o, const struct target *t)
{
	if (o->opts->python_frames == PYF_OFF)
		return "off";
	for (size_t i = 0; i < t->nprobes; i++)
		if (t->probes[i].def->meaning == MEAN_PY_CALL && t->probes[i].id)
			return o->opts->python_frames == PYF_SAMPLED ? "sampled" : "exact";
	return "unavailable";
}

/* The groups attached so far and what they say about the device; libraries keep arriving
 * (dlopen) after the session starts. */
void attrs__libraries(const struct observer *o, struct target *t)
{
	cJSON *a = t->session->root->attrs, *libs = cJSON_CreateArray();

	for (size_t i = 0; i < t->nprobes; i++) {
		const struct probe_result *r = &t->probes[i];
		bool seen = false;

		if (!r->id || r->def->action == ACT_DL_STATE)
			continue;
		for (size_t j = 0; j < i; j++)
			seen |= t->probes[j].id && t->probes[j].group == r->group;
		if (!seen)
			cJSON_AddItemToArray(libs, cJSON_CreateString(r->group->name));
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(a, "libraries", libs))
		cJSON_AddItemToObject(a, "libraries", libs);
	json__set_str(a, "python_frames", python_frames_state(o, t));
	if (!strcmp(python_frames_state(o, t), "unavailable") && t->py.why[0])
		json__set_str(a, "python_frames_reason", t->py.why);
	attrs__device(t);
	session__touch_root(t->session);
}

/* The root span's CUDA totals, by name, from the per-process counters BPF keeps. */
static const struct {
	const char *name;
	size_t off;
} cuda_totals[] = {
#define TOTAL(field) { "cuda." #field, offsetof(struct cuda_counts, field) }
	TOTAL(launches), TOTAL(memcpy_calls), TOTAL(memcpy_bytes_h2d), TOTAL(memcpy_bytes_d2h),
	TOTAL(memcpy_bytes_d2d), TOTAL(memcpy_bytes_other), TOTAL(memcpy_ns), TOTAL(malloc_calls),
	TOTAL(malloc_bytes), TOTAL(free_calls), TOTAL(sync_calls), TOTAL(sync_ns),
	TOTAL(launches_driver), TOTAL(memcpy_calls_driver), TOTAL(malloc_calls_driver),
	TOTAL(free_calls_driver), TOTAL(graph_launches), TOTAL(graph_launches_driver),
	TOTAL(nccl_calls), TOTAL(nccl_bytes), TOTAL(free_bytes), TOTAL(reserved_bytes),
	TOTAL(reserved_peak_bytes),
#undef TOTAL
};

/* Exact whatever --cuda-calls says: their probes are always attached. */
static bool cuda_total_always(size_t off)
{
	return off == offsetof(struct cuda_counts, sync_calls) ||
	       off == offsetof(struct cuda_counts, sync_ns) ||
	       off == offsetof(struct cuda_counts, nccl_calls) ||
	       off == offsetof(struct cuda_counts, nccl_bytes);
}

/* Every total is exact: each call counted in BPF at its entry (docs/outputs.md). */
void attrs__cuda(struct observer *o, struct target *t)
{
	struct cuda_counts c;
	cJSON *a = t->session->root->attrs, *kernels, *graphs;
	struct kernel_key *keys;
	bool off = o->opts->cuda_calls == CUDA_CALLS_OFF;
	size_t n;

	if (!t->cuda.gpus_found && t->cuda.count != 0)
		attrs__device(t);	/* a context made since: its GPUs are open now */
	if (bpf_map_lookup_elem(o->cuda_fd, &t->pid, &c))
		return;	/* no CUDA call yet */
	for (size_t i = 0; i < sizeof(cuda_totals) / sizeof(cuda_totals[0]); i++) {
		__u64 v = *(const __u64 *)((const char *)&c + cuda_totals[i].off);

		if (off && !cuda_total_always(cuda_totals[i].off))
			continue;	/* --cuda-calls off: not counted */
		/* reserved bytes go up and down: said once anything was allocated */
		if (cuda_totals[i].off == offsetof(struct cuda_counts, reserved_bytes) &&
		    !c.reserved_peak_bytes)
			continue;
		json__set_num(a, cuda_totals[i].name, (double)v);
	}
	if (off) {
		session__touch_root(t->session);
		return;
	}
	/* Launches per kernel: named by the calls that made its key (traced/kernel_names.h),
	 * else by the symbol at a runtime launch's host stub, else unnamed, saying why. */
	kernels = cJSON_CreateObject();
	graphs = cJSON_CreateObject();
	keys = bpf_maps__pid_keys(o->kernels_fd, sizeof(*keys), t->pid, &n);
	for (size_t i = 0; i < n; i++) {
		const char *name;
		char addr[64];
		__u64 count;

		if (bpf_map_lookup_elem(o->kernels_fd, &keys[i], &count))
			continue;
		if (keys[i].func & KERNEL_KEY_GRAPH) {	/* a graph: no name, its handle */
			snprintf(addr, sizeof(addr), "graph 0x%llx",
				 (unsigned long long)(keys[i].func & ~KERNEL_KEY_GRAPH));
			json__set_num(graphs, addr, (double)count);
			continue;
		}
		name = target__kernel_name(t, keys[i].func, addr, sizeof(addr));
		{	/* keys that name one kernel (its handle, its CUfunction) add up */
			const cJSON *had = cJSON_GetObjectItemCaseSensitive(kernels, name);

			json__set_num(kernels, name, (double)count +
				       (cJSON_IsNumber(had) ? had->valuedouble : 0));
		}
	}
	free(keys);
	if (!cJSON_ReplaceItemInObjectCaseSensitive(a, "cuda.kernels", kernels))
		cJSON_AddItemToObject(a, "cuda.kernels", kernels);
	if (!graphs->child)
		cJSON_Delete(graphs);
	else if (!cJSON_ReplaceItemInObjectCaseSensitive(a, "cuda.graphs", graphs))
		cJSON_AddItemToObject(a, "cuda.graphs", graphs);
	session__touch_root(t->session);
}

/* watch: the node agent's own counters, the same in every session's batches (a log
 * shipper that collects only the spool sees them). */
static cJSON *agent_health(const struct observer *o)
{
	const struct watch *w = &o->watch;
	cJSON *g = cJSON_CreateObject();

	cJSON_AddNumberToObject(g, "looked_at", (double)w->looked_at);
	cJSON_AddNumberToObject(g, "traced", (double)w->wanted);
	cJSON_AddNumberToObject(g, "ignored", (double)w->ignored);
	cJSON_AddNumberToObject(g, "recovered", (double)w->queue.recovered);
	cJSON_AddNumberToObject(g, "vanished", (double)w->queue.vanished);
	cJSON_AddNumberToObject(g, "control_events_lost", (double)w->queue.control_lost);
	cJSON_AddNumberToObject(g, "rescans", (double)w->queue.rescans);
	cJSON_AddNumberToObject(g, "detaching_links", link_reaper__in_flight());
	return g;
}

cJSON *attrs__health(struct observer *o, struct target *t)
{
	cJSON *h = cJSON_CreateObject(), *probes = cJSON_CreateArray();
	uint64_t hits_total = 0;
	int attached = 0, failed = 0;

	for (size_t i = 0; i < t->nprobes; i++) {
		const struct probe_result *r = &t->probes[i];
		cJSON *p;

		if ((r->err == -ENOENT && r->def->optional) || r->not_asked)
			continue;	/* not in this build, or not asked for: not a failure */
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "symbol", r->symbol ? r->symbol : r->def->symbol);
		cJSON_AddStringToObject(p, "group", r->group->name);
		cJSON_AddStringToObject(p, "action", probe_action__name(r->def->action));
		cJSON_AddBoolToObject(p, "attached", r->id != 0);
		if (r->err)
			cJSON_AddStringToObject(p, "error", r->why ? r->why : strerror(-r->err));
		else
			cJSON_AddNullToObject(p, "error");
		if (r->id) {
			uint64_t in = bpf_maps__percpu_sum(o->hits_fd, 2 * r->id);
			uint64_t out = bpf_maps__percpu_sum(o->hits_fd, 2 * r->id + 1);

			cJSON_AddNumberToObject(p, "hits", (double)in);
			cJSON_AddNumberToObject(p, "return_hits", (double)out);
			if (r->def->action != ACT_GPU_BATCH)	/* the companion's thread */
				hits_total += in + out;
			attached++;
		} else {
			failed++;
		}
		cJSON_AddItemToArray(probes, p);
	}
	cJSON_AddNumberToObject(h, "ringbuf_drops", (double)bpf_maps__percpu_sum(o->stats_fd, STAT_RB_DROPS));
	cJSON_AddNumberToObject(h, "kernel_map_full",
				(double)bpf_maps__percpu_sum(o->stats_fd, STAT_KERNEL_KEYS_FULL));
	cJSON_AddNumberToObject(h, "driver_calls_from_runtime",
				(double)bpf_maps__percpu_sum(o->stats_fd, STAT_DRIVER_FROM_RUNTIME));
	cJSON_AddNumberToObject(h, "cuda_allocs_full",
				(double)bpf_maps__percpu_sum(o->stats_fd, STAT_ALLOCS_FULL));
	cJSON_AddNumberToObject(h, "kernel_names_lost",
				(double)bpf_maps__percpu_sum(o->stats_fd, STAT_KERNEL_NAMES_LOST) +
				(double)t->cuda.kernel_names.dropped);
	cJSON_AddNumberToObject(h, "events", (double)t->report.events);
	cJSON_AddNumberToObject(h, "events_lost", (double)t->tree.events_lost);
	cJSON_AddNumberToObject(h, "probes_attached", attached);
	cJSON_AddNumberToObject(h, "probes_failed", failed);
	cJSON_AddNumberToObject(h, "uprobe_hits", (double)hits_total);
	{	/* every signal the observer sent it: BPF's SIGSTOP holds and the loader's SIGCONTs
		 * (`run` only; 0 in attach and watch) */
		__u32 pid = (__u32)t->pid;
		__u64 stops = 0;

		bpf_map_lookup_elem(o->signals_fd, &pid, &stops);
		cJSON_AddNumberToObject(h, "signals_sent", (double)(stops + t->signals_sent));
	}
	if (o->opts->marks != MARKS_OFF)
		cJSON_AddStringToObject(h, "marks_hook", write_hook__name(t->hook.kind));
	/* The cost paid by the training job per step, in steady state: hits and steps counted
	 * from the first batch that saw a step (imports and the first steps trap more), or
	 * since attach while fewer than 10 steps followed it. */
	long step_index = t->tf.active ? t->tf.step_index : t->tree.step_index;

	if (step_index > 0) {
		long steps = step_index - t->report.steps_at_base;
		uint64_t hits = hits_total - t->report.hits_at_base;

		if (!t->report.steps_at_base) {
			t->report.steps_at_base = step_index;
			t->report.hits_at_base = hits_total;
		}
		if (steps < 10) {
			steps = step_index;
			hits = hits_total;
		}
		cJSON_AddNumberToObject(h, "steps", (double)step_index);
		cJSON_AddNumberToObject(h, "uprobe_hits_per_step", (double)hits / (double)steps);
	}
	if (o->opts->python_frames != PYF_OFF && t->py.why[0] &&
	    !strcmp(python_frames_state(o, t), "unavailable"))
		cJSON_AddStringToObject(h, "python_frames_reason", t->py.why);
	if (t->clock_step_ns)	/* its times stay on the clock of its start */
		json__add_i64(h, "wall_clock_step_ns", t->clock_step_ns);
	if (o->opts->python_frames == PYF_SAMPLED) {
		cJSON_AddNumberToObject(h, "python_sampled_steps", (double)t->py.sample.samples);
		uint64_t on = t->py.sample.on_ns + (t->py.sample.on ? clock_map__now(&t->clock) -
						    t->py.sample.attach_ns : 0);

		cJSON_AddNumberToObject(h, "python_sampled_ms", (double)on / 1e6);
	}
	if (o->opts->marks != MARKS_OFF) {
		cJSON_AddNumberToObject(h, "writes", (double)t->marks.writes);
		cJSON_AddNumberToObject(h, "write_bytes", (double)t->marks.bytes);
		cJSON_AddNumberToObject(h, "writes_over_bound", (double)t->marks.over_bound);
		cJSON_AddNumberToObject(h, "write_drops",
					(double)bpf_maps__percpu_sum(o->stats_fd, STAT_WRITE_DROPS));
		cJSON_AddNumberToObject(h, "mark_lines", (double)t->marks.counts.lines);
		cJSON_AddNumberToObject(h, "mark_lines_skipped",
					(double)t->marks.counts.lines_skipped);
		cJSON_AddNumberToObject(h, "marks", (double)t->marks.counts.marks);
	}
	snapshots__health(t, h);
	cJSON_AddNumberToObject(h, "spool_bytes", (double)o->spool.bytes_written);
	cJSON_AddNumberToObject(h, "spool_files", (double)o->spool.files_written);
	cJSON_AddNumberToObject(h, "spool_removed_files", (double)o->spool.cap.removed_files);
	cJSON_AddNumberToObject(h, "spool_removed_bytes", (double)o->spool.cap.removed_bytes);
	if (o->spool.lost_files) {	/* the disk refused batches (full) */
		cJSON_AddNumberToObject(h, "spool_lost_files", (double)o->spool.lost_files);
		cJSON_AddNumberToObject(h, "spool_lost_bytes", (double)o->spool.lost_bytes);
		cJSON_AddNumberToObject(h, "spool_lost_spans", (double)o->spool.lost_spans);
	}
	if (o->spool.cap.max_bytes)
		cJSON_AddNumberToObject(h, "spool_max_bytes", (double)o->spool.cap.max_bytes);
	cJSON_AddNumberToObject(h, "control_drops",
				(double)bpf_maps__percpu_sum(o->stats_fd, STAT_CONTROL_DROPS));
	ship_outputs__health(o->ship, h);	/* --output s3://, otlp */
	if (o->opts->cmd == CMD_WATCH)
		cJSON_AddItemToObject(h, "agent", agent_health(o));
	gpu_time__health(t, h);
	cJSON_AddItemToObject(h, "probes", probes);
	cJSON_AddItemToObject(h, "kernel", kernel_features__json(&o->kf));
	return h;
}

