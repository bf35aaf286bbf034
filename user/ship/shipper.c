// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The shipper (shipper.h): a queue of batch names, oldest first, each read from the spool when
// its turn comes and handed to the destination; a failure keeps it at the head and waits
// (backoff). One thread per destination: an outage of one never holds up another.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "ship/ship_log.h"
#include "ship/shipper.h"

#define BATCH_MAX_BYTES (512u << 20)	/* as the reader's limit: more is not a batch */
#define BACKOFF_MIN_NS 250000000ull	/* doubles per failure ... */
#define BACKOFF_MAX_NS 4000000000ull	/* ... to this: a destination back after an outage is
					 * used within 4 s, a dead one costs a request per 2-4 s */
#define DRAIN_RETRY_NS 500000000ull	/* while stopping: a destination back during the final
					 * drain is found within half a second */
#define RETRY_AFTER_MAX_S 60.0		/* a Retry-After longer than this is capped */

struct pending {
	char *name;
	uint64_t bytes;
	uint64_t queued_ns;	/* monotonic: the delay to the destination is measured from here */
	bool earlier;		/* an earlier run's: no lingering for more */
};

struct shipper {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* a batch was queued, or stop */
	char *what, *where, *log_name, *log_prefix, *items;
	struct ship_ops ops;
	void *ctx;
	int dirfd, rootfd, logfd;
	struct pending *q;		/* q[head..n): to send, oldest first */
	size_t head, n, cap;
	bool stopping, checked, failing, busy;
	size_t group_max;		/* batches per request, at least 1 */
	uint64_t group_bytes;		/* their files' bytes, at most (but one) */
	uint64_t linger_ns;		/* wait this long for a group to fill (not when stopping) */
	size_t singles;			/* a group was rejected: its batches one at a time */
	bool refused;			/* the last failure will not change by retrying */
	uint64_t deadline_ns;		/* stopping: give up at this time */
	unsigned int seed;		/* the backoff's jitter */
	char **unlogged;		/* log lines the disk did not take yet (full) */
	size_t nunlogged;
	/* health (under mu) */
	uint64_t sent, sent_bytes, sent_items, failed, retries, expired, expired_bytes;
	uint64_t rejected, rejected_bytes, backlog_bytes, delay_ms_last, delay_ms_max;
	char error[320];		/* the last failure, until a success; never a secret */
	char rejected_why[320];		/* the last rejection said */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t shipper__backoff_ns(unsigned int n, double r, double retry_after_s, bool stopping)
{
	uint64_t cap = BACKOFF_MIN_NS, b;

	for (unsigned int i = 1; i < n && cap < BACKOFF_MAX_NS; i++)
		cap *= 2;
	if (cap > BACKOFF_MAX_NS)
		cap = BACKOFF_MAX_NS;
	b = cap / 2 + (uint64_t)((double)cap / 2.0 * (r < 0 ? 0 : r >= 1 ? 0.999 : r));
	if (stopping && b > DRAIN_RETRY_NS)
		b = DRAIN_RETRY_NS;
	if (retry_after_s > 0) {	/* asked for: waited, even while draining */
		uint64_t ra = (uint64_t)((retry_after_s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S :
					  retry_after_s) * 1e9);

		if (ra > b)
			b = ra;
	}
	return b;
}

/* Under mu. A name queued again (its file replaced) is sent once, as it is then. */
static void enqueue(struct shipper *sh, const char *name, uint64_t bytes, uint64_t t)
{
	struct pending *q;

	for (size_t i = sh->head; i < sh->n; i++) {
		if (strcmp(sh->q[i].name, name) != 0)
			continue;
		sh->backlog_bytes += bytes - sh->q[i].bytes;
		sh->q[i].bytes = bytes;
		return;
	}
	if (sh->n == sh->cap) {
		if (sh->head) {	/* reuse the sent slots first */
			memmove(sh->q, sh->q + sh->head, (sh->n - sh->head) * sizeof(*sh->q));
			sh->n -= sh->head;
			sh->head = 0;
		}
		if (sh->n == sh->cap) {
			size_t cap = sh->cap ? sh->cap * 2 : 64;

			q = reallocarray(sh->q, cap, sizeof(*q));
			if (!q)
				return;	/* left for the next start's scan */
			sh->q = q;
			sh->cap = cap;
		}
	}
	sh->q[sh->n] = (struct pending){ .name = strdup(name), .bytes = bytes, .queued_ns = t };
	if (!sh->q[sh->n].name)
		return;
	sh->n++;
	sh->backlog_bytes += bytes;
}

void shipper__written(struct shipper *sh, const char *name, uint64_t bytes)
{
	pthread_mutex_lock(&sh->mu);
	enqueue(sh, name, bytes, now_ns());
	pthread_cond_signal(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
}

/* The whole file, or NULL: *gone when the spool cap (or someone) removed it. */
static char *read_batch(int dirfd, const char *name, size_t *len, bool *gone)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	*gone = fd < 0 && errno == ENOENT;
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= BATCH_MAX_BYTES)
		buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[got] = 0;
	*len = got;
	return buf;
}

