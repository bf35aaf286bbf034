// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The S3 upload thread (s3_upload.h): a queue of batch names, oldest first, each read from
// the spool when its turn comes and PUT; a failure keeps it at the head and waits (backoff).
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "common/log.h"
#include "sink/s3_sent.h"
#include "sink/s3_upload.h"

#define BATCH_MAX_BYTES (512u << 20)	/* as the reader's limit: more is not a batch */
#define BACKOFF_MIN_NS 250000000ull	/* doubles per failure ... */
#define BACKOFF_MAX_NS 8000000000ull	/* ... to this: a store back after an outage is used
					 * within 8 s, and a dead one costs a request per 8 s */
#define PUT_TIMEOUT_S 30		/* a slow store is waited for, up to this per batch */

struct pending {
	char *name;
	uint64_t bytes;
	uint64_t queued_ns;	/* monotonic: the delay to the store is measured from here */
};

struct s3_upload {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* a batch was queued, or stop */
	struct s3_url url;
	struct s3_config cfg;
	char host[256];
	int dirfd, rootfd, logfd;
	struct pending *q;		/* q[head..n): to send, oldest first */
	size_t head, n, cap;
	bool stopping, bucket_ok, failing;
	bool refused;			/* the last failure was a 4xx retrying will not change
					 * (keys, bucket): not waited on at the end */
	uint64_t deadline_ns;		/* stopping: give up at this time */
	int cancel;			/* set past the deadline: a request in flight ends */
	/* health (under mu) */
	uint64_t sent, sent_bytes, failed, retries, expired, expired_bytes, backlog_bytes;
	uint64_t delay_ms_last, delay_ms_max;
	char error[320];		/* the last failure, until a success; never a secret */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *object_key(const struct s3_upload *u, const char *name)
{
	char *key;

	if (asprintf(&key, "%s%s%s/%s", u->url.prefix, *u->url.prefix ? "/" : "", u->host,
		     name) < 0)
		return NULL;
	return key;
}

/* "BUCKET/PREFIX/HOST/": what the state log's lines begin with. */
static char *key_prefix(const struct s3_upload *u)
{
	char *p, *key = object_key(u, "");

	if (!key || asprintf(&p, "%s/%s", u->url.bucket, key) < 0)
		p = NULL;
	free(key);
	return p;
}

/* Under mu. A name queued again (its file replaced) is sent once, as it is then. */
static void enqueue(struct s3_upload *u, const char *name, uint64_t bytes, uint64_t t)
{
	struct pending *q;

	for (size_t i = u->head; i < u->n; i++) {
		if (strcmp(u->q[i].name, name) != 0)
			continue;
		u->backlog_bytes += bytes - u->q[i].bytes;
		u->q[i].bytes = bytes;
		return;
	}
	if (u->n == u->cap) {
		if (u->head) {	/* reuse the sent slots first */
			memmove(u->q, u->q + u->head, (u->n - u->head) * sizeof(*u->q));
			u->n -= u->head;
			u->head = 0;
		}
		if (u->n == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;

			q = reallocarray(u->q, cap, sizeof(*q));
			if (!q)
				return;	/* left for the next start's scan */
			u->q = q;
			u->cap = cap;
		}
	}
	u->q[u->n] = (struct pending){ .name = strdup(name), .bytes = bytes, .queued_ns = t };
	if (!u->q[u->n].name)
		return;
	u->n++;
	u->backlog_bytes += bytes;
}

void s3_upload__written(void *arg, const char *name, uint64_t bytes)
{
	struct s3_upload *u = arg;

	pthread_mutex_lock(&u->mu);
	enqueue(u, name, bytes, now_ns());
	pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
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
	*len = got;
	return buf;
}

/* Before the first PUT: S3 says "no such bucket" to a listing (some stores make the bucket
 * at a PUT instead, or answer 500). Returns 0 or -EIO with why. */
static int check_bucket(struct s3_upload *u, long *status, char *why, size_t size)
{
	struct s3_resp r;
	int err = s3__request(&u->cfg, "GET", u->url.bucket, NULL, "list-type=2&max-keys=1",
			      NULL, 0, NULL, 30, &r);

	*status = r.status;

	if (!err && r.status == 200) {
		s3_resp__free(&r);
		return 0;
	}
	s3_resp__describe(&r, why, size);
	if (r.status == 404)
		snprintf(why + strlen(why), size - strlen(why), " (bucket %s)", u->url.bucket);
	s3_resp__free(&r);
	return -EIO;
}

/* Returns 0 (sent), -ENOENT (the file is gone: nothing to send) or -EIO with why. */
static int put_batch(struct s3_upload *u, const char *name, size_t *len, long *status,
		     char *why, size_t size)
{
	struct s3_resp r;
	bool gone;
	char *key, *data = read_batch(u->dirfd, name, len, &gone);
	int err;

	if (!data) {
		snprintf(why, size, "cannot read spool batch %s: %s", name, strerror(errno));
		return gone ? -ENOENT : -EIO;
	}
	key = object_key(u, name);
	if (!key) {
		free(data);
		snprintf(why, size, "out of memory");
		return -EIO;
	}
	err = s3__request(&u->cfg, "PUT", u->url.bucket, key, NULL, data, *len, NULL,
			  PUT_TIMEOUT_S, &r);
	*status = r.status;
	if (!err && r.status != 200)
		err = -EIO;
	if (err)
		s3_resp__describe(&r, why, size);
	s3_resp__free(&r);
	free(key);
	free(data);
	return err;
}

static void log_sent(struct s3_upload *u, const char *name, uint64_t bytes)
{
	char *prefix = key_prefix(u), *line = prefix ? s3_sent__line(prefix, name, bytes) : NULL;

	if (line && u->logfd >= 0 && dprintf(u->logfd, "%s\n", line) < 0)
		dlog("s3: cannot append to %s: %s", S3_SENT_LOG, strerror(errno));
	free(line);
	free(prefix);
}

/* Under mu: wait until t, or until stopping's deadline passes, whichever comes first. */
static void wait_until(struct s3_upload *u, uint64_t t)
{
	struct timespec ts;

	for (;;) {
		uint64_t until = u->stopping && u->deadline_ns < t ? u->deadline_ns : t;

		if (now_ns() >= until || (u->stopping && u->refused))
			return;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&u->cv, &u->mu, &ts);
	}
}

