// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --metrics: Prometheus text exposition format (version 0.0.4) over a minimal HTTP/1.1
// server on a non-blocking socket, served from the observer's loop (metrics.h). This file:
// the series (one per session) as spans close and batches are written, and the page they
// render to; the server is metrics_http.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sink/metrics_internal.h"
#include "sink/metrics_kernels.h"

static const double step_buckets[] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
};
#define NBUCKETS (sizeof(step_buckets) / sizeof(step_buckets[0]))

static const char *const phase_names[] = {
	"data_load", "forward", "backward", "optimizer_step", "collective_wait",
};
#define NPHASES (sizeof(phase_names) / sizeof(phase_names[0]))

/* Per-session counters from the batch's health object. */
static const struct {
	const char *key, *metric, *help;
} health_metrics[] = {
	{ "events", "cirron_events_total", "Ring-buffer events the observer handled" },
	{ "events_lost", "cirron_events_lost_total",
	  "Events of this process lost to a full ring buffer" },
	{ "uprobe_hits", "cirron_uprobe_hits_total", "Uprobe hits in this process" },
};
#define NHEALTH (sizeof(health_metrics) / sizeof(health_metrics[0]))

/* The root span's CUDA totals (cuda.* attributes): counters (gauges where said), ns turned
 * into seconds. */
static const struct {
	const char *attr, *metric, *label, *help;
	double scale;
	bool gauge;
} cuda_metrics[] = {
	{ "cuda.launches", "cirron_cuda_launches_total", NULL, "CUDA kernel launches", 1, false },
	{ "cuda.memcpy_calls", "cirron_cuda_memcpy_calls_total", NULL, "CUDA memcpy calls", 1, false },
	{ "cuda.memcpy_bytes_h2d", "cirron_cuda_memcpy_bytes_total", "h2d",
	  "Bytes copied by CUDA memcpy calls, by direction", 1, false },
	{ "cuda.memcpy_bytes_d2h", "cirron_cuda_memcpy_bytes_total", "d2h", NULL, 1, false },
	{ "cuda.memcpy_bytes_d2d", "cirron_cuda_memcpy_bytes_total", "d2d", NULL, 1, false },
	{ "cuda.memcpy_bytes_other", "cirron_cuda_memcpy_bytes_total", "other", NULL, 1, false },
	{ "cuda.memcpy_ns", "cirron_cuda_memcpy_seconds_total", NULL,
	  "Time blocked in synchronous CUDA memcpy calls", 1e-9, false },
	{ "cuda.malloc_calls", "cirron_cuda_malloc_calls_total", NULL, "CUDA malloc calls", 1, false },
	{ "cuda.malloc_bytes", "cirron_cuda_malloc_bytes_total", NULL,
	  "Bytes asked of CUDA malloc", 1, false },
	{ "cuda.free_calls", "cirron_cuda_free_calls_total", NULL, "CUDA free calls", 1, false },
	{ "cuda.sync_calls", "cirron_cuda_sync_calls_total", NULL,
	  "CUDA stream, device and event synchronize calls", 1, false },
	{ "cuda.sync_ns", "cirron_cuda_sync_seconds_total", NULL,
	  "Time blocked in CUDA synchronize calls", 1e-9, false },
	{ "cuda.graph_launches", "cirron_cuda_graph_launches_total", NULL,
	  "CUDA graph launches (each replays many kernels)", 1, false },
	{ "cuda.nccl_calls", "cirron_nccl_calls_total", NULL, "NCCL collective calls", 1, false },
	{ "cuda.nccl_bytes", "cirron_nccl_bytes_total", NULL,
	  "Bytes of the NCCL collectives' buffers (elements times element size)", 1, false },
	{ "cuda.reserved_bytes", "cirron_cuda_reserved_bytes", NULL,
	  "Device memory the process holds from CUDA malloc calls seen (since attach)", 1, true },
	{ "cuda.reserved_peak_bytes", "cirron_cuda_reserved_peak_bytes", NULL,
	  "The most device memory the process held from CUDA malloc calls seen", 1, true },
};
#define NCUDA (sizeof(cuda_metrics) / sizeof(cuda_metrics[0]))

