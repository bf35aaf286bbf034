// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "attach/link_reaper.h"

static atomic_int in_flight;

static void *reap(void *link)
{
	bpf_link__destroy(link);
	atomic_fetch_sub(&in_flight, 1);
	return NULL;
}

void link_reaper__destroy(struct bpf_link *link)
{
	pthread_attr_t attr;
	pthread_t th;
	int err;

	if (!link)
		return;
	atomic_fetch_add(&in_flight, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &attr, reap, link);
	pthread_attr_destroy(&attr);
	if (err)
		reap(link);
}

void link_reaper__wait(void)
{
	const struct timespec ms = { .tv_nsec = 1000000 };

	while (atomic_load(&in_flight) > 0)
		nanosleep(&ms, NULL);
}
