/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SYSSTAT_H
#define __CIRRON_SYSSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* --sys-interval: what a traced process and its node use, read from /proc in user space (no
 * probes). Counters are totals since the process (or the node) started. */
struct sys_sample {
	uint64_t ts_ns;			/* wall clock */
	uint64_t cpu_user_ns, cpu_system_ns;	/* /proc/PID/stat utime, stime */
	uint64_t rss_bytes;		/* /proc/PID/stat rss x page size */
	uint64_t threads;
	uint64_t read_bytes, write_bytes;	/* /proc/PID/io: storage I/O */
	uint64_t ctx_voluntary, ctx_involuntary;	/* /proc/PID/status */
	uint64_t net_rx_bytes, net_tx_bytes;	/* node: /proc/net/dev, all but lo */
	uint64_t disk_read_bytes, disk_write_bytes;	/* node: /proc/diskstats, whole disks */
	bool has_io;			/* /proc/PID/io was readable */
};

/* The node's network and disk totals (once per round, shared by every process). */
void sysstat__node(struct sys_sample *s);
/* The process's own values; node values are left as they are. Returns 0 or -errno (gone). */
int sysstat__proc(int pid, struct sys_sample *s);
/* The spool's form of a sample (schemas/spool-batch.schema.json, "sys"). */
cJSON *sysstat__to_json(const struct sys_sample *s);

#endif