/* --sys-interval samples: the process's own values (per session) ... */
static const struct {
	const char *key, *metric, *type, *label, *help;
	double scale;
} sys_metrics[] = {
	{ "cpu_user_ns", "cirron_process_cpu_seconds_total", "counter", "mode=\"user\"",
	  "CPU time of the traced process, by mode", 1e-9 },
	{ "cpu_system_ns", "cirron_process_cpu_seconds_total", NULL, "mode=\"system\"", NULL, 1e-9 },
	{ "rss_bytes", "cirron_process_resident_memory_bytes", "gauge", NULL,
	  "Resident memory of the traced process", 1 },
	{ "threads", "cirron_process_threads", "gauge", NULL, "Threads of the traced process", 1 },
	{ "read_bytes", "cirron_process_io_bytes_total", "counter", "direction=\"read\"",
	  "Storage bytes the traced process read and wrote (/proc/PID/io)", 1 },
	{ "write_bytes", "cirron_process_io_bytes_total", NULL, "direction=\"write\"", NULL, 1 },
	{ "ctx_voluntary", "cirron_process_context_switches_total", "counter",
	  "kind=\"voluntary\"", "Context switches of the traced process", 1 },
	{ "ctx_involuntary", "cirron_process_context_switches_total", NULL,
	  "kind=\"involuntary\"", NULL, 1 },
};
#define NSYS (sizeof(sys_metrics) / sizeof(sys_metrics[0]))

/* ... and the node's (no session labels). */
static const struct {
	const char *key, *metric, *label, *help;
} node_metrics[] = {
	{ "net_rx_bytes", "cirron_node_network_bytes_total", "direction=\"rx\"",
	  "Bytes the node's network interfaces (all but lo) received and sent" },
	{ "net_tx_bytes", "cirron_node_network_bytes_total", "direction=\"tx\"", NULL },
	{ "disk_read_bytes", "cirron_node_disk_bytes_total", "direction=\"read\"",
	  "Bytes the node's disks read and wrote" },
	{ "disk_write_bytes", "cirron_node_disk_bytes_total", "direction=\"write\"", NULL },
};
_Static_assert(sizeof(node_metrics) / sizeof(node_metrics[0]) == NNODE, "NNODE: node_metrics' rows");

/* Durations in step_buckets (not cumulative), their count and sum. */
struct histogram {
	uint64_t bucket[NBUCKETS];
	uint64_t count;
	double sum;
};

struct series {
	const struct session *s;	/* NULL once ended */
	char labels[640];		/* host="...",pid="...",... */
	uint64_t ended_ns;		/* monotonic; 0 while the session lives */
	uint64_t epochs;
	struct histogram steps;
	double phase_s[NPHASES];
	double last_step_ts;		/* unix seconds; 0: no step yet */
	struct histogram requests;	/* inference requests (docs/inference.md) */
	double tokens;			/* tokens per sequence, summed over requests */
	double decode_tps;		/* the newest request's decode rate; 0: none */
	bool hang;
	double health[NHEALTH];
	double cuda[NCUDA];
	bool has_cuda;
	struct kernel_top kernels;	/* the most launched kernels */
	double sys[NSYS];
	bool has_sys[NSYS];
	struct series *next;
};

/* A label value: backslash, double quote and line feed escaped. */
static void put_label(char *buf, size_t size, size_t *at, const char *key, const char *v)
{
	int n;

	if (*at >= size)
		return;
	n = snprintf(buf + *at, size - *at, "%s%s=\"", *at ? "," : "", key);
	*at += n > 0 ? (size_t)n : 0;
	for (; *v && *at + 3 < size; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			buf[(*at)++] = '\\';
			buf[(*at)++] = *v == '\n' ? 'n' : *v;
		} else {
			buf[(*at)++] = *v;
		}
	}
	if (*at + 1 < size)
		buf[(*at)++] = '"';
	buf[*at < size ? *at : size - 1] = 0;
}

static void set_labels(struct series *x, const struct session *s)
{
	const cJSON *a = s->root ? s->root->attrs : NULL;
	const cJSON *role = cJSON_GetObjectItemCaseSensitive(a, "role");
	const cJSON *lp = cJSON_GetObjectItemCaseSensitive(a, "launcher_pid");
	char num[32];
	size_t at = 0;

	x->labels[0] = 0;
	put_label(x->labels, sizeof(x->labels), &at, "host", s->host);
	snprintf(num, sizeof(num), "%d", s->pid);
	put_label(x->labels, sizeof(x->labels), &at, "pid", num);
	snprintf(num, sizeof(num), "%ld", s->rank);
	put_label(x->labels, sizeof(x->labels), &at, "rank", num);
	snprintf(num, sizeof(num), "%ld", s->local_rank);
	put_label(x->labels, sizeof(x->labels), &at, "local_rank", num);
	put_label(x->labels, sizeof(x->labels), &at, "session", s->id);
	put_label(x->labels, sizeof(x->labels), &at, "role",
		  cJSON_IsString(role) ? role->valuestring : "process");
	if (cJSON_IsNumber(lp)) {
		snprintf(num, sizeof(num), "%.0f", lp->valuedouble);
		put_label(x->labels, sizeof(x->labels), &at, "launcher_pid", num);
	}
}

