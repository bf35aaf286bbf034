/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * Inside attach/: a probe's id, spec and links (probe_links.c), and the resolving of a
 * matching library's probes (resolve.c).
 */
#ifndef __CIRRON_ATTACH_PROBE_LINKS_H
#define __CIRRON_ATTACH_PROBE_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attach/observer.h"

/* Per-call CUDA counting: the probes --cuda-calls off leaves out. */
bool probe_links__cuda_per_call(enum probe_action a);
/* Gives r an id (the BPF cookie) and writes its spec (aux: action specific). 0 or -errno. */
int probe_links__reserve(struct observer *o, struct target *t, struct probe_result *r,
			 uint64_t aux);
/* Links rs[0..n) (reserved, not linked); errs[i]: 0 or -errno. Returns probes linked. */
int probe_links__link_many(struct observer *o, struct target *t, struct probe_result **rs,
			   size_t n, int *errs);
/* Closes r's links now, or on the reaper's threads (its id stays reserved until done). */
void probe_links__unlink(struct probe_result *r);
void probe_links__unlink_async(struct observer *o, struct probe_result *r);
/* Gives r's id back (and, without cookies, its addresses). */
void probe_links__release(struct observer *o, struct probe_result *r);
/* Entry hits of probe id so far. */
uint64_t probe_links__entry_hits(struct observer *o, uint32_t id);

/* Past a leading endbr64 (single-stepped by the kernel; the next instruction is emulated). */
uint64_t resolve__skip_endbr64(int fd, uint64_t off);
/* Resolves, reserves and links every probe of group g in file fi. Returns probes attached,
 * or -errno (-ESRCH: the target exited meanwhile). */
int resolve__group(struct observer *o, struct target *t, size_t fi, const struct probe_group *g);

#endif /* __CIRRON_ATTACH_PROBE_LINKS_H */
