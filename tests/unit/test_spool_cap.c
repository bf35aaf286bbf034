// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --max-spool-mb: which batch files go, in which order, and which never go.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include "sink/spool.h"
#include "unit.h"

#define BATCH 1000	/* bytes of every batch written here: {"pad":"x..."} and a newline */

/* "<id>.<8 or more digits>.json" */
static bool is_batch_name(const char *name)
{
	const char *json = strstr(name, ".json"), *d = json;

	if (!json || json[5] || name[0] == '.')
		return false;
	while (d > name && d[-1] >= '0' && d[-1] <= '9')
		d--;
	return json - d >= 8 && d - name >= 2 && d[-1] == '.';
}

/* The .json files in dir (no hidden ones), sorted, joined by spaces; and the bytes of those
 * named like batches. */
static uint64_t list_batches(const char *dir, char *out, size_t size)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	char path[PATH_MAX];
	uint64_t bytes = 0;
	size_t off = 0;
	struct stat st;

	out[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (name[0] != '.' && len > 5 && !strcmp(name + len - 5, ".json") &&
		    !stat(path, &st) && S_ISREG(st.st_mode)) {
			if (is_batch_name(name))
				bytes += (uint64_t)st.st_size;
			if (off < size)
				off += (size_t)snprintf(out + off, size - off, "%s%s",
							off ? " " : "", name);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return bytes;
}

static bool write_batch(struct spool *sp, const char *sid, uint64_t seq)
{
	char pad[BATCH - 10];
	cJSON *b = cJSON_CreateObject();
	int err;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = 0;
	cJSON_AddStringToObject(b, "pad", pad);
	err = spool__write(sp, sid, seq, b);
	cJSON_Delete(b);
	return ASSERT_OK(err, "spool__write");
}

/* Writes, then checks the spool against the directory: what is counted is what is there. */
static void write_and_check(struct spool *sp, const char *sid, uint64_t seq, const char *want)
{
	char names[1024];
	uint64_t bytes;

	if (!write_batch(sp, sid, seq))
		return;
	bytes = list_batches(sp->dir, names, sizeof(names));
	ASSERT_STREQ(names, want, "batches left");
	ASSERT_EQ(sp->cap.bytes, bytes, "bytes counted = bytes in the directory");
}

static bool open_capped(struct spool *sp, char *tmp, size_t size, uint64_t max_bytes)
{
	if (!unit__mkdtemp(tmp, size))
		return false;
	if (ASSERT_OK(spool__open(sp, tmp, max_bytes), "spool__open"))
		return true;
	unit__rm_rf(tmp);
	return false;
}

static void write_size_is_batch(void)
{
	char tmp[PATH_MAX], names[256];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 1 << 20))
		return;
	write_batch(&sp, "h-1-1", 0);
	ASSERT_EQ(list_batches(sp.dir, names, sizeof(names)), BATCH, "a test batch's bytes");
	ASSERT_EQ(sp.bytes_written, BATCH, "bytes_written");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

static void removes_oldest_first(void)
{
	char tmp[PATH_MAX];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 2500))
		return;
	write_and_check(&sp, "h-1-1", 0, "h-1-1.00000000.json");
	write_and_check(&sp, "h-1-1", 1, "h-1-1.00000000.json h-1-1.00000001.json");
	write_and_check(&sp, "h-1-1", 2, "h-1-1.00000001.json h-1-1.00000002.json");
	for (int seq = 3; seq < 6; seq++)
		write_batch(&sp, "h-1-1", (uint64_t)seq);
	write_and_check(&sp, "h-1-1", 6, "h-1-1.00000005.json h-1-1.00000006.json");
	ASSERT_EQ(sp.cap.removed_files, 5, "removed_files");
	ASSERT_EQ(sp.cap.removed_bytes, 5 * BATCH, "removed_bytes");
	ASSERT_EQ(sp.files_written, 7, "files_written counts them all");
	ASSERT_EQ(sp.bytes_written, 7 * BATCH, "bytes_written counts them all");
	spool__close(&sp);
	ASSERT_NULL(sp.cap.old, "close frees");
	unit__rm_rf(tmp);
}

