// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "common/log.h"
#include "proc/sym_cache.h"

struct cache_line {
	char *query, *found;	/* found NULL: the file does not define it */
	uint64_t vaddr, file_offset;
};

struct cache_file {
	char key[96];
	struct cache_line *v;
	size_t n;
	struct cache_file *next;
};

struct sym_cache {
	char *dir;
	int dirfd;		/* dir, opened level by level (fs__open_dir) */
	struct cache_file *files;
};

struct sym_cache *sym_cache__new(const char *dir)
{
	struct sym_cache *c = calloc(1, sizeof(*c));
	char where[4096] = "";

	if (c)
		c->dirfd = -1;
	if (c && dir) {
		c->dir = strdup(dir);
		/* its offsets become uprobes: ours, every level on the way checked */
		c->dirfd = c->dir ? fs__open_dir(dir, FS_DIR_CREATE | FS_DIR_OWNED, 0700, where,
						 sizeof(where)) : -ENOMEM;
		if (c->dirfd < 0) {
			wlog("symbol cache %s unusable (%s%s%s), caching in memory only", dir, where,
			     *where ? ": " : "", fs__strerror(c->dirfd));
			free(c->dir);
			c->dir = NULL;
			c->dirfd = -1;
		}
	}
	return c;
}

const char *sym_cache__default_dir(char *buf, size_t size)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && *x)
		snprintf(buf, size, "%s/cirron-probe", x);
	else if (home && *home)
		snprintf(buf, size, "%s/.cache/cirron-probe", home);
	else
		snprintf(buf, size, "/var/cache/cirron-probe");
	return buf;
}

static void free_file(struct cache_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].query);
		free(f->v[i].found);
	}
	free(f->v);
	free(f);
}

void sym_cache__free(struct sym_cache *c)
{
	if (!c)
		return;
	while (c->files) {
		struct cache_file *f = c->files;

		c->files = f->next;
		free_file(f);
	}
	free(c->dir);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
}

static int add_line(struct cache_file *f, const char *query, const char *found, uint64_t vaddr,
		    uint64_t off)
{
	struct cache_line *v = realloc(f->v, (f->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	f->v = v;
	v[f->n].query = strdup(query);
	v[f->n].found = found ? strdup(found) : NULL;
	v[f->n].vaddr = vaddr;
	v[f->n].file_offset = off;
	if (!v[f->n].query || (found && !v[f->n].found)) {
		free(v[f->n].query);
		free(v[f->n].found);
		return -ENOMEM;
	}
	f->n++;
	return 0;
}

/* A whole hex number, or false. */
static bool parse_hex(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 16);
	return !errno && end != s && !*end && isxdigit((unsigned char)*s);
}

/* Disk format, one line per query: QUERY \t FOUND-or-"-" \t VADDR \t OFFSET (hex). */
static void load_from_disk(struct sym_cache *c, struct cache_file *f)
{
	char fn[160], *line = NULL;
	size_t cap = 0;
	struct stat st;
	FILE *fp;
	int fd;

	snprintf(fn, sizeof(fn), "%s.syms", f->key);
	fd = openat(c->dirfd, fn, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	/* only a regular file of ours: the offsets read here become uprobes in targets */
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    !(fp = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (getline(&line, &cap, fp) > 0) {
		char *q = strtok(line, "\t"), *found = strtok(NULL, "\t");
		char *va = strtok(NULL, "\t"), *off = strtok(NULL, "\t\n");
		uint64_t vaddr, offset;

		if (!q || !found || !va || !off || strtok(NULL, "\n") || !parse_hex(va, &vaddr) ||
		    !parse_hex(off, &offset))
			continue;	/* a damaged line is only a cache miss */
		add_line(f, q, strcmp(found, "-") ? found : NULL, vaddr, offset);
	}
	free(line);
	fclose(fp);
}

static void save_to_disk(struct sym_cache *c, const struct cache_file *f)
{
	char fn[160], tmp[NAME_MAX + 1];
	FILE *fp;
	int fd;

	snprintf(fn, sizeof(fn), "%s.syms", f->key);
	fd = fs__create_temp_at(c->dirfd, f->key, 0600, tmp, sizeof(tmp));
	if (fd < 0)
		return;
	fp = fdopen(fd, "w");
	if (!fp) {
		close(fd);
		unlinkat(c->dirfd, tmp, 0);
		return;
	}
	for (size_t i = 0; i < f->n; i++)
		fprintf(fp, "%s\t%s\t%" PRIx64 "\t%" PRIx64 "\n", f->v[i].query,
			f->v[i].found ? f->v[i].found : "-", f->v[i].vaddr, f->v[i].file_offset);
	if (fclose(fp) || renameat(c->dirfd, tmp, c->dirfd, fn))
		unlinkat(c->dirfd, tmp, 0);
}

static struct cache_file *get_file(struct sym_cache *c, const char *path)
{
	struct cache_file *f;
	struct stat st;
	char key[96];

	if (stat(path, &st))
		return NULL;
	snprintf(key, sizeof(key), "%jx-%jx-%jx-%jx.%09ld", (uintmax_t)st.st_dev,
		 (uintmax_t)st.st_ino, (uintmax_t)st.st_size, (uintmax_t)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	for (f = c->files; f; f = f->next)
		if (!strcmp(f->key, key))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	strcpy(f->key, key);
	if (c->dir)
		load_from_disk(c, f);
	f->next = c->files;
	c->files = f;
	return f;
}

static const struct cache_line *find_line(const struct cache_file *f, const char *query)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].query, query))
			return &f->v[i];
	return NULL;
}

