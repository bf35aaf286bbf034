/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ULINK_H
#define __CIRRON_ULINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;

/* A uprobe link as the probes hold it: a libbpf perf link (one probe: one perf event, created
 * and closed under the kernel's global event_mutex, each close a grace period of its own), or
 * one uprobe_multi link (Linux 6.6+) for every offset of one batch in one file, shared by the
 * probes it covers: one syscall in, one close and one grace period out, no event_mutex. */
struct ulink;

/* BPF_TRACE_UPROBE_MULTI (uapi of Linux 6.6; bookworm's headers and libbpf 1.1 lack it): the
 * attach type a program linked that way is loaded with. */
#define ULINK_ATTACH_UPROBE_MULTI	48

/* bpf_link_create(BPF_TRACE_UPROBE_MULTI) for prog_fd on n offsets of path in pid (0: every
 * process), one cookie each; ret: a return probe. pending[i] (or NULL) is the probe's id
 * reservation: it is held (incremented) until the link is closed. Returns 0 or -errno. */
int ulink__multi(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
		 const uint64_t *cookies, atomic_uint *const *pending, size_t n, bool ret,
		 struct ulink **out);
/* One entry uprobe_multi link on offset with a USDT semaphore at ref_ctr_offset (a file
 * offset), which the kernel raises while the link is in (the CUPTI companion's gate). */
int ulink__multi_semaphore(int prog_fd, pid_t pid, const char *path, uint64_t offset,
			   uint64_t cookie, uint64_t ref_ctr_offset, atomic_uint *pending,
			   struct ulink **out);
/* Takes over a perf link (NULL stays NULL). */
struct ulink *ulink__perf(struct bpf_link *l, atomic_uint *pending);
/* One probe lets go of l (NULL is fine); the last one closes it here and now. */
void ulink__put(struct ulink *l);
/* The same, the close left to the link reaper's threads (link_reaper.h). */
void ulink__put_async(struct ulink *l);
/* Closes l now whoever still holds it (the probes' pointers must be cleared by the caller). */
void ulink__close(struct ulink *l);

/* Whether the kernel takes uprobe_multi links (a probe link on "/" fails with EBADF, not
 * EINVAL: the attach type is known). */
bool ulink__multi_supported(void);

#endif
