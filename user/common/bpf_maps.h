/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BPF_MAPS_H
#define __CIRRON_BPF_MAPS_H

/* Reads of BPF maps that every stage needs, in one place: a per-CPU counter's sum, the
 * keys of one process, a per-CPU counter zeroed. */
#include <stddef.h>
#include <stdint.h>

/* The sum over every possible CPU of the __u64 values at key (a __u32) of a per-CPU array
 * or hash; 0 when the key is absent or the map cannot be read. */
uint64_t bpf_maps__percpu_sum(int fd, uint32_t key);
/* Sets key's per-CPU values to 0. Returns 0 or -errno. */
int bpf_maps__percpu_zero(int fd, uint32_t key);
/* The keys of a hash map that belong to pid (keys that begin with its __u32 tgid;
 * key_size bytes, at most 32): malloc'd, *n of them; NULL if none. */
void *bpf_maps__pid_keys(int fd, size_t key_size, int pid, size_t *n);
/* Deletes every entry of pid (bpf_maps__pid_keys): the walk first, then the deletes, since a
 * walk that deletes as it goes restarts each time. */
void bpf_maps__forget_pid(int fd, size_t key_size, int pid);

#endif
