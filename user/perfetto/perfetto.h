/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PERFETTO_H
#define __CIRRON_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/options.h"

/*
 * `trace --format perfetto`: Chrome Trace Event JSON (ui.perfetto.dev, chrome://tracing),
 * streamed. Batch files are read one at a time and each closed span is written as soon as it
 * is read; only the spans still open are held (a later batch may close them), so memory does
 * not grow with the spool. Times are exact: the spool's ns digits are read as integers, not
 * through cJSON's doubles.
 */
struct pf_writer;

/* Starts the JSON on f; ts of every event is in us from base_ns. */
struct pf_writer *pf_writer__new(FILE *f, uint64_t base_ns);
/* A process track for one session: "rank N (host, pid)". Ends the previous session. */
void pf_writer__session(struct pf_writer *w, const char *id, const char *host, long pid,
			long rank);
/* One batch file's text of the current session. Returns 0, or -EINVAL with why filled and
 * nothing written (a file is taken whole or not at all). */
int pf_writer__batch(struct pf_writer *w, const char *text, char *why, size_t why_size);
/* Ends the last session (its open spans drawn up to its newest batch) and the JSON.
 * Returns 0 or -EIO if a write failed. Frees w. */
int pf_writer__finish(struct pf_writer *w);

/* The spool under o->path to o->out_file (stdout without), filtered by --session, --rank,
 * --ranks (the newest session of each rank). Returns an exit code. */
int perfetto__main(const struct options *o);

#endif
