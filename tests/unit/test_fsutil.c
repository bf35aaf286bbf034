// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Safe writes as root: directories others could tamper with are refused, temporary files
// get unguessable names and never follow a planted link, spool files are 0640.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include "common/fsutil.h"
#include "sink/spool.h"
#include "unit.h"

static void dirs_others_may_write_are_refused(void)
{
	char tmp[PATH_MAX], d[PATH_MAX + 16];

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(d, sizeof(d), "%s/d", tmp);
	ASSERT_OK(fs__mkdir_p(d, 0750), "mkdir");
	ASSERT_OK(fs__check_dir(d), "0750");
	chmod(d, 0777);
	ASSERT_EQ(fs__check_dir(d), -FS_ERR_OTHERS_WRITE, "0777");
	chmod(d, 0770);
	ASSERT_EQ(fs__check_dir(d), -FS_ERR_OTHERS_WRITE, "0770");
	chmod(d, 01777);
	ASSERT_OK(fs__check_dir(d), "01777 (sticky, like /tmp)");
	ASSERT_TRUE(strstr(fs__strerror(-FS_ERR_OTHERS_WRITE), "sticky") != NULL, "message");
	if (geteuid() == 0) {
		chmod(d, 0750);
		ASSERT_OK(chown(d, 65534, 65534), "chown");
		ASSERT_EQ(fs__check_dir(d), -FS_ERR_FOREIGN_OWNER, "another user's");
	}
	unit__rm_rf(tmp);
}

static void links_of_others_are_refused(void)
{
	char tmp[PATH_MAX], d[PATH_MAX + 16], l[PATH_MAX + 16];

	if (geteuid() != 0 || !unit__mkdtemp(tmp, sizeof(tmp)))
		return;	/* lchown to another user needs root */
	snprintf(d, sizeof(d), "%s/d", tmp);
	snprintf(l, sizeof(l), "%s/l", tmp);
	ASSERT_OK(fs__mkdir_p(d, 0700), "mkdir");
	ASSERT_OK(symlink(d, l), "symlink");
	ASSERT_OK(fs__check_dir(l), "our own link");
	ASSERT_OK(lchown(l, 65534, 65534), "lchown");
	ASSERT_EQ(fs__check_dir(l), -FS_ERR_FOREIGN_OWNER, "a link of another user");
	unit__rm_rf(tmp);
}

static void temp_files_never_follow_links(void)
{
	char tmp[PATH_MAX], victim[PATH_MAX + 16], path[PATH_MAX], path2[PATH_MAX];
	struct stat st;
	int fd, fd2;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	fd = open(victim, O_WRONLY | O_CREAT, 0600);
	ASSERT_TRUE(fd >= 0 && write(fd, "x", 1) == 1, "victim");
	close(fd);
	fd = fs__create_temp(tmp, "a", 0640, path, sizeof(path));
	fd2 = fs__create_temp(tmp, "a", 0640, path2, sizeof(path2));
	if (ASSERT_TRUE(fd >= 0 && fd2 >= 0, "created")) {
		ASSERT_TRUE(strcmp(path, path2) != 0, "two names");
		ASSERT_OK(fstat(fd, &st), "fstat");
		ASSERT_EQ(st.st_mode & 07777, 0640, "mode");
		close(fd);
		close(fd2);
		/* the name taken by a link: O_EXCL | O_NOFOLLOW refuse it, nothing is written */
		unlink(path);
		ASSERT_OK(symlink(victim, path), "plant");
		ASSERT_EQ(open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0640), -1, "open");
		ASSERT_OK(stat(victim, &st), "victim");
		ASSERT_EQ(st.st_size, 1, "victim untouched");
	}
	unit__rm_rf(tmp);
}

/* Links planted under every name the old spool used: the batch lands whole, at mode 0640,
 * and nothing outside the spool is written. */
static void spool_ignores_planted_links(void)
{
	char tmp[PATH_MAX], victim[PATH_MAX + 16], link[PATH_MAX + 96], want[PATH_MAX + 64];
	struct spool sp;
	struct stat st;
	cJSON *b;
	int fd;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	fd = open(victim, O_WRONLY | O_CREAT, 0600);
	close(fd);
	if (!ASSERT_OK(spool__open(&sp, tmp, 0), "spool__open"))
		goto out;
	snprintf(link, sizeof(link), "%s/.vm-1-2.00000000.tmp", sp.dir);
	ASSERT_OK(symlink(victim, link), "plant");
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "format", "cirron-spool/1");
	ASSERT_OK(spool__write(&sp, "vm-1-2", 0, b), "spool__write");
	cJSON_Delete(b);
	ASSERT_OK(stat(victim, &st), "victim");
	ASSERT_EQ(st.st_size, 0, "victim untouched");
	snprintf(want, sizeof(want), "%s/vm-1-2.00000000.json", sp.dir);
	ASSERT_OK(stat(want, &st), "batch");
	ASSERT_EQ(st.st_mode & 07777, 0640, "batch mode");
	ASSERT_OK(stat(sp.dir, &st), "spool dir");
	ASSERT_EQ(st.st_mode & 07777, 0750 & ~(mode_t)022, "spool dir mode");
	spool__close(&sp);
	chmod(tmp, 0777);	/* the root others may write: refused */
	ASSERT_EQ(spool__open(&sp, tmp, 0), -FS_ERR_OTHERS_WRITE, "root others may write");
	chmod(tmp, 0700);
out:
	unit__rm_rf(tmp);
}

int main(void)
{
	umask(022);
	RUN_TEST(dirs_others_may_write_are_refused);
	RUN_TEST(links_of_others_are_refused);
	RUN_TEST(temp_files_never_follow_links);
	RUN_TEST(spool_ignores_planted_links);
	return unit__done();
}
