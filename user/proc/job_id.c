// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A session's job from the target's environment (job_id.h).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/job_id.h"
#include "proc/procfs.h"

#define ENVIRON_MAX (1u << 20)

bool job_id__clean(const char *s, size_t len, char *out, size_t size)
{
	if (!s || !len || len >= size || len >= JOB_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i] = isalnum(c) || c == '.' || c == '_' || c == '-' ? (char)c : '_';
	}
	out[len] = 0;
	return true;
}

/* name's value as a job id into out; false when unset, empty or too long. */
static bool env_id(const char *env, size_t len, const char *name, char *out, size_t size)
{
	size_t vlen;
	const char *v = env ? procfs__env_find(env, len, name, &vlen) : NULL;

	return v && job_id__clean(v, vlen, out, size);
}

void job_id__from_environ(struct job_id *j, const char *env, size_t len, const char *cli_job,
			  const char *fallback_id, const char *fallback_source)
{
	static const char *const platform[] = {
		"CIRRON_DEPLOYMENT_ID", "CIRRON_PIPELINE_ID", "CIRRON_WORKSPACE_ID",
	};
	char job[JOB_ID_MAX], step[32];

	memset(j, 0, sizeof(*j));
	env_id(env, len, "CIRRON_RUN_ID", j->run_id, sizeof(j->run_id));
	env_id(env, len, "CIRRON_PIPELINE_ID", j->pipeline_id, sizeof(j->pipeline_id));
	env_id(env, len, "CIRRON_DEPLOYMENT_ID", j->deployment_id, sizeof(j->deployment_id));
	env_id(env, len, "CIRRON_WORKSPACE_ID", j->workspace_id, sizeof(j->workspace_id));
	if (cli_job && job_id__clean(cli_job, strlen(cli_job), j->id, sizeof(j->id))) {
		strcpy(j->source, "--job");
		return;
	}
	if (*j->run_id) {
		strcpy(j->id, j->run_id);
		strcpy(j->source, "CIRRON_RUN_ID");
		return;
	}
	/* torchrun sets "none" when no --rdzv-id was given: no identity at all */
	if (env_id(env, len, "TORCHELASTIC_RUN_ID", job, sizeof(job)) && strcmp(job, "none") != 0) {
		strcpy(j->id, job);
		strcpy(j->source, "TORCHELASTIC_RUN_ID");
		return;
	}
	if (env_id(env, len, "SLURM_JOB_ID", job, sizeof(job))) {
		if (env_id(env, len, "SLURM_STEP_ID", step, sizeof(step)))
			snprintf(j->id, sizeof(j->id), "%.*s.%s",
				 (int)(sizeof(j->id) - strlen(step) - 2), job, step);
		else
			strcpy(j->id, job);
		strcpy(j->source, "SLURM_JOB_ID");
		return;
	}
	if (env_id(env, len, "CIRRON_K8S_JOB", j->id, sizeof(j->id))) {
		strcpy(j->source, "CIRRON_K8S_JOB");
		return;
	}
	for (size_t i = 0; i < sizeof(platform) / sizeof(platform[0]); i++) {
		if (env_id(env, len, platform[i], j->id, sizeof(j->id))) {
			snprintf(j->source, sizeof(j->source), "%s", platform[i]);
			return;
		}
	}
	if (!fallback_id || !job_id__clean(fallback_id, strlen(fallback_id), j->id, sizeof(j->id)))
		strcpy(j->id, "unknown");
	snprintf(j->source, sizeof(j->source), "%s", fallback_source ? fallback_source : "process");
}

void job_id__read(struct job_id *j, int pid, const char *cli_job, const char *fallback_id,
		  const char *fallback_source)
{
	char fn[64], *buf = malloc(ENVIRON_MAX);
	size_t len = 0;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/environ", pid);
	f = buf ? fopen(fn, "re") : NULL;
	if (f) {
		len = fread(buf, 1, ENVIRON_MAX, f);
		fclose(f);
	}
	job_id__from_environ(j, f ? buf : NULL, len, cli_job, fallback_id, fallback_source);
	free(buf);
}
