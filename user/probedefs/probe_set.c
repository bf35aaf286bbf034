// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The probes/ groups: one JSON file each, read from a directory or from the copy built in
// (probe_set.h).
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "probedefs/probe_set.h"
#include "pyobj/torch_tensor.h"

/* The probes/ JSON files, concatenated by the build (Makefile: probe_files.S), 0x1e between. */
extern const char embedded_probe_files[];

static void free_group(struct probe_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		probe_def__free(&g->probes[i]);
	free(g->probes);
	free(g->name);
	free(g->match_defines);
	free(g->file_hint);
}

int probe_set__parse(struct probe_set *s, const char *json, const char *origin)
{
	cJSON *root = cJSON_ParseWithOpts(json, NULL, true), *probes, *p;	/* nothing after */
	struct probe_group g = {};
	const cJSON *match;
	int err = -EINVAL;

	if (!root) {
		elog("%s: not valid JSON", origin);
		return -EINVAL;
	}
	match = cJSON_GetObjectItemCaseSensitive(root, "match");
	probes = cJSON_GetObjectItemCaseSensitive(root, "probes");
	g.name = probe_def__dup_string(root, "name");
	g.match_defines = probe_def__dup_string(match, "defines");
	g.file_hint = probe_def__dup_string(match, "file_hint");
	if (!g.name || !g.match_defines || !cJSON_IsArray(probes)) {
		elog("%s: needs \"name\", \"match\": {\"defines\": ...} and a \"probes\" array",
		     origin);
		goto out;
	}
	g.probes = calloc((size_t)cJSON_GetArraySize(probes) + 1, sizeof(*g.probes));
	if (!g.probes)
		goto out;
	cJSON_ArrayForEach(p, probes) {
		if (probe_def__parse(p, &g.probes[g.n], g.name)) {
			g.n++;	/* free what it holds */
			goto out;
		}
		g.n++;
	}
	struct probe_group *v = realloc(s->groups, (s->n + 1) * sizeof(*v));

	if (!v)
		goto out;
	s->groups = v;
	s->groups[s->n++] = g;
	memset(&g, 0, sizeof(g));
	err = 0;
out:
	free_group(&g);
	cJSON_Delete(root);
	return err;
}

int probe_set__load_embedded(struct probe_set *s)
{
	const char *p = embedded_probe_files;
	int idx = 0;

	memset(s, 0, sizeof(*s));
	while (*p) {
		size_t len = strcspn(p, "\x1e");
		char *one = strndup(p, len), origin[48];
		int err;

		if (!one)
			return -ENOMEM;
		snprintf(origin, sizeof(origin), "built-in probe file #%d", idx++);
		err = probe_set__parse(s, one, origin);
		free(one);
		if (err) {
			probe_set__free(s);
			return err;
		}
		p += len + (p[len] ? 1 : 0);
	}
	return 0;
}

static char *read_file(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < (16 << 20) &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		if (read(fd, buf, (size_t)st.st_size) == st.st_size) {
			buf[st.st_size] = 0;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	return buf;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int probe_set__find_dir(char *buf, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char tried[PATH_MAX + 64];

	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	/* a checkout: the binary at its top (make), or one level down (.output/) */
	for (int up = 0; up < 2; up++) {
		snprintf(tried, sizeof(tried), "%s%s/bpf", exe, up ? "/.." : "");
		if (!is_dir(tried))
			continue;
		snprintf(tried, sizeof(tried), "%s%s/probes", exe, up ? "/.." : "");
		if (is_dir(tried) && realpath(tried, buf) && strlen(buf) < size)
			return 0;
	}
	/* installed: PREFIX/bin/cirron-probe and PREFIX/share/cirron-probe/probes */
	snprintf(tried, sizeof(tried), "%s/../share/cirron-probe/probes", exe);
	if (is_dir(tried) && realpath(tried, buf) && strlen(buf) < size)
		return 0;
	return -ENOENT;
}

static int only_json(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return len > 5 && d->d_name[0] != '.' && !strcmp(d->d_name + len - 5, ".json");
}

int probe_set__load_dir(struct probe_set *s, const char *dir)
{
	struct dirent **names = NULL;
	int dirfd, n, err = 0, files = 0;

	memset(s, 0, sizeof(*s));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	n = scandir(dir, &names, only_json, alphasort);	/* the build's order too */
	for (int i = 0; i < n; i++) {
		char origin[PATH_MAX + 300], *text = NULL;

		snprintf(origin, sizeof(origin), "%s/%s", dir, names[i]->d_name);
		if (!err) {
			text = read_file(dirfd, names[i]->d_name);
			if (!text) {
				elog("%s: cannot read it", origin);
				err = -EIO;
			} else if (!strcmp(names[i]->d_name, "torch_layouts.json")) {
				s->torch_layouts = text;	/* not a probe group */
				text = NULL;
			} else {
				err = probe_set__parse(s, text, origin);
				files++;
			}
		}
		free(text);
		free(names[i]);
	}
	free(names);
	close(dirfd);
	if (!err && (n < 0 || !files)) {
		elog("%s: no probe files", dir);
		err = -ENOENT;
	}
	if (err) {
		probe_set__free(s);
		return err;
	}
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	torch_layout__use(s->torch_layouts);
	return 0;
}

int probe_set__load(struct probe_set *s)
{
	char dir[PATH_MAX];

	if (!probe_set__find_dir(dir, sizeof(dir)))
		return probe_set__load_dir(s, dir);
	return probe_set__load_embedded(s);
}

void probe_set__free(struct probe_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free_group(&s->groups[i]);
	free(s->groups);
	if (s->torch_layouts)
		torch_layout__use(NULL);
	free(s->torch_layouts);
	memset(s, 0, sizeof(*s));
}
