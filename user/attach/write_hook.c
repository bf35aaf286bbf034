// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks: the hook on the write path that copies what traced processes print. Attached when
// a process is armed and detached after the last, so an agent with nothing to trace costs the
// node's other processes nothing. Cheapest for the node first (bench/syscall_cost.sh):
// - fentry on ksys_write (a BPF object of its own, loaded on demand): only write(2) pays;
// - else a uprobe on the C library's write() in each traced process: nothing else pays;
// - else (no C library to probe: a static binary) the raw syscall-entry tracepoint: every
//   system call of every process pays its check while it is attached.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include "attach/libbpf_log.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/write_hook.h"
#include "common/log.h"
#include "cirron.skel.h"
#include "write_fentry.skel.h"

const char *write_hook__name(enum write_hook_kind k)
{
	static const char *const names[] = { "none", "fentry", "uprobe", "syscall_tracepoint" };

	return k <= WRITE_HOOK_TRACEPOINT ? names[k] : "none";
}

/* The fentry object shares every map with the main one: same names, same fds. */
static int load_fentry(struct observer *o)
{
	struct write_fentry_bpf *s = write_fentry_bpf__open();
	struct bpf_map *m;
	int err;

	if (!s)
		return -errno;
	bpf_object__for_each_map(m, s->obj) {
		struct bpf_map *mine = bpf_object__find_map_by_name(o->skel->obj,
								     bpf_map__name(m));

		if (mine && bpf_map__reuse_fd(m, bpf_map__fd(mine))) {
			err = -errno;
			goto fail;
		}
	}
	libbpf_log__quiet(true);	/* refused on some kernels: our line says so */
	err = write_fentry_bpf__load(s);
	if (!err)
		err = write_fentry_bpf__attach(s);
	libbpf_log__quiet(false);
	if (err)
		goto fail;
	o->writes.fentry = s;
	return 0;
fail:
	write_fentry_bpf__destroy(s);
	return err;
}

/* The C library's write() in t, for t only. */
static int attach_uprobe(struct observer *o, struct target *t)
{
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .func_name = "write" };
	struct bpf_link *l;

	for (size_t i = 0; i < t->nfiles; i++) {
		const char *base = strrchr(t->files[i].path, '/');

		base = base ? base + 1 : t->files[i].path;
		if (strncmp(base, "libc.", 5) != 0 && strncmp(base, "libc-", 5) != 0)
			continue;	/* glibc's libc.so.6 (libc-2.x.so), musl's libc.musl-*.so.1 */
		l = bpf_program__attach_uprobe_opts(o->prog_write, t->pid, t->files[i].host_path,
						    0, &uo);
		if (!l)
			return -errno;
		t->hook.link = l;
		return 0;
	}
	return -ENOENT;
}

/* A process with a dynamic linker gets its C library in time (at exec it is not mapped yet). */
static bool dynamic(const struct target *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const char *base = strrchr(t->files[i].path, '/');

		if (!strncmp(base ? base + 1 : t->files[i].path, "ld-", 3))
			return true;
	}
	return false;
}

static int attach_tracepoint(struct observer *o)
{
	if (!o->writes.tp_link) {
		o->writes.tp_link = bpf_program__attach(o->skel->progs.on_write_tp);
		if (!o->writes.tp_link)
			return -errno;
	}
	return 0;
}

int write_hook__attach(struct observer *o, struct target *t)
{
	int err;

	if (o->opts->marks == MARKS_OFF || t->hook.kind != WRITE_HOOK_NONE)
		return 0;
	if (o->opts->marks == MARKS_ON && !o->writes.fentry_failed) {
		err = o->writes.fentry ? 0 : load_fentry(o);
		if (!err) {
			t->hook.kind = WRITE_HOOK_FENTRY;
			o->writes.fentry_users++;
			return 0;
		}
		o->writes.fentry_failed = true;
		ilog("marks: no fentry on ksys_write here (%s): a uprobe on write() per process",
		     strerror(-err));
	}
	err = attach_uprobe(o, t);
	if (!err) {
		t->hook.kind = WRITE_HOOK_UPROBE;
		return 0;
	}
	if (o->opts->marks == MARKS_UPROBE || (err == -ENOENT && dynamic(t)))
		return err;	/* tried again when it is armed after its next library load */
	err = attach_tracepoint(o);
	if (err)
		return err;
	t->hook.kind = WRITE_HOOK_TRACEPOINT;
	o->writes.tp_users++;
	return 0;
}

void write_hook__detach(struct observer *o, struct target *t)
{
	switch (t->hook.kind) {
	case WRITE_HOOK_FENTRY:
		if (!--o->writes.fentry_users) {	/* 5.10 attaches it once per load */
			write_fentry_bpf__destroy(o->writes.fentry);
			o->writes.fentry = NULL;
		}
		break;
	case WRITE_HOOK_UPROBE:
		if (t->hook.link)
			link_reaper__destroy(t->hook.link);
		t->hook.link = NULL;
		break;
	case WRITE_HOOK_TRACEPOINT:
		if (!--o->writes.tp_users) {
			bpf_link__destroy(o->writes.tp_link);
			o->writes.tp_link = NULL;
		}
		break;
	case WRITE_HOOK_NONE:
		break;
	}
	t->hook.kind = WRITE_HOOK_NONE;
}

void write_hook__free(struct observer *o)
{
	write_fentry_bpf__destroy(o->writes.fentry);
	bpf_link__destroy(o->writes.tp_link);
	o->writes.fentry = NULL;
	o->writes.tp_link = NULL;
}