/* Appends the lines of what was taken, in one write (a group's lines all land, or none do);
 * a disk that is full keeps them in memory, and they go with the next ones. */
static void log_sent(struct shipper *sh, char **names, const uint64_t *bytes, size_t n)
{
	char *text = NULL, **l;
	size_t len = 0, i;
	FILE *m;
	bool said = sh->nunlogged > 0;

	l = reallocarray(sh->unlogged, sh->nunlogged + n, sizeof(*l));
	if (l) {
		sh->unlogged = l;
		for (i = 0; i < n; i++) {
			char *line = ship_log__line(sh->log_prefix, names[i], bytes[i]);

			if (line)
				l[sh->nunlogged++] = line;
		}
	}
	if (!sh->nunlogged || sh->logfd < 0)
		return;
	m = open_memstream(&text, &len);
	for (i = 0; m && i < sh->nunlogged; i++)
		fprintf(m, "%s\n", sh->unlogged[i]);
	if (m)
		fclose(m);
	if (text && write(sh->logfd, text, len) == (ssize_t)len) {
		for (i = 0; i < sh->nunlogged; i++)
			free(sh->unlogged[i]);
		sh->nunlogged = 0;
	} else if (!said) {
		elog("%s: cannot append to %s: %s; until it can, a restart would send what it does "
		     "not name again", sh->what, sh->log_name, strerror(errno));
	}
	free(text);
}

/* Under mu: wait until t, or until stopping's deadline passes, whichever comes first. */
static void wait_until(struct shipper *sh, uint64_t t)
{
	struct timespec ts;

	for (;;) {
		uint64_t until = sh->stopping && sh->deadline_ns < t ? sh->deadline_ns : t;

		if (now_ns() >= until || (sh->stopping && sh->refused))
			return;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
	}
}

/* Under mu: the k batches at the head are done with (sent, gone, or rejected). */
static void pop_group(struct shipper *sh, size_t k, enum ship_result res, const bool *gone,
		      const struct ship_answer *a, const char *why)
{
	char *names[k ? k : 1];
	uint64_t bytes[k ? k : 1];
	size_t nlog = 0;
	uint64_t now = now_ns();

	for (size_t i = 0; i < k; i++) {
		struct pending *p = &sh->q[sh->head++];	/* only this thread pops */
		uint64_t ms = (now - p->queued_ns) / 1000000;

		sh->backlog_bytes -= p->bytes < sh->backlog_bytes ? p->bytes : sh->backlog_bytes;
		if (gone[i]) {
			sh->expired++;
			sh->expired_bytes += p->bytes;
			free(p->name);
			continue;
		}
		if (res == SHIP_REJECTED) {
			sh->rejected++;
			sh->rejected_bytes += p->bytes;
			if (strcmp(sh->rejected_why, why) != 0)
				elog("%s: %s refused batch %s for good: %s; it is dropped (counted in "
				     "health as rejected)", sh->what, sh->where, p->name, why);
			snprintf(sh->rejected_why, sizeof(sh->rejected_why), "%s", why);
		} else {
			sh->sent++;
			sh->delay_ms_last = ms;
			if (ms > sh->delay_ms_max)
				sh->delay_ms_max = ms;
		}
		/* in the log either way: a rejected batch would be refused again */
		names[nlog] = p->name;
		bytes[nlog++] = p->bytes;
	}
	if (res == SHIP_SENT) {
		sh->sent_bytes += a->bytes;
		sh->sent_items += a->items;
		if (sh->failing)
			elog("%s: upload to %s works again; %zu batches to send", sh->what, sh->where,
			     sh->n - sh->head);
		sh->failing = false;
		*sh->error = 0;
	}
	log_sent(sh, names, bytes, nlog);
	for (size_t i = 0; i < nlog; i++)
		free(names[i]);
}

