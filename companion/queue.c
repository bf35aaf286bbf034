// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Records on their way out of the companion, and their hand-off to the observer.
//
// API records are written by CUPTI's callbacks on the job's own threads, at every launch,
// copy and memset: a slot of a lock-free ring each (a ticket, four stores, a release), no
// lock and no allocation on the job's path. The flushing thread moves them, with what CUPTI's
// activity buffers held, into a queue, and hands the queue over CIRRON_GPU_BATCH_RECS records
// at a time through cirron_gpu_batch(), the function the observer's uprobe sits on. Nothing
// here is allocated while dormant: the ring is .bss given back with MADV_DONTNEED, the queue
// and the name table are freed.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "companion.h"

#define API_RING	(1u << 16)	/* API records between two drains: 655k calls a second */
#define QUEUE_MAX	(1u << 20)	/* records waiting for the hand-off, 32 MiB at most */
#define NAMES_MAX	(1u << 16)	/* kernel names a process */

/* The USDT semaphore (bpf/gpu_batch.h): raised by the kernel while the observer's uprobe on
 * cirron_gpu_batch is in. In .probes, as USDT semaphores are, so it has a file offset. */
__attribute__((section(".probes"), used, visibility("default")))
volatile unsigned short cirron_gpu_batch_semaphore;

/* The hand-off: the observer's uprobe copies *b at the entry. The USDT note makes it the
 * probe cirron:gpu_batch for other tools too (bpftrace, readelf -n), semaphore included. */
__attribute__((noinline, used, visibility("default")))
void cirron_gpu_batch(const struct cirron_gpu_batch *b)
{
	__asm__ volatile("990: nop\n"
			 ".pushsection .note.stapsdt,\"?\",\"note\"\n"
			 ".balign 4\n"
			 ".4byte 992f-991f, 994f-993f, 3\n"
			 "991: .asciz \"stapsdt\"\n"
			 "992: .balign 4\n"
			 "993: .8byte 990b\n"
			 ".8byte _.stapsdt.base\n"
			 ".8byte cirron_gpu_batch_semaphore\n"
			 ".asciz \"cirron\"\n"
			 ".asciz \"gpu_batch\"\n"
			 ".asciz \"8@%0\"\n"
			 "994: .balign 4\n"
			 ".popsection\n"
			 ".ifndef _.stapsdt.base\n"
			 ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
			 ".weak _.stapsdt.base\n"
			 ".hidden _.stapsdt.base\n"
			 "_.stapsdt.base: .space 1\n"
			 ".size _.stapsdt.base, 1\n"
			 ".popsection\n"
			 ".endif\n"
			 : : "r"(b) : "memory");
}

struct api_slot {
	_Atomic uint64_t seq;	/* ticket + 1 once written */
	uint64_t ts;
	uint32_t corr, kind, tid, pad;
};

static struct api_slot ring[API_RING];
static _Atomic uint64_t ring_head;
static uint64_t ring_tail;
static _Atomic int ring_on;
static _Atomic uint64_t dropped;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static struct cirron_gpu_rec *queue;
static size_t qhead, qlen, qcap;	/* records qhead..qlen-1 wait */

static struct name_slot { const char *p; uint32_t id; } *names;
static size_t names_cap, names_n;

static __thread uint32_t my_tid;

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int queue__start(void)
{
	pthread_mutex_lock(&qlock);
	qcap = 4096;
	qhead = qlen = 0;
	queue = malloc(qcap * sizeof(*queue));
	names_cap = 1024;
	names_n = 0;
	names = calloc(names_cap, sizeof(*names));
	pthread_mutex_unlock(&qlock);
	if (!queue || !names) {
		queue__stop();
		return -ENOMEM;
	}
	ring_tail = atomic_load(&ring_head);
	atomic_store(&ring_on, 1);
	return 0;
}

void queue__stop(void)
{
	atomic_store(&ring_on, 0);
	pthread_mutex_lock(&qlock);
	free(queue);
	queue = NULL;
	qhead = qlen = qcap = 0;
	free(names);
	names = NULL;
	names_cap = names_n = 0;
	pthread_mutex_unlock(&qlock);
	madvise(ring, sizeof(ring), MADV_DONTNEED);	/* its pages back to the system */
}

void queue__api(uint32_t corr, uint32_t kind)
{
	uint64_t t;
	struct api_slot *s;

	if (!atomic_load_explicit(&ring_on, memory_order_relaxed))
		return;
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	/* the ticket first, then the time: a drain that read the head at T sees every call
	 * stamped before T (queue__drain_api) */
	t = atomic_fetch_add_explicit(&ring_head, 1, memory_order_acq_rel);
	s = &ring[t & (API_RING - 1)];
	s->ts = mono_ns();
	s->corr = corr;
	s->kind = kind;
	s->tid = my_tid;
	atomic_store_explicit(&s->seq, t + 1, memory_order_release);
}