/* A cap under one batch: every session keeps its newest batch, and only that. */
static void keeps_each_sessions_newest(void)
{
	char tmp[PATH_MAX];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), BATCH / 2))
		return;
	write_and_check(&sp, "a-1-1", 0, "a-1-1.00000000.json");
	write_and_check(&sp, "b-2-2", 0, "a-1-1.00000000.json b-2-2.00000000.json");
	write_and_check(&sp, "a-1-1", 1, "a-1-1.00000000.json a-1-1.00000001.json "
			"b-2-2.00000000.json");
	write_and_check(&sp, "a-1-1", 2, "a-1-1.00000001.json a-1-1.00000002.json "
			"b-2-2.00000000.json");
	write_and_check(&sp, "a-1-1", 3, "a-1-1.00000002.json a-1-1.00000003.json "
			"b-2-2.00000000.json");
	write_and_check(&sp, "b-2-2", 1, "a-1-1.00000003.json b-2-2.00000000.json "
			"b-2-2.00000001.json");
	write_and_check(&sp, "a-1-1", 4, "a-1-1.00000003.json a-1-1.00000004.json "
			"b-2-2.00000001.json");
	ASSERT_EQ(sp.cap.removed_files, 4, "removed_files");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

/* A session's newest batch becomes removable late (when the next is written), yet is still
 * removed in the order it was written. */
static void order_across_sessions(void)
{
	char tmp[PATH_MAX];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 4 * BATCH + BATCH / 2))
		return;
	write_batch(&sp, "a-1-1", 0);
	write_batch(&sp, "b-2-2", 0);
	write_batch(&sp, "b-2-2", 1);
	write_and_check(&sp, "b-2-2", 2, "a-1-1.00000000.json b-2-2.00000000.json "
			"b-2-2.00000001.json b-2-2.00000002.json");
	write_and_check(&sp, "a-1-1", 1, "a-1-1.00000000.json a-1-1.00000001.json "
			"b-2-2.00000001.json b-2-2.00000002.json");
	/* a-1-1.0 became removable after b-2-2.1, but was written before it */
	write_and_check(&sp, "b-2-2", 3, "a-1-1.00000001.json b-2-2.00000001.json "
			"b-2-2.00000002.json b-2-2.00000003.json");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

static bool put(const char *dir, const char *name, size_t bytes, time_t mtime)
{
	char path[PATH_MAX], *data = malloc(bytes);
	struct timespec times[2] = { { mtime, 0 }, { mtime, 0 } };
	bool ok;

	if (!ASSERT_OK_PTR(data, "malloc"))
		return false;
	memset(data, 'x', bytes);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ok = ASSERT_OK(unit__write_file(path, data, bytes), name) &&
	     ASSERT_OK(utimensat(AT_FDCWD, path, times, 0) ? -errno : 0, "utimensat");
	free(data);
	return ok;
}

/* Batches already in the directory count and go first, by age (not name); the newest of
 * each earlier session stays; other files are not ours. */
static void counts_earlier_runs(void)
{
	char tmp[PATH_MAX], dir[PATH_MAX + 8], path[PATH_MAX + 64];
	time_t now = time(NULL);
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(dir, sizeof(dir), "%s/spool", tmp);
	if (!ASSERT_OK(mkdir(dir, 0755) ? -errno : 0, "mkdir") ||
	    !put(dir, "zzz-2-2.00000000.json", BATCH, now - 200) ||
	    !put(dir, "zzz-2-2.00000001.json", BATCH, now - 199) ||
	    !put(dir, "aaa-1-1.00000000.json", BATCH, now - 100) ||
	    !put(dir, "aaa-1-1.00000001.json", BATCH, now - 99) ||
	    !put(dir, "notes.txt", 5 * BATCH, now - 300) ||
	    !put(dir, ".aaa-1-1.00000002.tmp", BATCH, now - 300) ||
	    !put(dir, "short.0001.json", BATCH, now - 300))
		goto out;
	snprintf(path, sizeof(path), "%s/d-1-1.00000000.json", dir);
	if (!ASSERT_OK(mkdir(path, 0755) ? -errno : 0, "a directory named like a batch"))
		goto out;
	if (!ASSERT_OK(spool__open(&sp, tmp, 4 * BATCH + BATCH / 2), "spool__open"))
		goto out;
	ASSERT_EQ(sp.cap.bytes, 4 * BATCH, "only batch files count");
	write_and_check(&sp, "new-3-3", 0, "aaa-1-1.00000000.json aaa-1-1.00000001.json "
			"new-3-3.00000000.json short.0001.json zzz-2-2.00000001.json");
	write_and_check(&sp, "new-3-3", 1, "aaa-1-1.00000001.json new-3-3.00000000.json "
			"new-3-3.00000001.json short.0001.json zzz-2-2.00000001.json");
	/* then the new session's own, oldest first; the earlier sessions' newest stay */
	write_and_check(&sp, "new-3-3", 2, "aaa-1-1.00000001.json new-3-3.00000001.json "
			"new-3-3.00000002.json short.0001.json zzz-2-2.00000001.json");
	write_and_check(&sp, "new-3-3", 3, "aaa-1-1.00000001.json new-3-3.00000002.json "
			"new-3-3.00000003.json short.0001.json zzz-2-2.00000001.json");
	ASSERT_EQ(sp.cap.removed_files, 4, "removed_files");
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	ASSERT_OK(access(path, F_OK) ? -errno : 0, "a foreign file stays");
	snprintf(path, sizeof(path), "%s/.aaa-1-1.00000002.tmp", dir);
	ASSERT_OK(access(path, F_OK) ? -errno : 0, "a temp file stays");
	spool__close(&sp);
out:
	unit__rm_rf(tmp);
}

