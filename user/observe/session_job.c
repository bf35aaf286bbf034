// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A session's job identity (session_job.h), read once at its start from the target's
// environment: the launcher's variables, --job, else its parent (a rank) or itself.
#include <stdio.h>
#include "observe/session_job.h"
#include "proc/job_id.h"
#include "proc/procfs.h"
#include "tree/session.h"

void session_job__set(struct observer *o, struct target *t)
{
	cJSON *a = t->session->root->attrs;
	struct session_ids ids = { .host = o->host, .rank = 0, .world_size = 1 };
	char fallback[SESSION_ID_MAX], state;
	const char *source = "process";
	struct job_id j;
	int ppid;

	/* without a launcher's variable: ranks started by one process on one host are one job
	 * (their parent, as <host>-<pid>-<start ticks>), any other process a job of its own */
	ids.pid = t->pid;
	ids.start_ticks = t->id_ticks ? t->id_ticks : procfs__start_ticks(t->pid);
	if (t->ranked && !procfs__stat(t->pid, &state, &ppid) && ppid > 1) {
		ids.pid = ppid;
		ids.start_ticks = procfs__start_ticks(ppid);
		source = "parent";
	}
	session__format_id(&ids, fallback, sizeof(fallback));
	job_id__read(&j, t->pid, o->opts->job, fallback, source);
	cJSON_AddStringToObject(a, "job", j.id);
	cJSON_AddStringToObject(a, "job_source", j.source);
	if (*j.run_id)
		cJSON_AddStringToObject(a, "run_id", j.run_id);
	if (*j.pipeline_id)
		cJSON_AddStringToObject(a, "pipeline_id", j.pipeline_id);
	if (*j.deployment_id)
		cJSON_AddStringToObject(a, "deployment_id", j.deployment_id);
	if (*j.workspace_id)
		cJSON_AddStringToObject(a, "workspace_id", j.workspace_id);
}