/* Under mu: how many batches from the head go in the next request. */
static size_t group_size(struct shipper *sh)
{
	size_t k = 0;
	uint64_t bytes = 0;

	if (sh->singles)
		return 1;
	while (sh->head + k < sh->n && k < sh->group_max &&
	       (!k || bytes + sh->q[sh->head + k].bytes <= sh->group_bytes))
		bytes += sh->q[sh->head + k++].bytes;
	return k;
}

/* Under mu: a group still filling (fewer batches than it may hold, the oldest younger than
 * the linger): true after waiting for more, or for its time. */
static bool linger(struct shipper *sh)
{
	uint64_t until;
	struct timespec ts;
	size_t k;

	if (!sh->linger_ns || sh->stopping || sh->singles)
		return false;
	k = group_size(sh);
	until = sh->q[sh->head].queued_ns + sh->linger_ns;
	if (k == sh->group_max || sh->head + k < sh->n || now_ns() >= until ||
	    sh->q[sh->head].earlier)
		return false;	/* full (by count or by bytes), or old enough */
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
	return true;
}

static void *ship_main(void *arg)
{
	struct shipper *sh = arg;
	unsigned int fails = 0;
	char why[300];

	pthread_mutex_lock(&sh->mu);
	for (;;) {
		struct ship_answer a = { 0 };
		enum ship_result res;
		struct ship_item *items;
		char **names;
		bool *gone, checking;
		size_t k, nitems = 0;

		while (sh->head == sh->n && !sh->stopping)
			pthread_cond_wait(&sh->cv, &sh->mu);
		if (sh->head == sh->n || (sh->stopping && now_ns() >= sh->deadline_ns))
			break;
		checking = !sh->checked && sh->ops.check;
		if (!checking && linger(sh))
			continue;
		k = checking ? 0 : group_size(sh);
		names = calloc(k + 1, sizeof(*names));
		items = calloc(k + 1, sizeof(*items));
		gone = calloc(k + 1, sizeof(*gone));
		for (size_t i = 0; names && i < k; i++)
			names[i] = strdup(sh->q[sh->head + i].name);
		sh->busy = true;
		pthread_mutex_unlock(&sh->mu);
		/* the request runs unlocked: the event loop queues batches meanwhile */
		*why = 0;
		if (!names || !items || !gone) {
			snprintf(why, sizeof(why), "out of memory");
			res = SHIP_RETRY;
		} else if (checking) {
			res = sh->ops.check(sh->ctx, &a, why, sizeof(why));
		} else {
			res = SHIP_SENT;
			for (size_t i = 0; i < k && res == SHIP_SENT; i++) {
				size_t len = 0;
				char *data = names[i] ? read_batch(sh->dirfd, names[i], &len, &gone[i]) :
							NULL;

				if (data) {
					items[nitems++] = (struct ship_item){ names[i], data, len };
				} else if (!gone[i]) {
					snprintf(why, sizeof(why), "cannot read spool batch %s: %s",
						 names[i] ? names[i] : "?", strerror(errno));
					res = SHIP_RETRY;
				}
			}
			if (res == SHIP_SENT && nitems)
				res = sh->ops.send(sh->ctx, items, nitems, &a, why, sizeof(why));
		}
		for (size_t i = 0; i < nitems; i++)
			free((char *)items[i].data);
		pthread_mutex_lock(&sh->mu);
		sh->busy = false;
		if (checking && res == SHIP_SENT) {	/* now the batches themselves */
			sh->checked = true;
		} else if (!checking && res == SHIP_REJECTED && nitems > 1) {
			sh->singles = k;	/* which of them? one at a time */
		} else if (!checking && (res == SHIP_SENT || res == SHIP_REJECTED)) {
			pop_group(sh, k, res, gone, &a, why);
			sh->singles -= sh->singles ? k : 0;
			fails = 0;
		} else {
			sh->failed++;
			if (!sh->failing || strcmp(sh->error, why) != 0)
				elog("%s: cannot upload to %s: %s; tracing goes on, batches stay in the "
				     "spool and are retried", sh->what, sh->where, why);
			sh->failing = true;
			snprintf(sh->error, sizeof(sh->error), "%s", why);
			/* at the end, a refusal that retrying will not change is not waited on */
			sh->refused = res == SHIP_REFUSED;
			wait_until(sh, now_ns() + shipper__backoff_ns(++fails, rand_r(&sh->seed) /
					((double)RAND_MAX + 1), a.retry_after_s, sh->stopping));
			if (!(sh->stopping && sh->refused) &&
			    (!sh->stopping || now_ns() < sh->deadline_ns))
				sh->retries++;
		}
		for (size_t i = 0; names && i < k; i++)
			free(names[i]);
		free(names);
		free(items);
		free(gone);
		if (sh->stopping && sh->refused)
			break;
	}
	pthread_mutex_unlock(&sh->mu);
	return NULL;
}

