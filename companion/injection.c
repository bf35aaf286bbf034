// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libcirron_cupti.so's entry: the CUDA driver loads the library named by
// CUDA_INJECTION64_PATH at cuInit and calls InitializeInjection, which starts one thread and
// returns. The thread sleeps, waking every COMPANION_POLL_MS (every ms in the first EARLY_MS)
// to read the USDT semaphore (a 2-byte load); nothing else happens while no observer is attached: no CUPTI call, no
// subscription, no buffer. When an observer's uprobe raises the semaphore, it takes CUPTI
// (cupti.c) and hands records over every COMPANION_FLUSH_MS; when the semaphore drops (the
// observer detached, or died: the kernel lowers it as its uprobe goes), it gives CUPTI back.
// The thread blocks every signal, so the job's signals reach the job's own threads.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <time.h>
#include "companion.h"

#define RETRY_S		2	/* a CUPTI held by another subscriber is asked again this often */
#define EARLY_MS	500	/* after cuInit, the semaphore is read every ms this long: an
				 * observer that traces the process from its start (`run`, the
				 * node agent) puts its uprobe in within ms of the library's load,
				 * before the first kernel (a context takes longer to make) */

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void watermark(uint64_t api_upto)
{
	struct cirron_gpu_rec r = { .type = GPU_REC_WATERMARK, .a = api_upto,
				    .c = queue__dropped() };

	queue__push(&r);
}

/* One round while active: API records and what CUPTI completed, a watermark, a clock
 * sample, all handed over. */
static void round_active(void)
{
	uint64_t upto = queue__drain_api();

	cupti__flush();
	if (upto)
		watermark(upto);
	cupti__clock_sample();
	queue__send();
}

static void *poll_thread(void *arg)
{
	bool on = false, queued = false;
	uint64_t retry_at = 0, early_until = mono_ns() + EARLY_MS * 1000000ull;

	(void)arg;
	prctl(PR_SET_NAME, "cirron-gpu");
	for (;;) {
		bool wanted = cirron_gpu_batch_semaphore != 0;

		if (on && !wanted) {
			cupti__deactivate();
			on = false;
		}
		if (queued && !wanted) {
			sleep_ms(COMPANION_POLL_MS);	/* late callbacks find the ring off */
			queue__stop();
			queued = false;
		}
		if (!on && wanted && mono_ns() >= retry_at) {
			if (!queued)
				queued = !queue__start();
			if (queued && cupti__activate() == 0)
				on = true;
			else
				retry_at = mono_ns() + RETRY_S * 1000000000ull;
			queue__send();	/* the state: active, or why not */
		}
		if (on)
			round_active();
		sleep_ms(on ? COMPANION_FLUSH_MS : mono_ns() < early_until ? 1 : COMPANION_POLL_MS);
	}
	return NULL;
}

/* Called by the CUDA driver once, from cuInit. Returns 1: the driver goes on either way. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	static atomic_flag started = ATOMIC_FLAG_INIT;
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;

	if (atomic_flag_test_and_set(&started))
		return 1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* the new thread inherits the mask */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_create(&th, &attr, poll_thread, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 1;
}
