// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/gpus.h"
#include "proc/procfs.h"

/* "Key: \t value" lines of an information file: the value of key, trimmed, into buf. */
static void info_value(const char *text, const char *key, char *buf, size_t size)
{
	const char *p = strstr(text, key);
	size_t n;

	buf[0] = 0;
	if (!p || (p != text && p[-1] != '\n'))
		return;
	p += strlen(key);
	if (*p++ != ':')
		return;
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	snprintf(buf, size, "%.*s", (int)n, p);
}

/* The driver's description of the GPU with this minor, if it has one. */
static void describe(const char *driver, struct gpu_info *g)
{
	char path[PATH_MAX], text[4096], minor[16];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/gpus", driver);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/gpus/%s/information", driver, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[len] = 0;
		info_value(text, "Device Minor", minor, sizeof(minor));
		if (!minor[0] || atoi(minor) != g->minor)
			continue;
		info_value(text, "Model", g->model, sizeof(g->model));
		info_value(text, "GPU UUID", g->uuid, sizeof(g->uuid));
		info_value(text, "Bus Location", g->bus, sizeof(g->bus));
		if (!g->bus[0])
			snprintf(g->bus, sizeof(g->bus), "%.31s", de->d_name);
		break;
	}
	closedir(d);
}

static int by_minor(const void *a, const void *b)
{
	return ((const struct gpu_info *)a)->minor - ((const struct gpu_info *)b)->minor;
}

/* CUDA_VISIBLE_DEVICES from pid's environ: a string, unlike RANK and its kin. */
static void visible_devices(const char *proc, int pid, struct gpus *out)
{
	char path[PATH_MAX], *buf = malloc(1 << 20);
	size_t len = 0, vlen;
	const char *val;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/environ", proc, pid);
	f = buf ? fopen(path, "r") : NULL;
	if (f) {
		len = fread(buf, 1, (1 << 20) - 1, f);
		fclose(f);
	}
	val = buf ? procfs__env_find(buf, len, "CUDA_VISIBLE_DEVICES", &vlen) : NULL;
	if (val) {
		out->visible_set = true;
		snprintf(out->visible, sizeof(out->visible), "%.*s", (int)vlen, val);
	}
	free(buf);
}

int gpus__of_pid(const char *proc, int pid, const char *driver, struct gpus *out)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	DIR *d;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%d/fd", proc, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char fd[PATH_MAX + 300];
		ssize_t n;
		int minor, end = 0;
		bool seen = false;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fd, sizeof(fd), "%s/%s", path, de->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, "/dev/nvidiactl")) {
			out->ctl = true;
			continue;
		}
		if (sscanf(link, "/dev/nvidia%d%n", &minor, &end) != 1 || link[end] || minor < 0)
			continue;
		for (int i = 0; i < out->n; i++)
			seen |= out->g[i].minor == minor;
		if (seen || out->n == GPUS_MAX)
			continue;
		out->g[out->n].minor = minor;
		describe(driver, &out->g[out->n]);
		out->n++;
	}
	closedir(d);
	qsort(out->g, (size_t)out->n, sizeof(out->g[0]), by_minor);
	visible_devices(proc, pid, out);
	return 0;
}