static void queue_unsent(void *arg, const char *name, uint64_t bytes)
{
	struct shipper *sh = arg;

	enqueue(sh, name, bytes, now_ns());	/* before the thread starts: no lock needed */
	if (sh->n)
		sh->q[sh->n - 1].earlier = true;
}

static void free_shipper(struct shipper *sh)
{
	for (size_t i = sh->head; i < sh->n; i++)
		free(sh->q[i].name);
	free(sh->q);
	for (size_t i = 0; i < sh->nunlogged; i++)
		free(sh->unlogged[i]);
	free(sh->unlogged);
	if (sh->dirfd >= 0)
		close(sh->dirfd);
	if (sh->rootfd >= 0)
		close(sh->rootfd);
	if (sh->logfd >= 0)
		close(sh->logfd);
	if (sh->ops.free_ctx)
		sh->ops.free_ctx(sh->ctx);
	pthread_mutex_destroy(&sh->mu);
	pthread_cond_destroy(&sh->cv);
	free(sh->what);
	free(sh->where);
	free(sh->log_name);
	free(sh->log_prefix);
	free(sh->items);
	free(sh);
}

struct shipper *shipper__start(const struct shipper_config *c, const char *root,
			       int spool_dirfd, char *why, size_t why_size)
{
	struct shipper *sh = calloc(1, sizeof(*sh));
	pthread_condattr_t ca;
	int err;

	if (!sh) {
		if (c->ops->free_ctx)
			c->ops->free_ctx(c->ctx);
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	sh->ops = *c->ops;
	sh->ctx = c->ctx;
	sh->group_max = c->group_max ? c->group_max : 1;
	sh->group_bytes = c->group_bytes ? c->group_bytes : UINT64_MAX;
	sh->linger_ns = (uint64_t)(c->linger_s * 1e9);
	sh->rootfd = sh->logfd = -1;
	sh->seed = (unsigned int)(now_ns() ^ (uint64_t)getpid() ^ (uintptr_t)sh);
	pthread_mutex_init(&sh->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sh->cv, &ca);
	pthread_condattr_destroy(&ca);
	sh->what = strdup(c->what);
	sh->where = strdup(c->where);
	sh->log_name = strdup(c->log_name);
	sh->log_prefix = strdup(c->log_prefix);
	sh->items = strdup(c->items ? c->items : "items");
	sh->dirfd = fcntl(spool_dirfd, F_DUPFD_CLOEXEC, 0);
	if (!sh->what || !sh->where || !sh->log_name || !sh->log_prefix || !sh->items) {
		snprintf(why, why_size, "out of memory");
		goto fail;
	}
	if (sh->dirfd >= 0)	/* the root, as the spool walked it (spool__open) */
		sh->rootfd = openat(sh->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sh->rootfd < 0) {
		snprintf(why, why_size, "cannot open %s: %s", root, strerror(errno));
		goto fail;
	}
	/* what an earlier run left: oldest first, before this run's batches */
	ship_log__scan(sh->rootfd, sh->dirfd, sh->log_name, sh->log_prefix, queue_unsent, sh);
	sh->logfd = openat(sh->rootfd, sh->log_name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
			   O_CLOEXEC, 0640);
	if (sh->logfd < 0) {
		snprintf(why, why_size, "cannot write %s/%s: %s", root, sh->log_name,
			 strerror(errno));
		goto fail;
	}
	if (sh->n)
		elog("%s: %zu batches of earlier runs in %s to send", sh->what, sh->n, root);
	err = pthread_create(&sh->thread, NULL, ship_main, sh);
	if (err) {
		snprintf(why, why_size, "cannot start the %s thread: %s", sh->what, strerror(err));
		goto fail;
	}
	return sh;
fail:
	free_shipper(sh);
	return NULL;
}

bool shipper__idle(struct shipper *sh)
{
	bool idle;

	pthread_mutex_lock(&sh->mu);
	idle = sh->head == sh->n && !sh->busy;
	pthread_mutex_unlock(&sh->mu);
	return idle;
}

cJSON *shipper__health(struct shipper *sh)
{
	cJSON *h = cJSON_CreateObject();
	char key[64];

	pthread_mutex_lock(&sh->mu);
	cJSON_AddNumberToObject(h, "sent", (double)sh->sent);
	cJSON_AddNumberToObject(h, "sent_bytes", (double)sh->sent_bytes);
	snprintf(key, sizeof(key), "sent_%s", sh->items);
	cJSON_AddNumberToObject(h, key, (double)sh->sent_items);
	cJSON_AddNumberToObject(h, "failed", (double)sh->failed);
	cJSON_AddNumberToObject(h, "retries", (double)sh->retries);
	cJSON_AddNumberToObject(h, "backlog_objects", (double)(sh->n - sh->head));
	cJSON_AddNumberToObject(h, "backlog_bytes", (double)sh->backlog_bytes);
	cJSON_AddNumberToObject(h, "expired", (double)sh->expired);
	cJSON_AddNumberToObject(h, "expired_bytes", (double)sh->expired_bytes);
	cJSON_AddNumberToObject(h, "rejected", (double)sh->rejected);
	cJSON_AddNumberToObject(h, "rejected_bytes", (double)sh->rejected_bytes);
	cJSON_AddNumberToObject(h, "delay_ms_last", (double)sh->delay_ms_last);
	cJSON_AddNumberToObject(h, "delay_ms_max", (double)sh->delay_ms_max);
	if (*sh->error)
		cJSON_AddStringToObject(h, "error", sh->error);
	else
		cJSON_AddNullToObject(h, "error");
	pthread_mutex_unlock(&sh->mu);
	return h;
}

void shipper__drain(struct shipper *sh, double drain_s)
{
	if (!sh)
		return;
	pthread_mutex_lock(&sh->mu);
	if (!sh->stopping) {
		sh->stopping = true;
		sh->deadline_ns = now_ns() + (uint64_t)(drain_s * 1e9);
	}
	pthread_cond_signal(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
}

void shipper__stop(struct shipper *sh, double drain_s)
{
	struct timespec ts;
	uint64_t left_ns;
	size_t left;

	if (!sh)
		return;
	shipper__drain(sh, drain_s);
	pthread_mutex_lock(&sh->mu);
	left_ns = sh->deadline_ns > now_ns() ? sh->deadline_ns - now_ns() : 0;
	pthread_mutex_unlock(&sh->mu);
	/* a request in flight at the deadline (a slow destination) is cut short: the observer's
	 * stop takes at most drain_s and a second */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(left_ns / 1000000000ull) + 1;
	if (pthread_timedjoin_np(sh->thread, NULL, &ts)) {
		if (sh->ops.cancel)
			sh->ops.cancel(sh->ctx);
		pthread_join(sh->thread, NULL);
	}
	if (sh->nunlogged && sh->logfd >= 0)	/* a last try: the disk may have room now */
		log_sent(sh, NULL, NULL, 0);
	left = sh->n - sh->head;
	if (left)
		elog("%s: %zu batches (%llu bytes) not sent to %s: they stay in the spool, and the "
		     "next start with the same --path sends them", sh->what, left,
		     (unsigned long long)sh->backlog_bytes, sh->where);
	if (sh->nunlogged)
		elog("%s: %zu batches sent to %s are not in %s (the disk refused the lines): a "
		     "start with the same --path sends them again", sh->what, sh->nunlogged,
		     sh->where, sh->log_name);
	free_shipper(sh);
}