static void *upload_main(void *arg)
{
	struct s3_upload *u = arg;
	uint64_t backoff = BACKOFF_MIN_NS;
	char why[300];
	long status;

	pthread_mutex_lock(&u->mu);
	for (;;) {
		char *name;
		size_t len = 0;
		int err;

		while (u->head == u->n && !u->stopping)
			pthread_cond_wait(&u->cv, &u->mu);
		if (u->head == u->n || (u->stopping && now_ns() >= u->deadline_ns))
			break;
		name = strdup(u->q[u->head].name);
		if (!name)
			break;
		pthread_mutex_unlock(&u->mu);
		/* the request runs unlocked: the event loop queues batches meanwhile */
		status = 0;
		err = u->bucket_ok ? put_batch(u, name, &len, &status, why, sizeof(why)) :
				     check_bucket(u, &status, why, sizeof(why));
		pthread_mutex_lock(&u->mu);
		if (!err && !u->bucket_ok) {
			u->bucket_ok = true;
			free(name);
			continue;
		}
		if (!err || err == -ENOENT) {
			struct pending *p = &u->q[u->head++];	/* only this thread pops */
			uint64_t ms = (now_ns() - p->queued_ns) / 1000000;

			u->backlog_bytes -= p->bytes < u->backlog_bytes ? p->bytes : u->backlog_bytes;
			if (err) {
				u->expired++;
				u->expired_bytes += p->bytes;
			} else {
				u->sent++;
				u->sent_bytes += len;
				u->delay_ms_last = ms;
				if (ms > u->delay_ms_max)
					u->delay_ms_max = ms;
				log_sent(u, name, len);
			}
			free(p->name);
			if (u->failing && !err)
				elog("s3: upload to s3://%s/%s works again; %zu batches to send",
				     u->url.bucket, u->url.prefix, u->n - u->head);
			if (!err) {
				u->failing = false;
				*u->error = 0;
			}
			backoff = BACKOFF_MIN_NS;
			free(name);
			continue;
		}
		u->failed++;
		if (!u->failing || strcmp(u->error, why) != 0)
			elog("s3: cannot upload to s3://%s/%s: %s; tracing goes on, batches stay in "
			     "the spool and are retried", u->url.bucket, u->url.prefix, why);
		u->failing = true;
		snprintf(u->error, sizeof(u->error), "%s", why);
		free(name);
		/* at the end, a refusal that retrying will not change (keys, bucket) is not
		 * waited on */
		u->refused = status >= 400 && status < 500 && status != 408 && status != 429;
		wait_until(u, now_ns() + backoff);
		if (u->stopping && u->refused)
			break;
		backoff = backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : backoff * 2;
		if (!u->stopping || now_ns() < u->deadline_ns)
			u->retries++;
	}
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

static void queue_unsent(void *arg, const char *name, uint64_t bytes)
{
	enqueue(arg, name, bytes, now_ns());	/* before the thread starts: no lock needed */
}

static void free_upload(struct s3_upload *u)
{
	for (size_t i = u->head; i < u->n; i++)
		free(u->q[i].name);
	free(u->q);
	if (u->dirfd >= 0)
		close(u->dirfd);
	if (u->rootfd >= 0)
		close(u->rootfd);
	if (u->logfd >= 0)
		close(u->logfd);
	pthread_mutex_destroy(&u->mu);
	pthread_cond_destroy(&u->cv);
	explicit_bzero(&u->cfg, sizeof(u->cfg));
	free(u);
}

struct s3_upload *s3_upload__start(const struct s3_url *url, const struct s3_config *cfg,
				   const char *host, const char *root, int spool_dirfd,
				   char *why, size_t why_size)
{
	struct s3_upload *u = calloc(1, sizeof(*u));
	pthread_condattr_t ca;
	char *prefix;
	int err;

	if (!u) {
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	u->url = *url;
	u->cfg = *cfg;
	u->cfg.cancel = &u->cancel;
	snprintf(u->host, sizeof(u->host), "%s", *host ? host : "unknown");
	for (char *c = u->host; *c; c++)	/* one path level, as the reader expects */
		if (*c == '/' || (unsigned char)*c < 0x20)
			*c = '_';
	u->rootfd = u->logfd = -1;
	pthread_mutex_init(&u->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->cv, &ca);
	pthread_condattr_destroy(&ca);
	u->dirfd = fcntl(spool_dirfd, F_DUPFD_CLOEXEC, 0);
	if (u->dirfd >= 0)	/* the root, as the spool walked it (spool__open) */
		u->rootfd = openat(u->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u->rootfd < 0) {
		snprintf(why, why_size, "cannot open %s: %s", root, strerror(errno));
		goto fail;
	}
	prefix = key_prefix(u);
	if (prefix)	/* what an earlier run left: oldest first, before this run's batches */
		s3_sent__scan(u->rootfd, u->dirfd, prefix, queue_unsent, u);
	free(prefix);
	u->logfd = openat(u->rootfd, S3_SENT_LOG, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
			  O_CLOEXEC, 0640);
	if (u->logfd < 0) {
		snprintf(why, why_size, "cannot write %s/%s: %s", root, S3_SENT_LOG, strerror(errno));
		goto fail;
	}
	if (u->n)
		elog("s3: %zu batches of earlier runs in %s to send", u->n, root);
	s3__global_init();
	err = pthread_create(&u->thread, NULL, upload_main, u);
	if (err) {
		snprintf(why, why_size, "cannot start the upload thread: %s", strerror(err));
		goto fail;
	}
	return u;
fail:
	free_upload(u);
	return NULL;
}

cJSON *s3_upload__health(struct s3_upload *u)
{
	cJSON *h = cJSON_CreateObject();

	pthread_mutex_lock(&u->mu);
	cJSON_AddNumberToObject(h, "sent", (double)u->sent);
	cJSON_AddNumberToObject(h, "sent_bytes", (double)u->sent_bytes);
	cJSON_AddNumberToObject(h, "failed", (double)u->failed);
	cJSON_AddNumberToObject(h, "retries", (double)u->retries);
	cJSON_AddNumberToObject(h, "backlog_objects", (double)(u->n - u->head));
	cJSON_AddNumberToObject(h, "backlog_bytes", (double)u->backlog_bytes);
	cJSON_AddNumberToObject(h, "expired", (double)u->expired);
	cJSON_AddNumberToObject(h, "expired_bytes", (double)u->expired_bytes);
	cJSON_AddNumberToObject(h, "delay_ms_last", (double)u->delay_ms_last);
	cJSON_AddNumberToObject(h, "delay_ms_max", (double)u->delay_ms_max);
	if (*u->error)
		cJSON_AddStringToObject(h, "error", u->error);
	else
		cJSON_AddNullToObject(h, "error");
	pthread_mutex_unlock(&u->mu);
	return h;
}

void s3_upload__stop(struct s3_upload *u, double drain_s)
{
	struct timespec ts;
	size_t left;

	if (!u)
		return;
	pthread_mutex_lock(&u->mu);
	u->stopping = true;
	u->deadline_ns = now_ns() + (uint64_t)(drain_s * 1e9);
	pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
	/* a request in flight at the deadline (a slow store) is cut short: the observer's
	 * stop takes at most drain_s and a second */
	ts.tv_sec = time(NULL) + (time_t)drain_s + 1;
	ts.tv_nsec = 0;
	if (pthread_timedjoin_np(u->thread, NULL, &ts)) {
		__atomic_store_n(&u->cancel, 1, __ATOMIC_RELAXED);
		pthread_join(u->thread, NULL);
	}
	left = u->n - u->head;
	if (left)
		elog("s3: %zu batches (%llu bytes) not sent to s3://%s/%s: they stay in the spool, "
		     "and the next start with the same --path sends them", left,
		     (unsigned long long)u->backlog_bytes, u->url.bucket, u->url.prefix);
	free_upload(u);
}
