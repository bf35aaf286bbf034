// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Reads of BPF maps shared by every stage (bpf_maps.h).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/bpf_maps.h"

uint64_t bpf_maps__percpu_sum(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v;
	uint64_t sum = 0;

	if (ncpu <= 0 || fd < 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(fd, &key, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

int bpf_maps__percpu_zero(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u64 *zero;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &key, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

void *bpf_maps__pid_keys(int fd, size_t key_size, int pid, size_t *n)
{
	char key[32] = { 0 }, next[32], *mine = NULL, *grown;
	size_t cap = 0;
	bool first = true;

	*n = 0;
	if (key_size > sizeof(key))
		return NULL;
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, key_size);
		if (*(const __u32 *)next != (__u32)pid)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(mine, cap * key_size);
			if (!grown)
				break;
			mine = grown;
		}
		memcpy(mine + (*n)++ * key_size, next, key_size);
	}
	return mine;
}

void bpf_maps__forget_pid(int fd, size_t key_size, int pid)
{
	size_t n;
	char *keys = bpf_maps__pid_keys(fd, key_size, pid, &n);

	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
}
