// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The store's span rows back into spool batches (rows_read.h).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "fetch/rows_read.h"
#include "fetch/s3_fetch.h"
#include "tree/session.h"

#define ROWS_MAX_BYTES (1ull << 30)	/* one object's rows, unpacked */

struct rsess {
	char *id;
	cJSON *batch, *spans;
	bool has_root;
	uint64_t min_start, max_end;
};

struct conv {
	struct rsess *s;
	size_t n;
	size_t skipped;
};

/* The whole file, gunzip'd when it is gzip (zlib detects it). */
static char *read_rows(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	gzFile gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
	size_t cap = 1 << 16;
	char *buf = gz ? malloc(cap) : NULL, *b;
	int n;

	*len = 0;
	if (!gz && fd >= 0)
		close(fd);
	while (buf && (n = gzread(gz, buf + *len, (unsigned int)(cap - *len - 1))) > 0) {
		*len += (size_t)n;
		if (cap - *len - 1 == 0) {
			b = cap < ROWS_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	if (buf && n < 0) {
		free(buf);
		buf = NULL;
	}
	if (gz)
		gzclose(gz);
	if (buf)
		buf[*len] = 0;
	return buf;
}

static const char *map_str(const cJSON *m, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* "YYYY-MM-DD hh:mm:ss.nnnnnnnnn" UTC to Unix ns; 0 when it is not one. */
static uint64_t parse_ts(const char *s)
{
	struct tm tm = { 0 };
	const char *frac;
	uint64_t ns = 0;
	int digits = 0;

	if (!s || !(frac = strptime(s, "%Y-%m-%d %H:%M:%S", &tm)))
		return 0;
	if (*frac == '.')
		for (frac++; *frac >= '0' && *frac <= '9' && digits < 9; frac++, digits++)
			ns = ns * 10 + (uint64_t)(*frac - '0');
	for (; digits < 9; digits++)
		ns *= 10;
	return (uint64_t)timegm(&tm) * 1000000000ull + ns;
}

/* A string map's value as the spool had it: JSON numbers, booleans, objects and arrays come
 * back typed; anything else stays a string. */
static cJSON *typed(const char *v)
{
	cJSON *j;

	if ((*v == '{' || *v == '[' || *v == '-' || (*v >= '0' && *v <= '9') ||
	     !strcmp(v, "true") || !strcmp(v, "false")) && (j = cJSON_Parse(v)))
		return j;
	return cJSON_CreateString(v);
}

static void add_u64(cJSON *o, const char *k, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	cJSON_AddRawToObject(o, k, num);
}

static struct rsess *session_of(struct conv *c, const char *id, const cJSON *res)
{
	struct rsess *s;
	cJSON *b;
	const char *v;

	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->s[i].id, id))
			return &c->s[i];
	s = reallocarray(c->s, c->n + 1, sizeof(*s));
	if (!s)
		return NULL;
	c->s = s;
	s = &c->s[c->n++];
	memset(s, 0, sizeof(*s));
	s->id = strdup(id);
	s->min_start = UINT64_MAX;
	s->batch = b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "format", SPOOL_FORMAT);
	cJSON_AddStringToObject(b, "session_id", id);
	v = map_str(res, "process.pid");
	cJSON_AddNumberToObject(b, "pid", v ? atof(v) : 1);
	v = map_str(res, "cirron.rank");
	cJSON_AddNumberToObject(b, "rank", v ? atof(v) : 0);
	v = map_str(res, "cirron.local_rank");
	cJSON_AddNumberToObject(b, "local_rank", v ? atof(v) : 0);
	v = map_str(res, "cirron.world_size");
	cJSON_AddNumberToObject(b, "world_size", v ? atof(v) : 1);
	cJSON_AddStringToObject(b, "host", (v = map_str(res, "host.name")) ? v : "unknown");
	if ((v = map_str(res, "cirron.job")))
		cJSON_AddStringToObject(b, "job", v);
	if ((v = map_str(res, "cirron.job_source")))
		cJSON_AddStringToObject(b, "job_source", v);
	if ((v = map_str(res, "cirron.role")))
		cJSON_AddStringToObject(b, "role", v);
	s->spans = cJSON_CreateArray();
	return s->id && b && s->spans ? s : NULL;
}

