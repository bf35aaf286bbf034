// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/json.h"
#include "proc/sysstat.h"

#define SECTOR_BYTES 512	/* /proc/diskstats counts 512-byte sectors whatever the disk */

void sysstat__node(struct sys_sample *s)
{
	char line[512], name[64], path[128];
	unsigned long long rx, tx, rd, wr;
	FILE *f;

	s->net_rx_bytes = s->net_tx_bytes = s->disk_read_bytes = s->disk_write_bytes = 0;
	f = fopen("/proc/net/dev", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		/* "  eth0: rx_bytes packets errs drop fifo frame compressed multicast tx_bytes" */
		if (!colon || sscanf(line, " %63[^:]:", name) != 1 || !strcmp(name, "lo"))
			continue;
		if (sscanf(colon + 1, "%llu %*u %*u %*u %*u %*u %*u %*u %llu", &rx, &tx) == 2) {
			s->net_rx_bytes += rx;
			s->net_tx_bytes += tx;
		}
	}
	if (f)
		fclose(f);
	f = fopen("/proc/diskstats", "re");
	while (f && fgets(line, sizeof(line), f)) {
		/* major minor name reads merged sectors_read ms writes merged sectors_written */
		if (sscanf(line, "%*u %*u %63s %*u %*u %llu %*u %*u %*u %llu", name, &rd, &wr) != 3)
			continue;
		if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3) ||
		    !strncmp(name, "zram", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
		if (!access(path, F_OK))
			continue;	/* counted in its disk */
		s->disk_read_bytes += rd * SECTOR_BYTES;
		s->disk_write_bytes += wr * SECTOR_BYTES;
	}
	if (f)
		fclose(f);
}

static uint64_t field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static ssize_t slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
	return (ssize_t)n;
}

int sysstat__proc(int pid, struct sys_sample *s)
{
	static long tick_hz, page;
	unsigned long long ut, st, threads, rss;
	char path[64], buf[4096], *p;
	ssize_t n;

	if (!tick_hz) {
		tick_hz = sysconf(_SC_CLK_TCK);
		page = sysconf(_SC_PAGESIZE);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = slurp(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice num_threads itrealvalue starttime vsize rss */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
			 "%*d %*d %llu %*d %*u %*u %llu", &ut, &st, &threads, &rss) != 4)
		return -EINVAL;
	s->cpu_user_ns = ut * (1000000000ull / (uint64_t)tick_hz);
	s->cpu_system_ns = st * (1000000000ull / (uint64_t)tick_hz);
	s->threads = threads;
	s->rss_bytes = rss * (uint64_t)page;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (slurp(path, buf, sizeof(buf)) > 0) {
		s->ctx_voluntary = field(buf, "\nvoluntary_ctxt_switches:");
		s->ctx_involuntary = field(buf, "\nnonvoluntary_ctxt_switches:");
	}
	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	s->has_io = slurp(path, buf, sizeof(buf)) > 0;
	if (s->has_io) {
		s->read_bytes = field(buf, "\nread_bytes:");
		s->write_bytes = field(buf, "\nwrite_bytes:");
	}
	return 0;
}

cJSON *sysstat__to_json(const struct sys_sample *s)
{
	cJSON *o = cJSON_CreateObject();

	json__add_u64(o, "ts_ns", s->ts_ns);
	json__add_u64(o, "cpu_user_ns", s->cpu_user_ns);
	json__add_u64(o, "cpu_system_ns", s->cpu_system_ns);
	json__add_u64(o, "rss_bytes", s->rss_bytes);
	json__add_u64(o, "threads", s->threads);
	if (s->has_io) {
		json__add_u64(o, "read_bytes", s->read_bytes);
		json__add_u64(o, "write_bytes", s->write_bytes);
	}
	json__add_u64(o, "ctx_voluntary", s->ctx_voluntary);
	json__add_u64(o, "ctx_involuntary", s->ctx_involuntary);
	json__add_u64(o, "net_rx_bytes", s->net_rx_bytes);
	json__add_u64(o, "net_tx_bytes", s->net_tx_bytes);
	json__add_u64(o, "disk_read_bytes", s->disk_read_bytes);
	json__add_u64(o, "disk_write_bytes", s->disk_write_bytes);
	return o;
}
