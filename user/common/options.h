/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OPTIONS_H
#define __CIRRON_OPTIONS_H

/* What the command line asked for (cli.c fills it); every stage reads it, none writes it. */
#include <stdbool.h>
#include <stdint.h>

enum command { CMD_NONE, CMD_ATTACH, CMD_RUN, CMD_WATCH, CMD_DOCTOR, CMD_TRACE, CMD_HEALTH,
	       CMD_REPORT, CMD_SHIP };
enum trace_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_PERFETTO };

#define SINK_SPOOL	(1u << 0)
#define SINK_STDOUT	(1u << 1)
#define SINK_LOG	(1u << 2)	/* syslog, one message per closed span */

enum python_frames { PYF_OFF, PYF_SAMPLED, PYF_ALWAYS };
/* on: the syscall-entry tracepoint; uprobe: libc's write() per traced pid (measured
 * alternative, bench/mark_cost.sh) */
enum marks_mode { MARKS_ON, MARKS_OFF, MARKS_UPROBE };

enum cuda_calls { CUDA_CALLS_ALWAYS, CUDA_CALLS_OFF };

enum snapshots { SNAP_STATS, SNAP_SAMPLED, SNAP_FULL, SNAP_OFF };

struct options {
	enum command cmd;
	int pid;
	unsigned int sinks;		/* SINK_*; 0 means --output none */
	const char *path;		/* spool root; batches go to <path>/spool */
	double flush_interval_s;
	double duration_s;		/* 0: until the target exits or a signal */
	uint64_t max_spool_bytes;	/* --max-spool-mb; 0: no cap */
	bool cuda_detail;		/* one event per CUDA call */
	long epoch_steps;		/* fallback epoch length in optimizer steps */
	enum python_frames python_frames;	/* exact forward spans from CPython calls */
	long sample_every;		/* PYF_SAMPLED: Python frames in one step of N */
	double hang_factor;		/* a span open > factor x its name's median ... */
	double hang_min_s;		/* ... and > this: a hang (factor 0: never) */
	long ringbuf_kb;		/* size of the events ring buffer */
	const char *cache_dir;		/* symbol cache; NULL picks a default */
	char **run_argv;		/* CMD_RUN: the command */
	const char *match;		/* CMD_WATCH: only processes whose command line matches */
	int verbose;
	/* trace and health: read the spool under path */
	enum trace_format format;
	const char *name;		/* only spans of this name */
	long last;			/* 0, or the N most recently ended spans */
	const char *session;		/* only this session id */
	long rank;			/* -1, or only this rank */
	bool all;			/* no eliding of long runs of siblings */
	bool ranks;			/* trace --ranks: the ranks side by side */
	enum marks_mode marks;		/* marks from the job's stdout/stderr writes */
	const char *marks_regex;	/* --marks-regex: named groups give marks */
	/* issue 14: outputs */
	const char *out_file;		/* trace --format perfetto, report: -o FILE (else stdout) */
	const char *metrics_addr;	/* attach, run, watch: --metrics ADDR:PORT, or NULL */
	uint32_t metrics_ip;		/* its IPv4 address, network order */
	uint16_t metrics_port;		/* host order */
	double metrics_grace_s;		/* series of ended sessions stay this long */
	const char *syslog_socket;	/* --output log: the syslog daemon's socket */
	double sys_interval_s;		/* --sys-interval: system stats period; 0 off */
	enum cuda_calls cuda_calls;	/* per-call CUDA probes: always (default: every call
					 * counted in BPF maps) or off */
	enum snapshots snapshots;	/* weights and grads at each epoch's end */
	double sample_rate;		/* SNAP_SAMPLED: fraction of each tensor written */
	uint64_t snapshot_max_bytes;	/* --snapshot-max-mb: target memory read per snapshot */
	/* issue 28: least privilege */
	const char *run_user;		/* run --user: the command runs as this user (root only) */
	unsigned int run_uid, run_gid;	/* its uid and primary group */
	/* issue 35: the spool off the node */
	const char *s3_url;		/* --output ...,s3://BUCKET/PREFIX: batches uploaded too */
	const char *source;		/* read-back: the s3:// URL that path is a copy of, or NULL */
	/* issue 42: a fleet's spans */
	const char *job;		/* --job: the sessions' job (attach, run, watch); the job to
					 * read (trace --ranks) */
	const char *otlp_url;		/* --output ...,otlp[=URL]: "" for the environment's */
};

#endif