/* One otel_traces row as a spool span of its session. */
static int add_row(struct conv *c, const cJSON *row)
{
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(row, "ResourceAttributes");
	const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(row, "SpanAttributes"), *a;
	const cJSON *dur = cJSON_GetObjectItemCaseSensitive(row, "Duration");
	const cJSON *ev_ts = cJSON_GetObjectItemCaseSensitive(row, "Events.Timestamp");
	const cJSON *ev_name = cJSON_GetObjectItemCaseSensitive(row, "Events.Name");
	const cJSON *ev_attrs = cJSON_GetObjectItemCaseSensitive(row, "Events.Attributes");
	const char *sid = map_str(res, "cirron.session"), *span_id = map_str(row, "SpanId");
	const char *parent = map_str(row, "ParentSpanId"), *name = map_str(row, "SpanName");
	const char *state = map_str(attrs, "cirron.status"), *index = map_str(attrs, "cirron.index");
	uint64_t start = parse_ts(map_str(row, "Timestamp"));
	struct rsess *s;
	cJSON *sp, *o, *marks;

	if (!sid || !span_id || !parent || !name || !cJSON_IsNumber(dur) || !start)
		return -EINVAL;
	s = session_of(c, sid, res);
	if (!s)
		return -ENOMEM;
	sp = cJSON_CreateObject();
	add_u64(sp, "span_id", strtoull(span_id, NULL, 16));
	if (*parent)
		add_u64(sp, "parent_id", strtoull(parent, NULL, 16));
	else
		cJSON_AddNullToObject(sp, "parent_id");
	s->has_root |= !*parent;
	cJSON_AddStringToObject(sp, "name", name);
	if (index)
		cJSON_AddNumberToObject(sp, "index", atof(index));
	else
		cJSON_AddNullToObject(sp, "index");
	add_u64(sp, "start_ns", start);
	if (state && !strcmp(state, "open")) {
		cJSON_AddNullToObject(sp, "end_ns");
	} else {
		add_u64(sp, "end_ns", start + (uint64_t)dur->valuedouble);
		add_u64(sp, "duration_ns", (uint64_t)dur->valuedouble);
	}
	cJSON_AddStringToObject(sp, "status", state ? state : "ok");
	o = cJSON_AddObjectToObject(sp, "attrs");
	cJSON_ArrayForEach(a, attrs) {
		if (a->string && cJSON_IsString(a) && strcmp(a->string, "cirron.status") != 0 &&
		    strcmp(a->string, "cirron.index") != 0)
			cJSON_AddItemToObject(o, a->string, typed(a->valuestring));
	}
	marks = cJSON_AddArrayToObject(sp, "marks");
	for (int i = 0; i < cJSON_GetArraySize(ev_name); i++) {
		cJSON *m = cJSON_CreateObject();
		const cJSON *ea = cJSON_GetArrayItem(ev_attrs, i);

		cJSON_AddStringToObject(m, "name", cJSON_GetArrayItem(ev_name, i)->valuestring ?: "");
		add_u64(m, "ts_ns", parse_ts(cJSON_GetStringValue(cJSON_GetArrayItem(ev_ts, i))));
		cJSON_ArrayForEach(a, ea) {
			if (a->string && cJSON_IsString(a))
				cJSON_AddItemToObject(m, a->string, typed(a->valuestring));
		}
		cJSON_AddItemToArray(marks, m);
	}
	cJSON_AddItemToArray(s->spans, sp);
	if (start < s->min_start)
		s->min_start = start;
	if (start + (uint64_t)dur->valuedouble > s->max_end)
		s->max_end = start + (uint64_t)dur->valuedouble;
	return 0;
}

static void convert_file(struct conv *c, int dirfd, const char *name)
{
	size_t len;
	char *text = read_rows(dirfd, name, &len), *line, *save = NULL;
	size_t bad = 0;

	if (!text) {
		elog("skipping %s: cannot read it as rows", name);
		c->skipped++;
		return;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(line);

		bad += !row || add_row(c, row);
		cJSON_Delete(row);
	}
	if (bad) {
		elog("skipping %zu lines of %s: not otel_traces rows of cirron-probe", bad, name);
		c->skipped++;
	}
	free(text);
}

