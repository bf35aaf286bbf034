// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The node agent's choice of processes: the library hints, --match on command lines, and
// the one scan of /proc at start (jobs already running, e.g. after the agent restarted;
// the dynamic linkers they use). Everything after that start comes from BPF events.
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "agent/watch.h"

static bool group_gives_session(const struct probe_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (probe_def__gives_session(&g->probes[i]))
			return true;
	return false;
}

int watch__init(struct watch *w, const struct probe_set *ps, const char *match)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < ps->n; i++) {
		const struct probe_group *g = &ps->groups[i];

		for (size_t j = 0; j < g->n && !w->ldso; j++)
			if (g->probes[j].action == ACT_DL_STATE && g->probes[j].aux_symbol &&
			    g->file_hint) {
				w->ldso = &g->probes[j];
				w->ldso_hint = g->file_hint;
			}
		if (g->file_hint && *g->file_hint && group_gives_session(g) &&
		    w->nhints < WATCH_MAX_HINTS)
			w->hints[w->nhints++] = g->file_hint;
	}
	if (!w->ldso) {
		elog("watch needs the ld.so probe (action dl_state, with aux_symbol and file_hint) "
		     "in probes/");
		return -EINVAL;
	}
	if (match) {
		if (regcomp(&w->match, match, REG_EXTENDED | REG_NOSUB)) {
			elog("invalid --match '%s'", match);
			return -EINVAL;
		}
		w->has_match = true;
	}
	return 0;
}

void watch__free(struct watch *w)
{
	if (w->has_match)
		regfree(&w->match);
	w->has_match = false;
	watch_queue__free(&w->queue);
}

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return base ? base + 1 : path;
}

bool watch__file_wanted(const struct watch *w, const char *path)
{
	const char *base = base_name(path);

	for (size_t i = 0; i < w->nhints; i++)
		if (strstr(base, w->hints[i]))
			return true;
	return false;
}

bool watch__is_ldso(const struct watch *w, const struct proc_map *m)
{
	return m->exec && strstr(base_name(m->path), w->ldso_hint);
}

bool watch__maps_wanted(struct watch *w, int pid)
{
	struct proc_maps maps;
	bool found = false;
	int err = procfs__read_maps(pid, &maps);

	if (err) {	/* gone, or a kernel thread */
		if (err == -ENOENT || err == -ESRCH)
			w->queue.vanished++;
		return false;
	}
	for (size_t i = 0; i < maps.n && !found; i++)
		found = maps.v[i].exec && watch__file_wanted(w, maps.v[i].path);
	procfs__free_maps(&maps);
	return found;
}

bool watch__process_wanted(const struct watch *w, int pid)
{
	char cmdline[4096];

	if (procfs__cmdline(pid, cmdline, sizeof(cmdline)))
		return false;
	return !w->has_match || !regexec(&w->match, cmdline, 0, NULL, 0);
}

struct running {
	uint64_t start_ticks;
	int pid;
};

static int by_start(const void *a, const void *b)
{
	const struct running *x = a, *y = b;

	return x->start_ticks < y->start_ticks ? -1 : x->start_ticks > y->start_ticks;
}

int watch__scan(const struct watch *w, int self, const struct watch_scan_ops *ops)
{
	DIR *d = opendir("/proc");
	struct running *found = NULL, *more;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int pid = atoi(de->d_name);
		struct proc_maps maps;
		bool wanted = false;

		if (pid <= 0 || procfs__read_maps(pid, &maps))
			continue;	/* gone, or a kernel thread */
		for (size_t i = 0; i < maps.n; i++) {
			wanted |= maps.v[i].exec && watch__file_wanted(w, maps.v[i].path);
			if (watch__is_ldso(w, &maps.v[i]))
				ops->on_ldso(ops->ctx, pid, &maps.v[i]);
		}
		procfs__free_maps(&maps);
		if (!wanted || pid == self)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(found, cap * sizeof(*found));
			if (!more) {
				free(found);
				closedir(d);
				return -ENOMEM;
			}
			found = more;
		}
		found[n++] = (struct running){ procfs__start_ticks(pid), pid };
	}
	closedir(d);
	/* Oldest first, not in pid order: a parent is traced before its forks even where pids
	 * wrapped, so its DataLoader workers are seen as part of its job. */
	if (n)
		qsort(found, n, sizeof(*found), by_start);
	for (size_t i = 0; i < n; i++)
		ops->on_process(ops->ctx, found[i].pid);
	free(found);
	return (int)n;
}

void watch__note_exec(struct watch *w, int pid, uint64_t start_ticks, uint64_t id_ticks)
{
	struct watch_exec *e = &w->execs[w->next_exec];

	for (size_t i = 0; i < WATCH_EXECS; i++)
		if (w->execs[i].pid == pid)
			e = &w->execs[i];	/* exec'd again before it was found */
	if (e == &w->execs[w->next_exec])
		w->next_exec = (w->next_exec + 1) % WATCH_EXECS;
	*e = (struct watch_exec){ .pid = pid, .start_ticks = start_ticks, .id_ticks = id_ticks };
}

uint64_t watch__take_exec(struct watch *w, int pid, uint64_t start_ticks)
{
	for (size_t i = 0; i < WATCH_EXECS; i++) {
		struct watch_exec *e = &w->execs[i];
		uint64_t ticks = e->id_ticks, started = e->start_ticks;

		if (e->pid != pid)
			continue;
		memset(e, 0, sizeof(*e));
		return started == start_ticks || !start_ticks ? ticks : 0;
	}
	return 0;
}

void watch__summary(const struct watch *w)
{
	const struct watch_queue *d = &w->queue;

	ilog("watch: traced %" PRIu64 " processes, ignored %" PRIu64 " (--match), looked at %"
	     PRIu64 " link-map changes of others; %" PRIu64 " found only by a rescan after %"
	     PRIu64 " lost control events (%" PRIu64 " rescans), %" PRIu64 " gone before they "
	     "could be looked at", w->wanted, w->ignored, w->looked_at, d->recovered,
	     d->control_lost, d->rescans, d->vanished);
}
