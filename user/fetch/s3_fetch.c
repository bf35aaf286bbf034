// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// s3://BUCKET/PREFIX into a temporary spool (s3_fetch.h): list, then GET each batch.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/s3.h"
#include "fetch/s3_fetch.h"

#define TRIES 3			/* a read-back retries what may be passing (no answer, 5xx) */
#define OBJECT_MAX_BYTES (512ull << 20)	/* the spool reader's limit for a batch */

struct fetch {
	struct s3_config cfg;
	struct s3_url url;
	const char *src;	/* the URL as given, for messages */
	int spoolfd;		/* DIR/spool */
	size_t skipped, fetched, hosts;
	char last_host[256];
};

static bool transient(const struct s3_resp *r)
{
	return !r->status || r->status >= 500;
}

/* "HOST/FILE" under the prefix: FILE a plain name (not hidden, no further level). */
static const char *batch_file_of(const char *rest, char *host, size_t size)
{
	const char *slash = strchr(rest, '/'), *file;
	size_t hl;

	if (!slash)
		return NULL;
	hl = (size_t)(slash - rest);
	file = slash + 1;
	if (!hl || hl >= size || !*file || *file == '.' || strchr(file, '/') ||
	    (hl <= 2 && !strncmp(rest, "..", hl)))
		return NULL;
	memcpy(host, rest, hl);
	host[hl] = 0;
	return file;
}

static void fetch_object(struct fetch *f, const char *key, unsigned long long size)
{
	const char *rest = key + strlen(f->url.prefix) + (*f->url.prefix ? 1 : 0);
	char host[256], why[400];
	const char *file = batch_file_of(rest, host, sizeof(host));
	struct s3_resp r = { 0 };
	FILE *out;
	int fd;

	if (!strncmp(rest, "spans/", 6))
		return;	/* the span rows (--output s3:// writes both): read by --job, and engines */
	if (!file) {
		elog("skipping s3://%s/%s: not PREFIX/<host>/<batch file>", f->url.bucket, key);
		f->skipped++;
		return;
	}
	if (size > OBJECT_MAX_BYTES) {
		elog("skipping s3://%s/%s: larger than %llu MiB", f->url.bucket, key,
		     OBJECT_MAX_BYTES >> 20);
		f->skipped++;
		return;
	}
	fd = openat(f->spoolfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		elog("skipping s3://%s/%s: %s", f->url.bucket, key, errno == EEXIST ?
		     "another host holds a file of that name" : strerror(errno));
		f->skipped++;
		return;
	}
	out = fdopen(fd, "w");
	for (int i = 0; out && i < TRIES; i++) {
		if (i && (ftruncate(fd, 0) || fseek(out, 0, SEEK_SET)))
			break;
		s3_resp__free(&r);
		s3__request(&f->cfg, "GET", f->url.bucket, key, NULL, NULL, 0,
			    out, 120, &r);
		if (!transient(&r))
			break;
	}
	if (!out || fclose(out) || r.status != 200) {
		if (!out)
			close(fd);
		if (r.status != 200 && r.status)
			snprintf(why, sizeof(why), "HTTP %ld", r.status);
		else
			snprintf(why, sizeof(why), "%s", r.status ? strerror(errno) : r.err);
		elog("skipping s3://%s/%s: cannot fetch it: %s", f->url.bucket, key, why);
		unlinkat(f->spoolfd, file, 0);
		f->skipped++;
	} else {
		f->fetched++;
		if (strcmp(host, f->last_host) != 0) {	/* keys come sorted: a host's run together */
			snprintf(f->last_host, sizeof(f->last_host), "%s", host);
			f->hosts++;
		}
	}
	s3_resp__free(&r);
}

