// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// From a target's /proc/PID/maps to attached uprobes: every executable ELF mapping is
// checked once against probes/ groups (by a symbol the library defines), and each probe
// of a matching group becomes one entry (and maybe one return) uprobe with its own cookie
// (resolve.c, probe_links.c); detaching hands the links to the reaper.
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "attach/attach.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/probe_links.h"
#include "attach/resolve.h"
#include "attach/write_hook.h"
#include "common/log.h"
#include "proc/procfs.h"

static struct mapped_file *find_file(struct target *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].dev == dev && t->files[i].ino == ino)
			return &t->files[i];
	return NULL;
}

/* Adds newly mapped executable files; returns the index of the first new one. */
static int add_new_files(struct target *t, const struct proc_maps *maps, size_t *first_new)
{
	*first_new = t->nfiles;
	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->v[i];
		struct mapped_file *f = find_file(t, m->dev, m->ino), *v;

		if (f) {	/* extend the known address range, e.g. segments after text */
			if (m->start < f->map_start)
				f->map_start = m->start;
			if (m->end > f->map_end)
				f->map_end = m->end;
			continue;
		}
		if (!m->exec)
			continue;
		v = realloc(t->files, (t->nfiles + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->files = v;
		f = &v[t->nfiles];
		memset(f, 0, sizeof(*f));
		f->dev = m->dev;
		f->ino = m->ino;
		f->path = strdup(m->path);
		f->host_path = malloc(PATH_MAX);
		if (!f->path || !f->host_path) {
			free(f->path);
			free(f->host_path);
			return -ENOMEM;
		}
		if (procfs__host_path(t->pid, m, f->host_path, PATH_MAX))
			dlog("pid %d: cannot open %s from here", t->pid, m->path);
		f->fd = open(f->host_path, O_RDONLY | O_CLOEXEC);
		f->map_start = m->start;
		f->map_end = m->end;
		/* The lowest mapping of a file starts at its first PT_LOAD. */
		for (size_t j = 0; j < maps->n; j++)
			if (maps->v[j].dev == m->dev && maps->v[j].ino == m->ino &&
			    maps->v[j].start < f->map_start)
				f->map_start = maps->v[j].start;
		t->nfiles++;
	}
	return 0;
}

static bool hint_matches(const struct probe_group *g, const char *path)
{
	const char *base = strrchr(path, '/');

	return g->file_hint && strstr(base ? base + 1 : path, g->file_hint);
}

/* A group of probes/ that makes a session (torch, CUDA runtime, NCCL; not ld.so or CPython). */
static bool gives_session(const struct probe_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (probe_def__gives_session(&g->probes[i]))
			return true;
	return false;
}

/* Is the file named like a library of such a group? Then skipping it is worth a word. */
static bool named_like_session_lib(const struct observer *o, const char *path)
{
	for (size_t gi = 0; gi < o->probes.n; gi++)
		if (gives_session(&o->probes.groups[gi]) &&
		    hint_matches(&o->probes.groups[gi], path))
			return true;
	return false;
}

static int scan(struct observer *o, struct target *t)
{
	struct proc_maps maps;
	size_t first, fi, gi;
	int err, total = 0;

	err = procfs__read_maps(t->pid, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = add_new_files(t, &maps, &first);
	procfs__free_maps(&maps);
	if (err)
		return err;

	for (fi = first; fi < t->nfiles; fi++) {
		struct mapped_file *f = &t->files[fi];
		struct sym_query *q = calloc(o->probes.n + 1, sizeof(*q));
		bool cached;

		if (!q)
			return -ENOMEM;
		for (gi = 0; gi < o->probes.n; gi++)
			q[gi].name = o->probes.groups[gi].match_defines;
		q[o->probes.n].name = "@load";
		err = sym_cache__resolve(o->syms, f->host_path, q, o->probes.n + 1, &cached);
		if (err < 0) {
			/* a file the target maps but we cannot read as ELF (crafted, truncated,
			 * gone): this file is skipped, the rest of the target is not */
			if (named_like_session_lib(o, f->path) || log_verbosity >= 2)
				wlog("pid %d: skipped %s: %s", t->pid, f->path,
				     err == -ENOEXEC ? "not an ELF file it can read" : strerror(-err));
			if (!procfs__alive(t->pid)) {
				free(q);
				return -ESRCH;
			}
		} else if (q[o->probes.n].found) {
			f->bias = f->map_start - q[o->probes.n].vaddr;
		}
		for (gi = 0; err >= 0 && gi < o->probes.n; gi++) {
			const struct probe_group *g = &o->probes.groups[gi];
			int n;

			if (!q[gi].found) {
				if (hint_matches(g, f->path) && *g->file_hint && gives_session(g))
					ilog("pid %d: skipped %s: named like %s's library but defines "
					     "no %s", t->pid, f->path, g->name, g->match_defines);
				continue;
			}
			if (!hint_matches(g, f->path))
				dlog("pid %d: %s defines %s: group %s by symbol, not by name",
				     t->pid, f->path, g->match_defines, g->name);
			n = resolve__group(o, t, fi, g);
			if (n < 0) {
				err = n;
				break;
			}
			total += n;
		}
		for (gi = 0; gi <= o->probes.n; gi++)
			free(q[gi].found);
		free(q);
		if (err == -ENOMEM || err == -ENOSPC || err == -ESRCH)
			return err;
	}
	if (!procfs__alive(t->pid))
		return -ESRCH;
	return total;
}

/* The links go to the reaper's threads: detaching a target never holds up the loader (see
 * link_reaper.h). Its ids stay reserved until their links are gone. */
int attach__scan(struct observer *o, struct target *t)
{
	int n;

	link_reaper__hold();	/* no close of old links delays these (link_reaper.h) */
	n = scan(o, t);
	link_reaper__release();
	return n;
}

/* probe_specs is an array: a delete would leave the spec in place, counting in the new
 * image too once the exec count is forgotten. A spec of no image matches no hit. */
static void forget_spec(struct observer *o, __u32 id)
{
	struct probe_spec none = { .flags = PROBE_F_IMAGE, .image = UINT32_MAX };

	bpf_map_update_elem(o->specs_fd, &id, &none, BPF_ANY);
}

/* A process that exited: its links go to the reaper's threads, so that detaching it never
 * holds up the loader (see link_reaper.h); its ids stay reserved until their links are
 * gone. A process still alive (it exec'd, or we detach from it): a uprobe follows the task,
 * not the image, so a link left behind would fire in the new image too (and count its CUDA
 * calls twice; a uprobe_multi link's hits between the exec and here are left out by
 * PROBE_F_IMAGE). Perf links go here and now; uprobe_multi links go to the reaper (closed in
 * parallel, a grace period for all) once BPF forgets their ids: a hit meanwhile finds a spec
 * of no image and does nothing. */
void attach__detach(struct observer *o, struct target *t)
{
	bool gone = procfs__alive(t->pid) <= 0;
	__u32 pid = (__u32)t->pid;

	bpf_map_delete_elem(o->runtime_text_fd, &pid);
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (r->id && !gone && o->kf.uprobe_multi)
			forget_spec(o, r->id);
		if (r->id && (gone || o->kf.uprobe_multi))
			probe_links__unlink_async(o, r);
		else
			probe_links__unlink(r);
		probe_links__release(o, r);
	}
	/* after the specs: the next image's probes start from no exec */
	bpf_map_delete_elem(o->images_fd, &pid);
	write_hook__detach(o, t);
}
