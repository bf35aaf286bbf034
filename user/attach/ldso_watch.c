// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The node agent's ld.so probes: _dl_debug_state of each dynamic linker in use, in every
// process (no PID filter), so that a process that loads torch or CUDA is seen at once.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attach/ldso_watch.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/probe_links.h"
#include "attach/resolve.h"
#include "attach/ulink.h"
#include "common/log.h"
#include "proc/procfs.h"

int ldso_watch__add(struct observer *o, int pid, const struct proc_map *m)
{
	struct watch *w = &o->watch;
	const struct probe_def *d = w->ldso;
	struct sym_query q[2] = { { .name = d->symbol }, { .name = d->aux_symbol } };
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo) };
	struct probe_spec spec = { .action = ACT_DL_WATCH };
	char path[PATH_MAX];
	struct watch_ldso *l;
	uint64_t off, cookie;
	struct stat st;
	bool cached;
	int fd, err;

	if (procfs__host_path(pid, m, path, sizeof(path)) || stat(path, &st))
		return -ENOENT;
	for (size_t i = 0; i < w->nldsos; i++)
		if (w->ldsos[i].dev == st.st_dev && w->ldsos[i].ino == st.st_ino)
			return 1;
	if (w->nldsos == CIRRON_WATCH_LDSO)
		return -ENOSPC;
	err = sym_cache__resolve(o->syms, path, q, 2, &cached);
	if (err < 2) {
		err = err < 0 ? err : -ENOENT;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	off = resolve__skip_endbr64(fd, q[0].file_offset);
	if (fd >= 0)
		close(fd);
	/* r_debug.r_state relative to the probe: the same in every process, whatever the
	 * load address (the BPF program adds it to the address it was hit at) */
	spec.aux = q[1].vaddr + d->aux_offset - (q[0].vaddr + (off - q[0].file_offset));
	uo.bpf_cookie = CIRRON_WATCH_FIRST_ID + (uint32_t)w->nldsos;
	if (bpf_map_update_elem(o->specs_fd, &uo.bpf_cookie, &spec, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	if (!o->kf.cookie)	/* a program of its own, which needs no cookie */
		uo.bpf_cookie = 0;
	l = &w->ldsos[w->nldsos];
	link_reaper__hold();
	if (o->kf.uprobe_multi) {	/* pid 0: every process */
		cookie = uo.bpf_cookie;
		err = ulink__multi(bpf_program__fd(o->prog_entry), 0, path, &off, &cookie, NULL, 1,
				   false, &l->link);
	} else {
		l->link = ulink__perf(bpf_program__attach_uprobe_opts(o->kf.cookie ? o->prog_entry :
								      o->prog_dl_watch, -1, path,
								      off, &uo), NULL);
		err = l->link ? 0 : -errno;
	}
	link_reaper__release();
	if (err)
		goto out;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	w->nldsos++;
	ilog("watching the processes that %s serves (from pid %d)", m->path, pid);
	err = 0;
out:
	free(q[0].found);
	free(q[1].found);
	return err;
}

void ldso_watch__remove_all(struct observer *o)
{
	for (size_t i = 0; i < o->watch.nldsos; i++)
		ulink__put(o->watch.ldsos[i].link);
	o->watch.nldsos = 0;
}