/* One page of the listing; *token gets the next page's continuation token, or NULL. */
static int list_page(struct fetch *f, char **token)
{
	char *eprefix = NULL, *etoken = NULL, *query = NULL, *t, why[400];
	const char *pos = NULL, *page;
	struct s3_resp r = { 0 };
	int rc = EXIT_NO_SPOOL;

	if (asprintf(&t, "%s%s", f->url.prefix, *f->url.prefix ? "/" : "") < 0)
		return EXIT_FAILURE_RUNTIME;
	eprefix = s3__encode(t, false);
	free(t);
	etoken = *token ? s3__encode(*token, false) : NULL;
	/* SigV4's canonical query: parameters sorted by name, values encoded */
	if (!eprefix || (*token && !etoken) ||
	    asprintf(&query, "%s%s%slist-type=2&prefix=%s", *token ? "continuation-token=" : "",
		     *token ? etoken : "", *token ? "&" : "", eprefix) < 0) {
		query = NULL;
		rc = EXIT_FAILURE_RUNTIME;
		goto out;
	}
	free(*token);
	*token = NULL;
	for (int i = 0; i < TRIES; i++) {
		s3_resp__free(&r);
		s3__request(&f->cfg, "GET", f->url.bucket, NULL, query, NULL, 0, NULL, 60, &r);
		if (!transient(&r))
			break;
	}
	if (r.status != 200 || !r.body) {
		s3_resp__describe(&r, why, sizeof(why));
		elog("cannot list %s: %s", f->src, why);
		goto out;
	}
	page = r.body;
	for (;;) {
		char *contents = s3__xml_next(page, &pos, "Contents"), *key, *size;
		const char *in = NULL;

		if (!contents)
			break;
		key = s3__xml_next(contents, &in, "Key");
		in = NULL;
		size = s3__xml_next(contents, &in, "Size");
		if (key)
			fetch_object(f, key, size ? strtoull(size, NULL, 10) : 0);
		free(key);
		free(size);
		free(contents);
	}
	pos = NULL;
	t = s3__xml_next(page, &pos, "IsTruncated");
	if (t && !strcmp(t, "true")) {
		pos = NULL;
		*token = s3__xml_next(page, &pos, "NextContinuationToken");
		if (!*token) {
			elog("cannot list %s: a truncated page without a continuation token", f->src);
			free(t);
			goto out;
		}
	}
	free(t);
	rc = 0;
out:
	s3_resp__free(&r);
	free(query);
	free(eprefix);
	free(etoken);
	return rc;
}

int s3_fetch__to_dir(const char *url, char **dir, size_t *skipped)
{
	struct fetch f = { .src = url, .spoolfd = -1 };
	const char *tmp = getenv("TMPDIR");
	char why[600], *token = NULL, *spool = NULL;
	int rc = EXIT_USAGE;

	*dir = NULL;
	*skipped = 0;
	if (s3__parse_url(url, &f.url, why, sizeof(why)) ||
	    s3__config_load(&f.cfg, why, sizeof(why))) {
		elog("%s: %s", url, why);
		return rc;
	}
	rc = EXIT_FAILURE_RUNTIME;
	if (asprintf(dir, "%s/cirron-s3-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		*dir = NULL;
		goto out;
	}
	if (!mkdtemp(*dir) || asprintf(&spool, "%s/spool", *dir) < 0 || mkdir(spool, 0700) ||
	    (f.spoolfd = open(spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		elog("cannot make a temporary spool under %s: %s", tmp && *tmp ? tmp : "/tmp",
		     strerror(errno));
		goto out;
	}
	s3__global_init();
	do {
		rc = list_page(&f, &token);
	} while (!rc && token);
	s3__global_cleanup();
	if (!rc)
		ilog("%s: %zu batches of %zu hosts fetched into %s", url, f.fetched, f.hosts, *dir);
	*skipped = f.skipped;
out:
	free(token);
	free(spool);
	if (f.spoolfd >= 0)
		close(f.spoolfd);
	explicit_bzero(&f.cfg, sizeof(f.cfg));
	if (rc) {
		s3_fetch__remove(*dir);
		*dir = NULL;
	}
	return rc;
}

void s3_fetch__remove(char *dir)
{
	char *spool;
	struct dirent *e;
	DIR *d;

	if (!dir)
		return;
	if (asprintf(&spool, "%s/spool", dir) >= 0) {
		d = opendir(spool);
		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		if (d)
			closedir(d);
		rmdir(spool);
		free(spool);
	}
	rmdir(dir);
	free(dir);
}