static int answer_from(const struct cache_file *f, struct sym_query *q, size_t n)
{
	int resolved = 0;

	for (size_t i = 0; i < n; i++) {
		const struct cache_line *l = find_line(f, q[i].name);

		q[i].found = NULL;
		if (!l || !l->found)
			continue;
		q[i].found = strdup(l->found);
		q[i].vaddr = l->vaddr;
		q[i].file_offset = l->file_offset;
		resolved += q[i].found != NULL;
	}
	return resolved;
}

int sym_cache__resolve(struct sym_cache *c, const char *path, struct sym_query *q, size_t n,
		       bool *cached)
{
	struct cache_file *f = get_file(c, path);
	size_t i, missing = 0;
	int err;

	*cached = false;
	if (!f)
		return -errno ? -errno : -ENOMEM;
	for (i = 0; i < n; i++)
		missing += !find_line(f, q[i].name);
	if (!missing) {
		*cached = true;
		return answer_from(f, q, n);
	}
	/* Resolve what the cache lacks in one pass over the ELF file, then remember it all. */
	struct sym_query *todo = calloc(missing, sizeof(*todo));
	size_t k = 0;

	if (!todo)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!find_line(f, q[i].name) && strcmp(q[i].name, "@load") != 0)
			todo[k++].name = q[i].name;
	err = k ? elf_syms__resolve(path, todo, k) : 0;
	if (err >= 0 && !find_line(f, "@load")) {
		for (i = 0; i < n && strcmp(q[i].name, "@load") != 0; i++)
			;
		if (i < n) {
			uint64_t va = 0;
			int e = elf_syms__first_load_vaddr(path, &va);

			add_line(f, "@load", e ? NULL : "@load", va, 0);
		}
	}
	for (i = 0; i < k; i++) {
		if (err >= 0)
			add_line(f, todo[i].name, todo[i].found, todo[i].vaddr, todo[i].file_offset);
		free(todo[i].found);
	}
	free(todo);
	if (err < 0)
		return err;
	if (c->dir)
		save_to_disk(c, f);
	return answer_from(f, q, n);
}

/* A function's exits as a cache line: query "@exits:VADDR", found "OFF,OFF,...;PARTS;NO_CFI"
 * (hex), or "!" and the reason it failed. */
static void exits_to_text(const struct func_exits *e, int err, const char *why, char *buf,
			  size_t size)
{
	size_t n = 0;

	if (err) {
		snprintf(buf, size, "!%d %s", -err, why);
		for (char *p = buf; *p; p++)	/* one line, one field */
			if (*p == '\t' || *p == '\n')
				*p = ' ';
		return;
	}
	for (size_t i = 0; i < e->n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRIx64, i ? "," : "", e->offsets[i]);
	if (n < size)
		snprintf(buf + n, size - n, ";%zx;%zx", e->parts, e->no_cfi);
}

static int exits_from_text(const char *text, struct func_exits *e, char *why, size_t why_size)
{
	char *end;
	int err;

	memset(e, 0, sizeof(*e));
	if (*text == '!') {
		err = (int)strtol(text + 1, &end, 10);
		snprintf(why, why_size, "%s", *end ? end + 1 : "");
		return err > 0 ? -err : -EINVAL;
	}
	for (const char *p = text; *p && *p != ';' && e->n < FUNC_EXITS_MAX; p = end) {
		e->offsets[e->n++] = strtoull(p, &end, 16);
		if (end == p)
			return -EINVAL;
		if (*end == ',')
			end++;
	}
	if (sscanf(strchr(text, ';') ? strchr(text, ';') : "", ";%zx;%zx", &e->parts,
		   &e->no_cfi) != 2 || !e->n)
		return -EINVAL;
	return 0;
}

int sym_cache__exits(struct sym_cache *c, const char *path, uint64_t vaddr,
		     struct func_exits *out, char *why, size_t why_size)
{
	struct cache_file *f = get_file(c, path);
	const struct cache_line *l;
	char query[32], text[FUNC_EXITS_MAX * 17 + 320];
	int err;

	if (why_size)
		why[0] = 0;
	if (!f)
		return func_exits__find(path, vaddr, out, why, why_size);
	snprintf(query, sizeof(query), "@exits:%" PRIx64, vaddr);
	l = find_line(f, query);
	if (l && l->found) {
		err = exits_from_text(l->found, out, why, why_size);
		if (err != -EINVAL)	/* else a damaged line: found again */
			return err;
	}
	err = func_exits__find(path, vaddr, out, why, why_size);
	exits_to_text(out, err, why, text, sizeof(text));
	if (add_line(f, query, text, 0, 0) == 0 && c->dir)
		save_to_disk(c, f);
	return err;
}
