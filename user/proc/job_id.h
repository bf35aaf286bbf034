/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_JOB_ID_H
#define __CIRRON_JOB_ID_H

#include <stdbool.h>
#include <stddef.h>

/* A session's job: what ties the ranks of one job together across nodes, read from the
 * target's environment as launchers set it. The first of these wins:
 *   --job JOB                      the observer's command line (source "--job")
 *   CIRRON_RUN_ID                  the platform's run
 *   TORCHELASTIC_RUN_ID            torchrun's rendezvous id (not its default "none")
 *   SLURM_JOB_ID [.SLURM_STEP_ID]  Slurm: "12345.0", as Slurm names a step
 *   CIRRON_K8S_JOB                 a Kubernetes Job's or JobSet's name (the downward API)
 *   CIRRON_DEPLOYMENT_ID, CIRRON_PIPELINE_ID, CIRRON_WORKSPACE_ID   the platform's context
 * and without any: a rank's launcher (its parent process: ranks started by one process on one
 * host are one job), else the process itself (source "parent", "process"). An id keeps
 * A-Z a-z 0-9 . _ - and turns any other byte into '_' (it names a key level in object stores
 * and a Hive partition), at most JOB_ID_MAX - 1 bytes. */
#define JOB_ID_MAX 128

struct job_id {
	char id[JOB_ID_MAX];
	char source[32];	/* "--job", the variable's name, "parent" or "process" */
	/* the platform's context, recorded beside the id ("" when unset) */
	char run_id[JOB_ID_MAX], pipeline_id[JOB_ID_MAX], deployment_id[JOB_ID_MAX];
	char workspace_id[JOB_ID_MAX];
};

/* From a raw environ block (NUL-separated, len bytes). cli_job: --job or NULL. fallback_id
 * and fallback_source: what to use when nothing names the job. */
void job_id__from_environ(struct job_id *j, const char *env, size_t len, const char *cli_job,
			  const char *fallback_id, const char *fallback_source);
/* The same from /proc/PID/environ (an unreadable one names nothing). */
void job_id__read(struct job_id *j, int pid, const char *cli_job, const char *fallback_id,
		  const char *fallback_source);
/* s as a job id (the bytes above turned to '_'), into out. False when s is empty or longer
 * than JOB_ID_MAX - 1 (a usage error for --job). */
bool job_id__clean(const char *s, size_t len, char *out, size_t size);

#endif
