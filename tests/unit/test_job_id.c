// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// proc/job_id.c: a session's job from an environ block, as launchers set it.
#include <string.h>
#include "proc/job_id.h"
#include "unit.h"

/* "A=1\0B=2\0" from a list of strings; returns its length. */
static size_t environ_of(char *buf, const char *const *vars)
{
	size_t len = 0;

	for (; *vars; vars++) {
		strcpy(buf + len, *vars);
		len += strlen(*vars) + 1;
	}
	return len;
}

static void from(struct job_id *j, const char *cli, const char *const *vars)
{
	char env[4096];
	size_t len = environ_of(env, vars);

	job_id__from_environ(j, env, len, cli, "vm-42-1234", "parent");
}

static void precedence(void)
{
	struct job_id j;

	from(&j, NULL, (const char *[]){ "TORCHELASTIC_RUN_ID=rdzv-7", "SLURM_JOB_ID=99",
					 "CIRRON_K8S_JOB=train", NULL });
	ASSERT_STREQ(j.id, "rdzv-7", "torchrun's id first");
	ASSERT_STREQ(j.source, "TORCHELASTIC_RUN_ID", "source");
	from(&j, NULL, (const char *[]){ "TORCHELASTIC_RUN_ID=rdzv-7", "CIRRON_RUN_ID=run-3",
					 NULL });
	ASSERT_STREQ(j.id, "run-3", "the platform's run before torchrun's");
	ASSERT_STREQ(j.run_id, "run-3", "and recorded as the run");
	from(&j, "mine", (const char *[]){ "CIRRON_RUN_ID=run-3", NULL });
	ASSERT_STREQ(j.id, "mine", "--job before the environment");
	ASSERT_STREQ(j.source, "--job", "source");
	ASSERT_STREQ(j.run_id, "run-3", "the context still recorded");
	from(&j, NULL, (const char *[]){ "TORCHELASTIC_RUN_ID=none", "SLURM_JOB_ID=12345",
					 "SLURM_STEP_ID=0", NULL });
	ASSERT_STREQ(j.id, "12345.0", "torchrun's default 'none' is no id; Slurm's step");
	ASSERT_STREQ(j.source, "SLURM_JOB_ID", "source");
	from(&j, NULL, (const char *[]){ "SLURM_JOB_ID=12345", NULL });
	ASSERT_STREQ(j.id, "12345", "a batch step: the job alone");
	from(&j, NULL, (const char *[]){ "CIRRON_K8S_JOB=bert-large", "CIRRON_PIPELINE_ID=p1",
					 NULL });
	ASSERT_STREQ(j.id, "bert-large", "the Kubernetes Job before the pipeline");
	ASSERT_STREQ(j.pipeline_id, "p1", "the pipeline recorded");
	from(&j, NULL, (const char *[]){ "CIRRON_WORKSPACE_ID=ws", "CIRRON_PIPELINE_ID=p1",
					 NULL });
	ASSERT_STREQ(j.id, "p1", "pipeline before workspace");
	ASSERT_STREQ(j.source, "CIRRON_PIPELINE_ID", "source");
	from(&j, NULL, (const char *[]){ "RANK=1", "CIRRON_RUN_ID=", NULL });
	ASSERT_STREQ(j.id, "vm-42-1234", "nothing names it: the fallback");
	ASSERT_STREQ(j.source, "parent", "its source");
	job_id__from_environ(&j, NULL, 0, NULL, NULL, NULL);
	ASSERT_STREQ(j.id, "unknown", "no environ, no fallback");
	ASSERT_STREQ(j.source, "process", "source");
}

static void cleaning(void)
{
	struct job_id j;
	char out[JOB_ID_MAX], long_id[300];

	from(&j, NULL, (const char *[]){ "CIRRON_RUN_ID=team/run 7;x", NULL });
	ASSERT_STREQ(j.id, "team_run_7_x", "other bytes as '_': one key level");
	ASSERT_TRUE(job_id__clean("a.b_c-9", 7, out, sizeof(out)), "clean");
	ASSERT_STREQ(out, "a.b_c-9", "kept");
	ASSERT_FALSE(job_id__clean("", 0, out, sizeof(out)), "empty");
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = 0;
	ASSERT_FALSE(job_id__clean(long_id, strlen(long_id), out, sizeof(out)), "too long");
	strcpy(long_id, "CIRRON_RUN_ID=");
	memset(long_id + 14, 'b', 200);
	long_id[214] = 0;
	from(&j, NULL, (const char *[]){ long_id, "SLURM_JOB_ID=5", NULL });
	ASSERT_STREQ(j.id, "5", "a run id too long names nothing: the next");
	/* the last entry of a block need not end in a NUL */
	job_id__from_environ(&j, "SLURM_JOB_ID=77", 15, NULL, "f", "process");
	ASSERT_STREQ(j.id, "77", "unterminated block");
}

int main(void)
{
	RUN_TEST(precedence);
	RUN_TEST(cleaning);
	return unit__done();
}
