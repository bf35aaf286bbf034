/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_STDOUT_SINK_H
#define __CIRRON_STDOUT_SINK_H

#include "tree/span.h"

/* The stdout sink (--output stdout): one line per closed span, as it closes, flushed at
 * once so a pipe reader sees it live. */
void stdout_sink__span(const struct span *sp);

#endif
