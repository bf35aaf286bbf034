/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_RESOLVE_H
#define __CIRRON_ATTACH_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

struct observer;
struct probe_group;
struct target;

/* Past an endbr64 at the entry of a function at file offset off of fd (a uprobe there is
 * single-stepped; after it, the kernel emulates the push). */
uint64_t resolve__skip_endbr64(int fd, uint64_t off);
/* Resolves group g's probes in the target's file fi and attaches them. Returns the number
 * attached, or -errno. */
int resolve__group(struct observer *o, struct target *t, size_t fi, const struct probe_group *g);

#endif
