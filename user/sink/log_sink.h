/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_LOG_SINK_H
#define __CIRRON_LOG_SINK_H

#include <stdint.h>
#include "tree/span.h"

/* The log sink (--output log): one syslog message per closed span, the stdout sink's text,
 * ident cirron-probe, facility user, severity info, sent as a datagram to the syslog socket
 * (--syslog-socket, default /dev/log: journald, rsyslog, syslog-ng). A message the daemon
 * cannot take within 100 ms (its queue full) is dropped and counted. One per process. */
#define LOG_SINK_DEFAULT_SOCKET "/dev/log"

/* Returns 0 or -errno (no daemon listening at path). */
int log_sink__open(const char *path);
void log_sink__span(const struct span *sp);
/* Messages dropped so far (daemon busy or gone). */
uint64_t log_sink__dropped(void);
void log_sink__close(void);

#endif
