/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_DOCTOR_H
#define __CIRRON_DOCTOR_H

#include "common/options.h"

/* `doctor -p PID`: what the target maps and which probes resolve; attaches nothing. */
int doctor__main(const struct options *opts);

#endif
