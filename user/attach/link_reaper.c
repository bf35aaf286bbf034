// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A queue of links to close and the threads that close them. Serial jobs (perf links) go one
// at a time and only while the loader is not attaching (link_reaper__hold); the others
// (uprobe_multi links) go at once, several in parallel. A thread exits when the queue stays
// empty and is started again with the next job.
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include "attach/link_reaper.h"
#include "common/log.h"

/* Serial: the kernel closes a uprobe's perf event under its global event_mutex, held through
 * the RCU grace periods (see link_reaper.h), so those closes never overlap; each one in
 * flight is one more grace period an attach may wait for. A uprobe_multi link takes no such
 * lock: closes in parallel share their grace periods. */
#define REAPER_THREADS	4
#define REAPER_IDLE_S	2	/* an idle thread exits after this */

struct reap_job {
	void (*close)(void *arg);
	void *arg;
	atomic_uint *pending;
	bool serial;
	struct reap_job *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static struct reap_job *head;
static unsigned int threads, waiting, in_flight, holds;	/* under lock */
static bool serial_busy;				/* under lock */

static void finish(struct reap_job *j)
{
	bool serial = j->serial;

	j->close(j->arg);
	if (j->pending)
		atomic_fetch_sub(j->pending, 1);
	free(j);
	pthread_mutex_lock(&lock);
	if (serial) {
		serial_busy = false;
		pthread_cond_broadcast(&work);
	}
	if (--in_flight == 0)
		pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&lock);
}

/* Called with lock held: the first job a thread may take now, unlinked from the queue. */
static struct reap_job *take(void)
{
	for (struct reap_job **pp = &head; *pp; pp = &(*pp)->next) {
		struct reap_job *j = *pp;

		if (j->serial && (holds || serial_busy))
			continue;	/* the loader is attaching, or one is being closed */
		*pp = j->next;
		serial_busy |= j->serial;
		return j;
	}
	return NULL;
}

static void *reaper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct reap_job *j = take();
		struct timespec until;
		int err;

		if (j) {
			pthread_mutex_unlock(&lock);
			finish(j);
			pthread_mutex_lock(&lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += REAPER_IDLE_S;
		waiting++;
		err = pthread_cond_timedwait(&work, &lock, &until);
		waiting--;
		if (err && !head)
			break;
	}
	threads--;
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Called with lock held: a thread for the job just queued, unless an idle one takes it. */
static void wake_or_start(void)
{
	pthread_attr_t attr;
	pthread_t th;

	pthread_cond_broadcast(&work);
	if (waiting > 0 || threads >= REAPER_THREADS)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (!pthread_create(&th, &attr, reaper, NULL))
		threads++;
	pthread_attr_destroy(&attr);
}

static void queue(void (*close)(void *), void *arg, atomic_uint *pending, bool serial)
{
	struct reap_job *j = calloc(1, sizeof(*j)), **pp;

	if (!j) {
		close(arg);
		if (pending)
			atomic_fetch_sub(pending, 1);
		return;
	}
	j->close = close;
	j->arg = arg;
	j->pending = pending;
	j->serial = serial;
	pthread_mutex_lock(&lock);
	in_flight++;
	for (pp = &head; *pp; pp = &(*pp)->next)
		;
	*pp = j;
	wake_or_start();
	if (!threads) {		/* no thread could be started: close them here */
		struct reap_job *all = head;

		head = NULL;
		serial_busy = false;
		pthread_mutex_unlock(&lock);
		for (struct reap_job *next; all; all = next) {
			next = all->next;
			finish(all);
		}
		return;
	}
	pthread_mutex_unlock(&lock);
}

static void destroy_link(void *link)
{
	bpf_link__destroy(link);
}

void link_reaper__destroy_then(struct bpf_link *link, atomic_uint *pending)
{
	if (!link) {
		if (pending)
			atomic_fetch_sub(pending, 1);
		return;
	}
	queue(destroy_link, link, pending, true);
}

void link_reaper__destroy(struct bpf_link *link)
{
	link_reaper__destroy_then(link, NULL);
}

void link_reaper__run(void (*close)(void *arg), void *arg, bool serial)
{
	queue(close, arg, NULL, serial);
}

void link_reaper__wait(void)
{
	pthread_mutex_lock(&lock);
	if (in_flight > 0)
		ilog("closing %u uprobe links (RCU grace periods: perf links one at a time)",
		     in_flight);
	while (in_flight > 0)
		pthread_cond_wait(&idle_cond, &lock);
	pthread_mutex_unlock(&lock);
}

void link_reaper__hold(void)
{
	pthread_mutex_lock(&lock);
	holds++;
	pthread_mutex_unlock(&lock);
}

void link_reaper__release(void)
{
	pthread_mutex_lock(&lock);
	if (holds && !--holds)
		pthread_cond_broadcast(&work);
	pthread_mutex_unlock(&lock);
}

unsigned int link_reaper__in_flight(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = in_flight;
	pthread_mutex_unlock(&lock);
	return n;
}