static struct series *get(struct metrics *m, const struct session *s)
{
	struct series *x;

	for (x = m->series; x; x = x->next)
		if (x->s == s)
			return x;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->s = s;
	set_labels(x, s);
	x->next = m->series;
	m->series = x;
	return x;
}

static void observe(struct histogram *h, double d)
{
	size_t b = 0;

	h->count++;
	h->sum += d;
	while (b < NBUCKETS && d > step_buckets[b])
		b++;
	if (b < NBUCKETS)
		h->bucket[b]++;
}

/* An inference request: its latency, and its tokens where its forwards were seen. */
static void request_closed(struct series *x, const struct span *sp, double d)
{
	const cJSON *v;

	observe(&x->requests, d);
	v = cJSON_GetObjectItemCaseSensitive(sp->attrs, "tokens_per_sequence");
	if (cJSON_IsNumber(v))
		x->tokens += v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(sp->attrs, "decode_tokens_per_s");
	if (cJSON_IsRaw(v) && v->valuestring)	/* json__add_double's exact digits */
		x->decode_tps = strtod(v->valuestring, NULL);
	else if (cJSON_IsNumber(v))
		x->decode_tps = v->valuedouble;
}

void metrics__span_closed(struct metrics *m, const struct session *s, const struct span *sp)
{
	struct series *x = m ? get(m, s) : NULL;
	double d;

	if (!x)
		return;
	x->hang = false;	/* progress */
	if (!sp->end_ns)
		return;
	d = sp->end_ns > sp->start_ns ? (double)(sp->end_ns - sp->start_ns) / 1e9 : 0;
	if (!strcmp(sp->name, "step")) {
		observe(&x->steps, d);
		x->last_step_ts = (double)sp->end_ns / 1e9;
	} else if (!strcmp(sp->name, "epoch")) {
		x->epochs++;
	} else if (!strcmp(sp->name, "request")) {
		request_closed(x, sp, d);
	} else {
		for (size_t p = 0; p < NPHASES; p++)
			if (!strcmp(sp->name, phase_names[p]))
				x->phase_s[p] += d;
	}
}

static double num(const cJSON *o, const char *key, bool *found)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (found)
		*found = cJSON_IsNumber(v);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

void metrics__flush(struct metrics *m, const struct session *s, const cJSON *health)
{
	struct series *x = m ? get(m, s) : NULL;
	const cJSON *a;
	bool found;

	if (!x)
		return;
	set_labels(x, s);
	for (size_t i = 0; i < NHEALTH; i++)
		x->health[i] = num(health, health_metrics[i].key, NULL);
	if (num(health, "ringbuf_drops", NULL) > m->ringbuf_drops)
		m->ringbuf_drops = num(health, "ringbuf_drops", NULL);
	if (num(health, "spool_bytes", NULL) > m->spool_bytes)
		m->spool_bytes = num(health, "spool_bytes", NULL);
	a = s->root ? s->root->attrs : NULL;
	for (size_t i = 0; i < NCUDA; i++) {
		double v = num(a, cuda_metrics[i].attr, &found);

		if (found) {
			x->cuda[i] = v * cuda_metrics[i].scale;
			x->has_cuda = true;
		}
	}
	kernel_top__update(&x->kernels, cJSON_GetObjectItemCaseSensitive(a, "cuda.kernels"));
}

/* A number, or the raw digits json__add_u64 writes. */
static bool sample_num(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsNumber(v))
		*out = v->valuedouble;
	else if (cJSON_IsRaw(v) && v->valuestring)
		*out = strtod(v->valuestring, NULL);
	else
		return false;
	return true;
}

