/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SESSION_JOB_H
#define __CIRRON_SESSION_JOB_H

#include "attach/observer.h"

/* The session's job (proc/job_id.h) on its root: job, job_source, and the platform's
 * context (run_id, pipeline_id, deployment_id, workspace_id) where set. Called once the
 * target's role is known (sessions__start). */
void session_job__set(struct observer *o, struct target *t);

#endif
