/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_METRICS_H
#define __CIRRON_METRICS_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "tree/session.h"
#include "tree/span.h"

/*
 * --metrics ADDR:PORT: Prometheus' text exposition format at GET /metrics, per session
 * (README lists the metrics). A small HTTP/1.1 server without threads: the observer's loop
 * calls metrics__serve every round (at least every 100 ms), which accepts, reads and writes
 * without blocking (at most METRICS_MAX_CONNS connections, each closed after its response or
 * METRICS_CONN_TIMEOUT_S). Values are updated as spans close and batches are flushed.
 */
#define METRICS_MAX_CONNS 16
#define METRICS_CONN_TIMEOUT_S 5

struct metrics;

/* "ADDR:PORT", ADDR an IPv4 address (127.0.0.1, 0.0.0.0), PORT 0 to 65535 (0: any free
 * port, see metrics__port); "PORT" and ":PORT" are on 127.0.0.1, never on every address
 * unless asked. Returns 0 or -EINVAL. */
int metrics__parse_addr(const char *arg, uint32_t *ip_be, uint16_t *port);
/* Binds and listens. Series of ended sessions stay grace_s seconds. NULL with *err = -errno. */
struct metrics *metrics__listen(uint32_t ip_be, uint16_t port, double grace_s, int *err);
uint16_t metrics__port(const struct metrics *m);
/* Serves what is waiting; never blocks. now_ns: monotonic. */
void metrics__serve(struct metrics *m, uint64_t now_ns);
void metrics__span_closed(struct metrics *m, const struct session *s, const struct span *sp);
/* At each batch: labels (role, launcher_pid may have changed), the observer's health, the
 * root's CUDA totals. */
void metrics__flush(struct metrics *m, const struct session *s, const cJSON *health);
/* A --sys-interval sample (the spool's "sys" object): the process and node gauges. */
void metrics__sys(struct metrics *m, const struct session *s, const cJSON *sample);
/* A hang record was written: cirron_hang is 1 until the session's next span closes. */
void metrics__hang(struct metrics *m, const struct session *s);
/* The session is over (its memory is about to go): its series stay grace_s more. */
void metrics__session_ended(struct metrics *m, const struct session *s, uint64_t now_ns);
/* The whole page, as served (for tests and the fuzz-free unit test). Caller frees. */
char *metrics__render(struct metrics *m, size_t *len);
void metrics__free(struct metrics *m);

#endif