void metrics__sys(struct metrics *m, const struct session *s, const cJSON *sample)
{
	struct series *x = m ? get(m, s) : NULL;
	double v;

	if (!x)
		return;
	for (size_t i = 0; i < NSYS; i++)
		if (sample_num(sample, sys_metrics[i].key, &v)) {
			x->sys[i] = v * sys_metrics[i].scale;
			x->has_sys[i] = true;
		}
	for (size_t i = 0; i < NNODE; i++)
		if (sample_num(sample, node_metrics[i].key, &v)) {
			m->node[i] = v;
			m->has_node = true;
		}
}

void metrics__hang(struct metrics *m, const struct session *s)
{
	struct series *x = m ? get(m, s) : NULL;

	if (x)
		x->hang = true;
}

void metrics__session_ended(struct metrics *m, const struct session *s, uint64_t now_ns)
{
	struct series *x;

	if (!m)
		return;
	for (x = m->series; x; x = x->next)
		if (x->s == s) {
			set_labels(x, s);
			x->s = NULL;
			x->ended_ns = now_ns ? now_ns : 1;
			x->hang = false;
		}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One line per series: NAME{labels[,extra]} value */
static void sample(FILE *f, const char *name, const struct series *x, const char *extra,
		   double v)
{
	fprintf(f, "%s{%s%s%s} %.17g\n", name, x->labels, extra ? "," : "", extra ? extra : "", v);
}

/* NAME_bucket{le=...} (cumulative), NAME_sum, NAME_count of one series. */
static void render_histogram(FILE *f, const char *name, const struct series *x,
			     const struct histogram *h)
{
	char metric[96], extra[64];
	uint64_t cum = 0;

	snprintf(metric, sizeof(metric), "%s_bucket", name);
	for (size_t b = 0; b < NBUCKETS; b++) {
		cum += h->bucket[b];
		snprintf(extra, sizeof(extra), "le=\"%g\"", step_buckets[b]);
		sample(f, metric, x, extra, (double)cum);
	}
	sample(f, metric, x, "le=\"+Inf\"", (double)h->count);
	snprintf(metric, sizeof(metric), "%s_sum", name);
	sample(f, metric, x, NULL, h->sum);
	snprintf(metric, sizeof(metric), "%s_count", name);
	sample(f, metric, x, NULL, (double)h->count);
}

/* Inference processes' requests: only series that had one. */
static void render_requests(FILE *f, const struct metrics *m)
{
	const struct series *x;

	family(f, "cirron_requests_total", "counter", "Inference requests closed");
	for (x = m->series; x; x = x->next)
		if (x->requests.count)
			sample(f, "cirron_requests_total", x, NULL, (double)x->requests.count);
	family(f, "cirron_request_duration_seconds", "histogram",
	       "Latency of inference requests (a grad-off region with model calls)");
	for (x = m->series; x; x = x->next)
		if (x->requests.count)
			render_histogram(f, "cirron_request_duration_seconds", x, &x->requests);
	family(f, "cirron_request_tokens_total", "counter",
	       "Tokens generated per sequence, summed over requests (one per forward: inferred)");
	for (x = m->series; x; x = x->next)
		if (x->requests.count)
			sample(f, "cirron_request_tokens_total", x, NULL, x->tokens);
	family(f, "cirron_decode_tokens_per_second", "gauge",
	       "Decode steps per second of the newest request, per sequence");
	for (x = m->series; x; x = x->next)
		if (x->decode_tps > 0)
			sample(f, "cirron_decode_tokens_per_second", x, NULL, x->decode_tps);
}

char *metrics__render(struct metrics *m, size_t *len)
{
	char *buf = NULL, extra[64];
	const struct series *x;
	size_t nlive = 0;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	for (x = m->series; x; x = x->next)
		nlive += x->s != NULL;
	family(f, "cirron_sessions", "gauge", "Sessions (traced processes) being observed now");
	fprintf(f, "cirron_sessions %zu\n", nlive);
	family(f, "cirron_observer_ringbuf_drops_total", "counter",
	       "Events dropped because the ring buffer was full (all targets)");
	fprintf(f, "cirron_observer_ringbuf_drops_total %.17g\n", m->ringbuf_drops);
	family(f, "cirron_observer_spool_bytes_total", "counter", "Bytes of spool batches written");
	fprintf(f, "cirron_observer_spool_bytes_total %.17g\n", m->spool_bytes);
	family(f, "cirron_observer_scrapes_total", "counter", "Requests of /metrics served");
	fprintf(f, "cirron_observer_scrapes_total %llu\n", (unsigned long long)m->scrapes);

	family(f, "cirron_steps_total", "counter", "Training steps (optimizer steps) closed");
	for (x = m->series; x; x = x->next)
		sample(f, "cirron_steps_total", x, NULL, (double)x->steps.count);
	family(f, "cirron_epochs_total", "counter", "Epochs closed");
	for (x = m->series; x; x = x->next)
		sample(f, "cirron_epochs_total", x, NULL, (double)x->epochs);
	family(f, "cirron_step_duration_seconds", "histogram", "Duration of training steps");
	for (x = m->series; x; x = x->next)
		render_histogram(f, "cirron_step_duration_seconds", x, &x->steps);
	render_requests(f, m);
	family(f, "cirron_phase_seconds_total", "counter",
	       "Time in each phase of the steps (collective_wait also counts inside backward)");
	for (x = m->series; x; x = x->next)
		for (size_t p = 0; p < NPHASES; p++) {
			snprintf(extra, sizeof(extra), "phase=\"%s\"", phase_names[p]);
			sample(f, "cirron_phase_seconds_total", x, extra, x->phase_s[p]);
		}
	family(f, "cirron_last_step_timestamp_seconds", "gauge",
	       "When the newest step closed (Unix time); absent before the first");
	for (x = m->series; x; x = x->next)
		if (x->last_step_ts > 0)
			sample(f, "cirron_last_step_timestamp_seconds", x, NULL, x->last_step_ts);
	family(f, "cirron_hang", "gauge",
	       "1 while a hang record stands (no progress for --hang-factor x the usual time)");
	for (x = m->series; x; x = x->next)
		sample(f, "cirron_hang", x, NULL, x->hang);
	family(f, "cirron_session_ended", "gauge",
	       "1 once the session ended (kept --metrics-grace seconds, then dropped)");
	for (x = m->series; x; x = x->next)
		sample(f, "cirron_session_ended", x, NULL, x->ended_ns != 0);
	for (size_t i = 0; i < NHEALTH; i++) {
		family(f, health_metrics[i].metric, "counter", health_metrics[i].help);
		for (x = m->series; x; x = x->next)
			sample(f, health_metrics[i].metric, x, NULL, x->health[i]);
	}
	for (size_t i = 0; i < NCUDA; i++) {
		if (cuda_metrics[i].help)
			family(f, cuda_metrics[i].metric, cuda_metrics[i].gauge ? "gauge" : "counter",
			       cuda_metrics[i].help);
		for (x = m->series; x; x = x->next) {
			if (!x->has_cuda)
				continue;
			if (cuda_metrics[i].label)
				snprintf(extra, sizeof(extra), "direction=\"%s\"", cuda_metrics[i].label);
			sample(f, cuda_metrics[i].metric, x, cuda_metrics[i].label ? extra : NULL,
			       x->cuda[i]);
		}
	}
	family(f, "cirron_cuda_kernel_launches_total", "counter",
	       "Launches of the most launched kernels (up to 10 a process, joined when among the "
	       "most launched at a flush), the rest as kernel=\"other\"");
	for (x = m->series; x; x = x->next)
		kernel_top__render(f, "cirron_cuda_kernel_launches_total", x->labels, &x->kernels);
	for (size_t i = 0; i < NSYS; i++) {
		if (sys_metrics[i].type)
			family(f, sys_metrics[i].metric, sys_metrics[i].type, sys_metrics[i].help);
		for (x = m->series; x; x = x->next)
			if (x->has_sys[i])
				sample(f, sys_metrics[i].metric, x, sys_metrics[i].label, x->sys[i]);
	}
	for (size_t i = 0; i < NNODE && m->has_node; i++) {
		if (node_metrics[i].help)
			family(f, node_metrics[i].metric, "counter", node_metrics[i].help);
		fprintf(f, "%s{%s} %.17g\n", node_metrics[i].metric, node_metrics[i].label,
			m->node[i]);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void metrics__drop_ended(struct metrics *m, uint64_t now_ns)
{
	struct series **pp, *x;

	for (pp = &m->series; (x = *pp);) {
		if (x->ended_ns && now_ns - x->ended_ns >= m->grace_ns) {
			*pp = x->next;
			free(x);
		} else {
			pp = &x->next;
		}
	}
}

void metrics__free_series(struct metrics *m)
{
	struct series *x;

	while ((x = m->series)) {
		m->series = x->next;
		free(x);
	}
}
