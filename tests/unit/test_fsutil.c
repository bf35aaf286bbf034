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
	ASSERT_EQ(fs__check_dir(l), -FS_ERR_FOREIGN_LINK, "a link of another user");
	unit__rm_rf(tmp);
}

/* fs__open_dir walks level by level: a link of another user anywhere on the way is refused
 * before anything is made past it, ours and root's are followed (relative and absolute
 * targets), a world-writable level without the sticky bit is refused, and the level refused
 * is named. */
static void walk_checks_every_level(void)
{
	char tmp[PATH_MAX], p[PATH_MAX + 64], q[PATH_MAX + 64], where[PATH_MAX + 64];
	struct stat st;
	int fd;

	if (!unit__mkdtemp(tmp, sizeof(tmp)))
		return;
	snprintf(p, sizeof(p), "%s/a/b/c", tmp);
	fd = fs__open_dir(p, FS_DIR_CREATE | FS_DIR_OWNED, 0750, where, sizeof(where));
	if (ASSERT_TRUE(fd >= 0, "made a/b/c"))
		close(fd);
	snprintf(p, sizeof(p), "%s/a/b/c", tmp);
	ASSERT_OK(stat(p, &st), "a/b/c exists");
	/* our own links: relative, then absolute, then one to a link */
	snprintf(p, sizeof(p), "%s/rel", tmp);
	ASSERT_OK(symlink("a/b", p), "rel link");
	snprintf(q, sizeof(q), "%s/abs", tmp);
	snprintf(where, sizeof(where), "%s/a", tmp);
	ASSERT_OK(symlink(where, q), "abs link");
	snprintf(p, sizeof(p), "%s/rel/c/../c/d", tmp);
	fd = fs__open_dir(p, FS_DIR_CREATE, 0750, NULL, 0);
	if (ASSERT_TRUE(fd >= 0, "through our relative link, with ..")) {
		close(fd);
		snprintf(p, sizeof(p), "%s/a/b/c/d", tmp);
		ASSERT_OK(stat(p, &st), "made where the link points");
	}
	snprintf(p, sizeof(p), "%s/abs/b", tmp);
	fd = fs__open_dir(p, 0, 0, NULL, 0);
	if (ASSERT_TRUE(fd >= 0, "through our absolute link"))
		close(fd);
	/* a loop of links */
	snprintf(p, sizeof(p), "%s/loop", tmp);
	ASSERT_OK(symlink("loop", p), "loop");
	snprintf(p, sizeof(p), "%s/loop/x", tmp);
	ASSERT_EQ(fs__open_dir(p, FS_DIR_CREATE, 0750, NULL, 0), -ELOOP, "a loop of links");
	/* a world-writable level, not sticky: refused and named, nothing made under it */
	snprintf(p, sizeof(p), "%s/a", tmp);
	chmod(p, 0777);
	snprintf(p, sizeof(p), "%s/a/b/new", tmp);
	ASSERT_EQ(fs__open_dir(p, FS_DIR_CREATE, 0750, where, sizeof(where)),
		  -FS_ERR_OTHERS_WRITE, "a level others may write");
	snprintf(p, sizeof(p), "%s/a", tmp);
	ASSERT_STREQ(where, p, "the level named");
	snprintf(p, sizeof(p), "%s/a/b/new", tmp);
	ASSERT_EQ(stat(p, &st), -1, "nothing made past it");
	snprintf(p, sizeof(p), "%s/a", tmp);
	chmod(p, 01777);
	snprintf(p, sizeof(p), "%s/a/b", tmp);
	fd = fs__open_dir(p, 0, 0, NULL, 0);
	if (ASSERT_TRUE(fd >= 0, "sticky: like /tmp"))
		close(fd);
	if (geteuid() == 0) {
		/* another user's link at a level: refused, nothing made where it points */
		snprintf(p, sizeof(p), "%s/a/b/evil", tmp);
		snprintf(q, sizeof(q), "%s/a/b/c", tmp);
		ASSERT_OK(symlink(q, p), "plant");
		ASSERT_OK(lchown(p, 65534, 65534), "lchown");
		snprintf(p, sizeof(p), "%s/a/b/evil/spool", tmp);
		ASSERT_EQ(fs__open_dir(p, FS_DIR_CREATE, 0750, where, sizeof(where)),
			  -FS_ERR_FOREIGN_LINK, "another user's link");
		snprintf(p, sizeof(p), "%s/a/b/evil", tmp);
		ASSERT_STREQ(where, p, "the link named");
		snprintf(p, sizeof(p), "%s/a/b/c/spool", tmp);
		ASSERT_EQ(stat(p, &st), -1, "nothing made through it");
		/* the last level another user's: refused when we write there */
		snprintf(p, sizeof(p), "%s/a/b/c", tmp);
		ASSERT_OK(chown(p, 65534, 65534), "chown");
		ASSERT_EQ(fs__open_dir(p, FS_DIR_OWNED, 0, NULL, 0), -FS_ERR_FOREIGN_OWNER, "owned");
		fd = fs__open_dir(p, 0, 0, NULL, 0);
		if (ASSERT_TRUE(fd >= 0, "walked through"))
			close(fd);
	}
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
	RUN_TEST(walk_checks_every_level);
	RUN_TEST(temp_files_never_follow_links);
	RUN_TEST(spool_ignores_planted_links);
	return unit__done();
}