/* The session's batch file, with a root made up if the store has none yet (a running job). */
static int write_session(int dirfd, struct rsess *s)
{
	char name[SESSION_ID_MAX + 32], *text;
	int fd, err = 0;
	size_t len;

	if (!s->has_root) {
		cJSON *root = cJSON_CreateObject(), *a;
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(s->batch, "role"));

		add_u64(root, "span_id", 1);
		cJSON_AddNullToObject(root, "parent_id");
		cJSON_AddStringToObject(root, "name", "cirron.session");
		cJSON_AddNullToObject(root, "index");
		add_u64(root, "start_ns", s->min_start == UINT64_MAX ? 0 : s->min_start);
		cJSON_AddNullToObject(root, "end_ns");
		cJSON_AddStringToObject(root, "status", "open");
		a = cJSON_AddObjectToObject(root, "attrs");
		cJSON_AddStringToObject(a, "role", role ? role : "rank");
		cJSON_AddItemToObject(a, "rank", cJSON_Duplicate(cJSON_GetObjectItem(s->batch,
									"rank"), 1));
		cJSON_AddItemToObject(a, "job", cJSON_Duplicate(cJSON_GetObjectItem(s->batch, "job"),
								1));
		cJSON_AddItemToObject(a, "job_source",
				      cJSON_Duplicate(cJSON_GetObjectItem(s->batch, "job_source"), 1));
		cJSON_AddItemToObject(a, "host", cJSON_Duplicate(cJSON_GetObjectItem(s->batch,
									"host"), 1));
		cJSON_AddArrayToObject(root, "marks");
		cJSON_InsertItemInArray(s->spans, 0, root);
	}
	cJSON_AddNumberToObject(s->batch, "seq", 0);
	add_u64(s->batch, "written_ns", s->max_end);
	cJSON_AddBoolToObject(s->batch, "final", s->has_root);
	cJSON_AddItemToObject(s->batch, "spans", s->spans);
	cJSON_AddObjectToObject(s->batch, "health");
	s->spans = NULL;
	text = cJSON_PrintUnformatted(s->batch);
	snprintf(name, sizeof(name), "%s.00000000.json", s->id);
	fd = text ? openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
	len = text ? strlen(text) : 0;
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		err = -errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	cJSON_free(text);
	return err;
}

int rows_read__convert(const char *dir, size_t *skipped)
{
	char *spool = NULL;
	struct conv c = { 0 };
	struct dirent *e;
	int rc = 0, dfd;
	DIR *d;

	if (asprintf(&spool, "%s/spool", dir) < 0)
		return EXIT_FAILURE_RUNTIME;
	d = opendir(spool);
	free(spool);
	if (!d)
		return EXIT_NO_SPOOL;
	dfd = dirfd(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if ((n > 10 && !strcmp(e->d_name + n - 10, ".ndjson.gz")) ||
		    (n > 7 && !strcmp(e->d_name + n - 7, ".ndjson"))) {
			convert_file(&c, dfd, e->d_name);
			unlinkat(dfd, e->d_name, 0);
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		if (!rc && write_session(dfd, &c.s[i])) {
			elog("cannot write a batch of %s: %s", c.s[i].id, strerror(errno));
			rc = EXIT_FAILURE_RUNTIME;
		}
		cJSON_Delete(c.s[i].batch);
		cJSON_Delete(c.s[i].spans);
		free(c.s[i].id);
	}
	free(c.s);
	closedir(d);
	*skipped += c.skipped;
	return rc;
}

int rows_read__to_dir(const char *url, const char *job, char **dir, size_t *skipped)
{
	char *part;
	size_t n = strlen(url);
	int rc;

	while (n > 5 && url[n - 1] == '/')
		n--;
	if (asprintf(&part, "%.*s/spans/job=%s", (int)n, url, job) < 0)
		return EXIT_FAILURE_RUNTIME;
	/* the partition's objects are DATE/NAME under it: s3_fetch takes the date for a host */
	rc = s3_fetch__to_dir(part, dir, skipped);
	free(part);
	if (!rc)
		rc = rows_read__convert(*dir, skipped);
	if (rc) {
		s3_fetch__remove(*dir);
		*dir = NULL;
	}
	return rc;
}