static void push_locked(const struct cirron_gpu_rec *r)
{
	if (qlen == qcap && qhead) {	/* what was handed over makes room */
		memmove(queue, queue + qhead, (qlen - qhead) * sizeof(*queue));
		qlen -= qhead;
		qhead = 0;
	}
	if (qlen == qcap) {
		struct cirron_gpu_rec *v;

		if (qcap >= QUEUE_MAX || !(v = realloc(queue, 2 * qcap * sizeof(*v)))) {
			atomic_fetch_add(&dropped, 1);
			return;
		}
		queue = v;
		qcap *= 2;
	}
	queue[qlen++] = *r;
}

void queue__push(const struct cirron_gpu_rec *r)
{
	pthread_mutex_lock(&qlock);
	if (queue)
		push_locked(r);
	pthread_mutex_unlock(&qlock);
}

static size_t name_slot(const char *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 24) & (names_cap - 1);
}

static int names_grow(void)
{
	size_t cap = names_cap * 2;
	struct name_slot *v = calloc(cap, sizeof(*v)), *old = names;
	size_t oldcap = names_cap;

	if (!v)
		return -ENOMEM;
	names = v;
	names_cap = cap;
	for (size_t i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].p)
			continue;
		for (j = name_slot(old[i].p); names[j].p; j = (j + 1) & (cap - 1))
			;
		names[j] = old[i];
	}
	free(old);
	return 0;
}

/* CUPTI shares one name string between the records of a kernel: the pointer is the key. */
uint32_t queue__name(const char *name)
{
	struct cirron_gpu_rec r = { .type = GPU_REC_NAME };
	size_t i, len;
	uint32_t id = 0;

	if (!name)
		return 0;
	pthread_mutex_lock(&qlock);
	if (!names || names_n >= NAMES_MAX)
		goto out;
	if ((names_n + 1) * 2 > names_cap && names_grow())
		goto out;
	for (i = name_slot(name); names[i].p; i = (i + 1) & (names_cap - 1))
		if (names[i].p == name) {
			id = names[i].id;
			goto out;
		}
	id = (uint32_t)++names_n;
	names[i].p = name;
	names[i].id = id;
	len = strnlen(name, CIRRON_GPU_NAME_MAX);
	r.corr = id;
	/* a chunk of CIRRON_GPU_NAME_CHUNK bytes says more follow; a shorter one (maybe 0
	 * bytes) ends the name */
	for (size_t off = 0;; off += CIRRON_GPU_NAME_CHUNK) {
		size_t n = len - off < CIRRON_GPU_NAME_CHUNK ? len - off : CIRRON_GPU_NAME_CHUNK;

		r.sub = (uint8_t)n;
		memset(&r.a, 0, 3 * sizeof(uint64_t));
		memcpy(&r.a, name + off, n);
		push_locked(&r);
		if (n < CIRRON_GPU_NAME_CHUNK)
			break;
	}
out:
	pthread_mutex_unlock(&qlock);
	return id;
}

uint64_t queue__drain_api(void)
{
	uint64_t t0 = mono_ns(), head = atomic_load_explicit(&ring_head, memory_order_acquire);
	struct cirron_gpu_rec r = { .type = GPU_REC_API };
	bool complete = true;

	pthread_mutex_lock(&qlock);
	while (queue && ring_tail < head) {
		struct api_slot *s = &ring[ring_tail & (API_RING - 1)];
		uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		int spins = 0;

		while (seq < ring_tail + 1 && spins++ < 1000)	/* a writer between its ticket
								 * and its release */
			seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (seq < ring_tail + 1) {
			complete = false;	/* left for the next drain */
			break;
		}
		if (seq > ring_tail + 1) {	/* overwritten: the ring went round */
			atomic_fetch_add(&dropped, 1);
			ring_tail++;
			continue;
		}
		r.corr = s->corr;
		r.a = s->ts;
		r.b = (uint64_t)s->tid << 32 | s->kind;
		push_locked(&r);
		ring_tail++;
	}
	pthread_mutex_unlock(&qlock);
	return complete ? t0 : 0;
}

void queue__send(void)
{
	static struct cirron_gpu_batch b;
	static uint64_t seq;

	for (;;) {
		size_t n;

		if (!cirron_gpu_batch_semaphore)
			return;	/* nobody to hand it to: kept until deactivation drops it */
		pthread_mutex_lock(&qlock);
		n = qlen - qhead < CIRRON_GPU_BATCH_RECS ? qlen - qhead : CIRRON_GPU_BATCH_RECS;
		if (n) {
			memcpy(b.recs, queue + qhead, n * sizeof(*queue));
			qhead += n;
			if (qhead == qlen)
				qhead = qlen = 0;
		}
		pthread_mutex_unlock(&qlock);
		if (!n)
			return;
		b.magic = CIRRON_GPU_MAGIC;
		b.version = CIRRON_GPU_VERSION;
		b.n = (uint16_t)n;
		b.seq = ++seq;
		cirron_gpu_batch(&b);
	}
}

uint64_t queue__dropped(void)
{
	return atomic_load(&dropped);
}