/* Tracing the same process again restarts its seq: a file replaced by rename is not counted
 * twice, and its name is not removed later as the older file (it is the newest batch). */
static void replaced_file_forgotten(void)
{
	char tmp[PATH_MAX], dir[PATH_MAX + 8];
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(dir, sizeof(dir), "%s/spool", tmp);
	if (!ASSERT_OK(mkdir(dir, 0755) ? -errno : 0, "mkdir") ||
	    !put(dir, "s-1-1.00000000.json", BATCH, time(NULL) - 100) ||
	    !ASSERT_OK(spool__open(&sp, tmp, 2 * BATCH + BATCH / 2), "spool__open"))
		goto out;
	write_and_check(&sp, "s-1-1", 0, "s-1-1.00000000.json");
	write_and_check(&sp, "s-1-1", 1, "s-1-1.00000000.json s-1-1.00000001.json");
	write_and_check(&sp, "s-1-1", 2, "s-1-1.00000001.json s-1-1.00000002.json");
	ASSERT_EQ(sp.cap.removed_files, 1, "removed_files");
	spool__close(&sp);
out:
	unit__rm_rf(tmp);
}

/* Removed behind our back: not counted as removed, and no longer counted as there. */
static void removed_by_someone_else(void)
{
	char tmp[PATH_MAX], path[PATH_MAX + 64];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 2 * BATCH + BATCH / 2))
		return;
	write_batch(&sp, "h-1-1", 0);
	write_batch(&sp, "h-1-1", 1);
	snprintf(path, sizeof(path), "%s/h-1-1.00000000.json", sp.dir);
	ASSERT_OK(unlink(path) ? -errno : 0, "unlink");
	write_and_check(&sp, "h-1-1", 2, "h-1-1.00000001.json h-1-1.00000002.json");
	ASSERT_EQ(sp.cap.removed_files, 0, "removed_files");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

static void no_cap_removes_nothing(void)
{
	char tmp[PATH_MAX], names[512];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 0))
		return;
	for (int seq = 0; seq < 4; seq++)
		write_batch(&sp, "h-1-1", (uint64_t)seq);
	list_batches(sp.dir, names, sizeof(names));
	ASSERT_STREQ(names, "h-1-1.00000000.json h-1-1.00000001.json h-1-1.00000002.json "
		     "h-1-1.00000003.json", "all kept");
	ASSERT_EQ(sp.cap.removed_files, 0, "removed_files");
	ASSERT_EQ(sp.cap.bytes, 0, "nothing tracked without a cap");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

/* Many files through a small cap: the removable list is compacted, not grown without end. */
static void long_run_stays_small(void)
{
	char tmp[PATH_MAX], names[256];
	struct spool sp;

	if (!open_capped(&sp, tmp, sizeof(tmp), 3 * BATCH))
		return;
	for (int seq = 0; seq < 1000; seq++)
		if (!write_batch(&sp, "h-1-1", (uint64_t)seq))
			break;
	ASSERT_EQ(list_batches(sp.dir, names, sizeof(names)), 3 * BATCH, "bytes in dir");
	ASSERT_STREQ(names, "h-1-1.00000997.json h-1-1.00000998.json h-1-1.00000999.json",
		     "the newest three");
	ASSERT_EQ(sp.cap.removed_files, 997, "removed_files");
	ASSERT_LE(sp.cap.old_cap, 64, "removable list capacity");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

int main(void)
{
	RUN_TEST(write_size_is_batch);
	RUN_TEST(removes_oldest_first);
	RUN_TEST(keeps_each_sessions_newest);
	RUN_TEST(order_across_sessions);
	RUN_TEST(counts_earlier_runs);
	RUN_TEST(replaced_file_forgotten);
	RUN_TEST(removed_by_someone_else);
	RUN_TEST(no_cap_removes_nothing);
	RUN_TEST(long_run_stays_small);
	return unit__done();
}
