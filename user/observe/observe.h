/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_H
#define __CIRRON_OBSERVE_H

/* The observe stage: events from the ring buffers in, tree inputs and sink writes out. Its
 * files share the loader's state (attach/observer.h) and call each other through these. */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "attach/observer.h"
#include "cirron.h"

/* loop.c: attach, run and watch commands. Returns the process exit code. */
int observer__main(const struct options *opts);
/* Shared setup (doctor too): probe definitions, symbol cache, host name. Returns 0 or an
 * exit code. */
int observer__init_common(struct observer *o, const struct options *opts);
void observer__free_common(struct observer *o);

/* dispatch.c: a ring-buffer record to its handler (libbpf's ring_buffer_sample_fn). */
int dispatch__event(void *ctx, void *data, size_t size);

/* targets.c: the traced processes */
struct target *targets__find(struct observer *o, int pid);
struct target *targets__add(struct observer *o, int pid);
/* Forgets the target in BPF and here, detaches its probes, frees it. */
void targets__remove(struct observer *o, struct target *t);
void targets__resume(struct observer *o, int pid);
/* Tells BPF how to treat the target; armed: all its probes are in, let its events flow
 * (set once after attaching, so a scope's enter and exit start together). Returns 0 or
 * -errno. */
int targets__track(struct observer *o, struct target *t, bool armed);
void targets__arm(struct observer *o, struct target *t);
bool targets__alive(const struct target *t);
void targets__vanished(struct observer *o, struct target *t);
/* Probes the libraries the target maps now; a session starts at the first one that gives
 * it (probes/ groups with a signal source). */
void targets__scan(struct observer *o, struct target *t);
/* Ends its session (cause: exit, signal, exec, detach) and removes it. */
void targets__end(struct observer *o, struct target *t, const char *cause);
/* It is gone (status as wait(2)): what it sent is drained, then it ends. */
void targets__exited(struct observer *o, struct target *t, int status);

/* sessions.c: a target's session */
int sessions__start(struct observer *o, struct target *t, uint64_t start_ns);
/* Ranks attached before their launcher's session existed: tag it now. */
void sessions__tag_launchers(struct observer *o);
/* The next batch to the spool (final: the session's last). */
void sessions__flush(struct observer *o, struct target *t, bool final);
void sessions__end(struct observer *o, struct target *t, const char *cause);

/* span_kernels.c: launches per kernel on steps and requests. Reads BPF's split into the
 * target's store (at every flush, and when a span closes on an event newer than the last
 * read). */
void span_kernels__read(struct target *t);
/* session.h's kernels_fn (ctx: the target) */
void span_kernels__attrs(void *ctx, struct span *sp, uint64_t from_seq, uint64_t to_seq);

/* lifecycle.c: EV_EXEC and EV_FORK of traced processes */
void lifecycle__exec(struct observer *o, const struct event *e);
void lifecycle__fork(struct observer *o, const struct event *e);

/* discovery.c: the node agent */
void discovery__process(struct observer *o, int pid, bool mid_run);
void discovery__new_ldso(struct observer *o, const struct event *e);
/* The scan of /proc at start. Returns 0 or an exit code. */
int discovery__start(struct observer *o);
/* Each round of the loop: the processes noted since the last (after lost control events:
 * every process). */
void discovery__round(struct observer *o);

/* launch.c: the first targets */
/* run: starts the command (it gets inherited_sa back for SIGINT, SIGTERM, SIGPIPE). Returns
 * 0, or an exit code (126/127 when it cannot be run). */
int launch__run(struct observer *o, const struct sigaction inherited_sa[3]);
/* run: the command's exit, once, with its exact wait status. */
void launch__reap(struct observer *o);
/* attach -p PID. Returns 0 or an exit code. */
int launch__attach(struct observer *o);

/* events.c: a probe's event in a target with a session */
void events__device_count(struct target *t, const struct event *e);
void events__kernel_name(struct target *t, const struct kname_event *k);
void events__cuda_detail(struct observer *o, struct target *t, const struct probe_result *r,
			 const struct event *e);
void events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		    const struct event *e);

/* writes.c: EV_WRITE, a traced process's write to its stdout or stderr, into marks. */
int writes__event(struct observer *o, const void *data, size_t size);

/* session_attrs.c: the root span's attributes and each batch's health. */
void attrs__set_num(cJSON *o, const char *key, double v);
void attrs__set_str(cJSON *o, const char *key, const char *v);
void attrs__device(struct target *t);		/* device, cuda_count */
void attrs__libraries(const struct observer *o, struct target *t);	/* + python_frames */
void attrs__cuda(struct observer *o, struct target *t);	/* CUDA totals, launches per kernel */
cJSON *attrs__health(struct observer *o, struct target *t);

#endif
