// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include "sink/spool.h"
#include "unit.h"

/* Names in dir, sorted and joined by spaces (hidden ones included). */
static void list_dir(const char *dir, char *out, size_t size)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t off = 0;

	out[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..") && off < size)
			off += (size_t)snprintf(out + off, size - off, "%s%s", off ? " " : "",
						name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static void open_creates_dirs(void)
{
	char tmp[PATH_MAX], root[PATH_MAX + 32], want[PATH_MAX + 64], names[256];
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(root, sizeof(root), "%s/a/b c/d", tmp);
	if (ASSERT_OK(spool__open(&sp, root, 0), "spool__open")) {
		snprintf(want, sizeof(want), "%s/spool", root);
		ASSERT_STREQ(sp.dir, want, "dir = ROOT/spool");
		ASSERT_TRUE(is_dir(want), "ROOT/spool is a directory");
		ASSERT_EQ(sp.bytes_written, 0, "bytes");
		ASSERT_EQ(sp.files_written, 0, "files");
		list_dir(want, names, sizeof(names));
		ASSERT_STREQ(names, "", "the write test left nothing behind");
		spool__close(&sp);
		ASSERT_NULL(sp.dir, "closed");
	}
	/* opening again (it exists now) is fine; so is a trailing slash */
	snprintf(want, sizeof(want), "%s/", root);
	if (ASSERT_OK(spool__open(&sp, want, 0), "spool__open existing"))
		spool__close(&sp);
	unit__rm_rf(tmp);
}

static void open_fails_under_a_file(void)
{
	char tmp[PATH_MAX], file[PATH_MAX + 16], root[PATH_MAX + 32];
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(file, sizeof(file), "%s/plain", tmp);
	if (!ASSERT_OK(unit__write_file(file, "x", 1), "write plain file"))
		goto out;
	/* the parent is a regular file: even root gets ENOTDIR */
	snprintf(root, sizeof(root), "%s/sub", file);
	ASSERT_EQ(spool__open(&sp, root, 0), -ENOTDIR, "root under a regular file");
	ASSERT_NULL(sp.dir, "no dir on failure");
	ASSERT_EQ(spool__open(&sp, file, 0), -ENOTDIR, "root is a regular file");
	ASSERT_NULL(sp.dir, "no dir on failure");

	/* ROOT/spool itself is a regular file */
	snprintf(root, sizeof(root), "%s/r", tmp);
	snprintf(file, sizeof(file), "%s/r/spool", tmp);
	if (ASSERT_OK(mkdir(root, 0755) ? -errno : 0, "mkdir") &&
	    ASSERT_OK(unit__write_file(file, "x", 1), "write spool file"))
		ASSERT_ERR(spool__open(&sp, root, 0), "ROOT/spool is a file");
out:
	unit__rm_rf(tmp);
}

static void open_fails_read_only(void)
{
	char tmp[PATH_MAX], root[PATH_MAX + 32];
	struct spool sp;

	if (geteuid() == 0)
		return;	/* root writes anywhere; open_fails_under_a_file covers root */
	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	chmod(tmp, 0555);
	snprintf(root, sizeof(root), "%s/x", tmp);
	ASSERT_EQ(spool__open(&sp, root, 0), -EACCES, "read-only parent");
	chmod(tmp, 0755);
	unit__rm_rf(tmp);
}

static cJSON *make_batch(int n)
{
	cJSON *b = cJSON_CreateObject();

	cJSON_AddStringToObject(b, "format", "cirron-spool/1");
	cJSON_AddNumberToObject(b, "n", n);
	cJSON_AddStringToObject(b, "text", "tab\t\"quote\" \xc3\xa9");
	cJSON_AddArrayToObject(b, "spans");
	return b;
}

static void write_batches(void)
{
	char tmp[PATH_MAX], path[PATH_MAX + 64], names[512];
	uint64_t total = 0;
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	if (!ASSERT_OK(spool__open(&sp, tmp, 0), "spool__open"))
		goto out;
	for (int seq = 0; seq < 3; seq++) {
		cJSON *b = make_batch(seq), *back;
		size_t len = 0;
		char *text;

		ASSERT_OK(spool__write(&sp, "host-42-9001", (uint64_t)seq * 7, b), "spool__write");
		cJSON_Delete(b);
		snprintf(path, sizeof(path), "%s/host-42-9001.%08d.json", sp.dir, seq * 7);
		text = unit__read_file(path, &len);
		if (!ASSERT_OK_PTR(text, "batch file"))
			continue;
		total += len;
		ASSERT_GT(len, 1, "not empty");
		ASSERT_EQ(text[len - 1], '\n', "ends in a newline");
		ASSERT_EQ(strlen(text), len, "no NUL inside");
		ASSERT_NULL(memchr(text, '\n', len - 1), "one line");
		back = cJSON_Parse(text);
		if (ASSERT_OK_PTR(back, "valid JSON")) {
			ASSERT_EQ(cJSON_GetObjectItem(back, "n")->valueint, seq, "content");
			ASSERT_STREQ(cJSON_GetObjectItem(back, "text")->valuestring,
				     "tab\t\"quote\" \xc3\xa9", "escaping");
		}
		cJSON_Delete(back);
		free(text);
	}
	ASSERT_EQ(sp.files_written, 3, "files_written");
	ASSERT_EQ(sp.bytes_written, total, "bytes_written = sum of file sizes");
	list_dir(sp.dir, names, sizeof(names));
	/* no temp files, no write-test file: only the batches, sorted by seq */
	ASSERT_STREQ(names, "host-42-9001.00000000.json host-42-9001.00000007.json "
		     "host-42-9001.00000014.json", "spool contents");

	/* seq wider than 8 digits still works */
	{
		cJSON *b = make_batch(9);

		ASSERT_OK(spool__write(&sp, "s-1-2", 123456789012ull, b), "long seq");
		cJSON_Delete(b);
		snprintf(path, sizeof(path), "%s/s-1-2.123456789012.json", sp.dir);
		ASSERT_OK(access(path, F_OK) ? -errno : 0, "long seq file");
	}
	spool__close(&sp);
out:
	unit__rm_rf(tmp);
}

static void write_fails_cleanly(void)
{
	char tmp[PATH_MAX], names[256];
	cJSON *b = make_batch(1);
	struct spool sp;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		goto out_b;
	if (!ASSERT_OK(spool__open(&sp, tmp, 0), "spool__open"))
		goto out;
	/* the spool directory vanished under us */
	unit__rm_rf(sp.dir);
	ASSERT_EQ(spool__write(&sp, "h-1-1", 0, b), -ENOENT, "write to a removed spool");
	ASSERT_EQ(sp.files_written, 0, "files_written unchanged");
	ASSERT_EQ(sp.bytes_written, 0, "bytes_written unchanged");
	spool__close(&sp);
	/* a rename that fails must not leave the temp file */
	if (ASSERT_OK(spool__open(&sp, tmp, 0), "spool__open again")) {
		char target[PATH_MAX + 32];

		snprintf(target, sizeof(target), "%s/h-1-1.00000005.json", sp.dir);
		ASSERT_OK(mkdir(target, 0755) ? -errno : 0, "a directory where the file goes");
		ASSERT_ERR(spool__write(&sp, "h-1-1", 5, b), "rename onto a directory");
		list_dir(sp.dir, names, sizeof(names));
		ASSERT_STREQ(names, "h-1-1.00000005.json", "no temp file left");
		ASSERT_EQ(sp.files_written, 0, "files_written unchanged");
	}
	spool__close(&sp);
out:
	unit__rm_rf(tmp);
out_b:
	cJSON_Delete(b);
}

/* The batch of session sid and seq, parsed back (NULL if it is not there). */
static cJSON *read_back(const struct spool *sp, const char *sid, int seq)
{
	char path[PATH_MAX + 64], *text;
	size_t len;
	cJSON *j;

	snprintf(path, sizeof(path), "%s/%s.%08d.json", sp->dir, sid, seq);
	text = unit__read_file(path, &len);
	j = text ? cJSON_Parse(text) : NULL;
	free(text);
	return j;
}

static int hang_list(const cJSON *b, char *out, size_t size)
{
	const cJSON *h = cJSON_GetObjectItem(b, "hang_batches"), *x;
	size_t n = 0;

	out[0] = 0;
	cJSON_ArrayForEach(x, h)
		n += (size_t)snprintf(out + n, size - n, "%s%d", n ? "," : "", x->valueint);
	return h ? 1 : 0;
}

/* Every batch after a session's first hang record lists the batches that hold one (its own
 * included), so a reader of the newest finds them; other sessions' batches do not; a final
 * batch ends the list. */
static void hang_batches_listed(void)
{
	static const char *const want[6] = { NULL, NULL, "2", "2", "2,4", "2,4" };
	char tmp[PATH_MAX], list[256];
	struct spool sp;
	cJSON *b;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	if (!ASSERT_OK(spool__open(&sp, tmp, 0), "spool__open"))
		goto out;
	for (int seq = 0; seq < 6; seq++) {
		b = make_batch(seq);
		if (seq == 2 || seq == 4)
			cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "hangs"), cJSON_CreateObject());
		if (seq == 5)
			cJSON_AddTrueToObject(b, "final");
		ASSERT_OK(spool__write(&sp, "h-1-1", (uint64_t)seq, b), "write h");
		cJSON_Delete(b);
		b = make_batch(seq);
		ASSERT_OK(spool__write(&sp, "o-2-2", (uint64_t)seq, b), "write o");
		cJSON_Delete(b);
	}
	for (int seq = 0; seq < 6; seq++) {
		b = read_back(&sp, "h-1-1", seq);
		if (!ASSERT_OK_PTR(b, "h batch"))
			continue;
		ASSERT_EQ(hang_list(b, list, sizeof(list)), want[seq] != NULL, "listed from the first");
		if (want[seq])
			ASSERT_STREQ(list, want[seq], "the batches with hang records");
		cJSON_Delete(b);
		b = read_back(&sp, "o-2-2", seq);
		ASSERT_EQ(b ? hang_list(b, list, sizeof(list)) : -1, 0, "none for another session");
		cJSON_Delete(b);
	}
	ASSERT_EQ(sp.nhangs, 0, "the final batch ended the list");
	spool__close(&sp);
out:
	unit__rm_rf(tmp);
}

int main(void)
{
	RUN_TEST(open_creates_dirs);
	RUN_TEST(open_fails_under_a_file);
	RUN_TEST(open_fails_read_only);
	RUN_TEST(write_batches);
	RUN_TEST(write_fails_cleanly);
	RUN_TEST(hang_batches_listed);
	return unit__done();
}
