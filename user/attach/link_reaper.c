// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A queue of links to destroy and one thread that destroys them, one at a time and only
// while the loader is not attaching (link_reaper__hold); it exits when the queue stays
// empty and is started again with the next link.
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "attach/link_reaper.h"
#include "common/log.h"

/* One: the kernel closes a uprobe's perf event under its global event_mutex, held through
 * the RCU grace periods (see link_reaper.h), so closes never overlap; each one in flight is
 * one more grace period an attach may wait for. */
#define REAPER_THREADS	1
#define REAPER_IDLE_S	2	/* an idle thread exits after this */

struct reap_job {
	struct bpf_link *link;
	atomic_uint *pending;
	struct reap_job *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static struct reap_job *head, *tail;
static unsigned int threads, waiting, in_flight, holds;	/* under lock */

static void finish(struct reap_job *j)
{
	bpf_link__destroy(j->link);
	if (j->pending)
		atomic_fetch_sub(j->pending, 1);
	free(j);
	pthread_mutex_lock(&lock);
	if (--in_flight == 0)
		pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&lock);
}

static void *reaper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct reap_job *j = head;
		struct timespec until;

		if (j && holds) {	/* the loader is attaching: not now */
			pthread_cond_wait(&work, &lock);
			continue;
		}
		if (j) {
			head = j->next;
			if (!head)
				tail = NULL;
			pthread_mutex_unlock(&lock);
			finish(j);
			pthread_mutex_lock(&lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += REAPER_IDLE_S;
		waiting++;
		int err = pthread_cond_timedwait(&work, &lock, &until);

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

	if (waiting > 0 || threads >= REAPER_THREADS) {
		pthread_cond_signal(&work);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (!pthread_create(&th, &attr, reaper, NULL))
		threads++;
	pthread_attr_destroy(&attr);
}

void link_reaper__destroy_then(struct bpf_link *link, atomic_uint *pending)
{
	struct reap_job *j;

	if (!link) {
		if (pending)
			atomic_fetch_sub(pending, 1);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		bpf_link__destroy(link);
		if (pending)
			atomic_fetch_sub(pending, 1);
		return;
	}
	j->link = link;
	j->pending = pending;
	pthread_mutex_lock(&lock);
	in_flight++;
	if (tail)
		tail->next = j;
	else
		head = j;
	tail = j;
	wake_or_start();
	if (!threads) {		/* no thread could be started: destroy it here */
		head = tail = NULL;
		pthread_mutex_unlock(&lock);
		for (struct reap_job *next; j; j = next) {
			next = j->next;
			finish(j);
		}
		return;
	}
	pthread_mutex_unlock(&lock);
}

void link_reaper__destroy(struct bpf_link *link)
{
	link_reaper__destroy_then(link, NULL);
}

void link_reaper__wait(void)
{
	pthread_mutex_lock(&lock);
	if (in_flight > 0)
		ilog("closing %u uprobe links (the kernel takes a grace period each)", in_flight);
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
