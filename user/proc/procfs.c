// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include "proc/procfs.h"

int procfs__parse_maps_line(const char *line, struct proc_map *m)
{
	unsigned int maj, min;
	unsigned long long ino;
	char perms[5];
	int pos = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %llu %n",
		   &m->start, &m->end, perms, &m->offset, &maj, &min, &ino, &pos) < 7 || !pos)
		return -EINVAL;
	if (line[pos] != '/' || ino == 0)
		return -EINVAL;	/* anonymous, [heap], [vdso], ... */
	m->exec = perms[2] == 'x';
	m->dev = makedev(maj, min);
	m->ino = (ino_t)ino;
	m->path = strndup(line + pos, strcspn(line + pos, "\n"));
	return m->path ? 0 : -ENOMEM;
}

int procfs__read_maps(int pid, struct proc_maps *maps)
{
	char fn[64], *line = NULL;
	size_t cap = 0, lcap = 0;
	FILE *f;
	int err = 0;

	maps->v = NULL;
	maps->n = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct proc_map m;

		if (procfs__parse_maps_line(line, &m))
			continue;
		if (maps->n == cap) {
			struct proc_map *v;

			cap = cap ? cap * 2 : 64;
			v = realloc(maps->v, cap * sizeof(*v));
			if (!v) {
				free(m.path);
				err = -ENOMEM;
				break;
			}
			maps->v = v;
		}
		maps->v[maps->n++] = m;
	}
	free(line);
	fclose(f);
	if (err)
		procfs__free_maps(maps);
	return err;
}

void procfs__free_maps(struct proc_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}

static int read_small_file(const char *fn, char *buf, size_t size, size_t *len)
{
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < size - 1 && (n = read(fd, buf + off, size - 1 - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = 0;
	if (len)
		*len = off;
	return 0;
}

int procfs__stat(int pid, char *state, int *ppid)
{
	char fn[64], buf[512], *p;
	int err;

	snprintf(fn, sizeof(fn), "/proc/%d/stat", pid);
	err = read_small_file(fn, buf, sizeof(buf), NULL);
	if (err)
		return err;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 1, " %c %d", state, ppid) != 2)
		return -EINVAL;
	return 0;
}

bool procfs__stop_pending(int pid)
{
	char fn[64], buf[4096], *p;
	const char *fields[] = { "\nShdPnd:", "\nSigPnd:" };

	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
	if (read_small_file(fn, buf, sizeof(buf), NULL))
		return false;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if ((p = strstr(buf, fields[i])) &&
		    (strtoull(p + strlen(fields[i]), NULL, 16) >> (SIGSTOP - 1)) & 1)
			return true;
	return false;
}

int procfs__descendants(int pid, int *out, int max)
{
	int (*all)[2] = NULL, nall = 0, n = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {	/* every (pid, ppid) once */
		int p = atoi(de->d_name), ppid, (*v)[2];
		char state;

		if (p <= 0 || procfs__stat(p, &state, &ppid))
			continue;
		v = realloc(all, (size_t)(nall + 1) * sizeof(*all));
		if (!v)
			break;
		all = v;
		all[nall][0] = p;
		all[nall++][1] = ppid;
	}
	closedir(d);
	/* breadth first: out[] grows while it is walked */
	for (int i = -1; i < n; i++) {
		int parent = i < 0 ? pid : out[i];

		for (int j = 0; j < nall && n < max; j++)
			if (all[j][1] == parent)
				out[n++] = all[j][0];
	}
	free(all);
	return n;
}

/* Threads other than the main one that have not left yet. */
static bool other_threads(int pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (n < 2 && (de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n > 1;
}

int procfs__alive(int pid)
{
	char state;
	int ppid;

	if (procfs__stat(pid, &state, &ppid) || state == 'X')
		return 0;
	/* A zombie main thread with others still leaving (the main thread ended alone, or an
	 * exit_group is under way): the process has not exited yet, its exit status is to come */
	return state != 'Z' || other_threads(pid);
}

bool procfs__read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static bool same_file(const char *path, const struct proc_map *m)
{
	struct stat st;

	return !stat(path, &st) && st.st_dev == m->dev && st.st_ino == m->ino;
}

int procfs__host_path(int pid, const struct proc_map *m, char *buf, size_t size)
{
	snprintf(buf, size, "%s", m->path);
	if (same_file(buf, m))
		return 0;
	snprintf(buf, size, "/proc/%d/root%s", pid, m->path);
	if (same_file(buf, m))
		return 0;
	snprintf(buf, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (same_file(buf, m))
		return 0;
	return -ENOENT;
}

const char *procfs__env_find(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *p = env, *end = env + len;

	while (p < end) {
		size_t l = strnlen(p, (size_t)(end - p));

		if (l > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
			*vlen = l - nlen - 1;
			return p + nlen + 1;
		}
		p += l + 1;
	}
	return NULL;
}

long procfs__env_long_from(const char *env, size_t len, const char *name, long def)
{
	size_t vlen;
	const char *val = procfs__env_find(env, len, name, &vlen);
	char num[32], *e;
	long v;

	/* A copy: the last entry need not end in a NUL within len. */
	if (!val || !vlen || vlen >= sizeof(num))
		return def;
	memcpy(num, val, vlen);
	num[vlen] = 0;
	errno = 0;
	v = strtol(num, &e, 10);
	if (errno || e == num || *e || v < 0)
		return def;
	return v;
}

long procfs__env_long(int pid, const char *name, long def)
{
	char fn[64];
	char *buf = malloc(1 << 20);	/* environ blocks are small; 1 MiB is ample */
	size_t len = 0;
	long v = def;

	snprintf(fn, sizeof(fn), "/proc/%d/environ", pid);
	if (buf && !read_small_file(fn, buf, 1 << 20, &len))
		v = procfs__env_long_from(buf, len, name, def);
	free(buf);
	return v;
}

int procfs__comm(int pid, char *buf, size_t size)
{
	char fn[64];
	int err;

	snprintf(fn, sizeof(fn), "/proc/%d/comm", pid);
	err = read_small_file(fn, buf, size, NULL);
	if (!err)
		buf[strcspn(buf, "\n")] = 0;
	return err;
}

int procfs__cmdline(int pid, char *buf, size_t size)
{
	char fn[64];
	size_t len;
	int err;

	snprintf(fn, sizeof(fn), "/proc/%d/cmdline", pid);
	err = read_small_file(fn, buf, size, &len);
	if (err)
		return err;
	if (!len)
		return -ESRCH;	/* a zombie or a kernel thread */
	for (size_t i = 0; i + 1 < len; i++)	/* the NULs between arguments */
		if (!buf[i])
			buf[i] = ' ';
	return 0;
}

uint64_t procfs__start_ticks(int pid)
{
	char fn[64], buf[1024], *p;
	unsigned long long v = 0;
	int field = 2;

	snprintf(fn, sizeof(fn), "/proc/%d/stat", pid);
	if (read_small_file(fn, buf, sizeof(buf), NULL))
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* fields after comm start at 3; starttime is field 22 */
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%llu", &v) != 1)
		return 0;
	return v;
}
