// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exits of C++ functions an exception may leave ("return": "call_site"): the first time a
// process returns to an address, an entry-style uprobe there (docs/probe-exits.md).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "attach/observer.h"
#include "common/log.h"
#include "target/procfs.h"

/* A return address is the instruction after a call, so always an instruction boundary; the
 * BPF side pairs a hit there with its call by thread and stack pointer, so a hit that did not
 * come from returning (a jump to that instruction) is ignored. */
int attach__ret_site(struct observer *o, struct target *t, uint32_t id, uint64_t addr)
{
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = o->kf.cookie ? id : 0 };
	struct probe_addr_key key = { .tgid = (__u32)t->pid, .addr = addr };
	struct ret_site_key site = { .tgid = (__u32)t->pid, .addr = addr };
	struct probe_result *r;
	struct proc_maps maps;
	__u32 site_value;
	char path[PATH_MAX];
	int err = -ENOENT;

	if (id >= CIRRON_MAX_PROBES || o->slots[id].target != t)
		return -ENOENT;	/* detached since */
	r = &t->probes[o->slots[id].probe];
	for (unsigned int i = 0; i < r->nsites; i++)
		if (r->site_addrs[i] == addr)
			return 0;
	if (r->nsites == CIRRON_RET_SITES) {
		wlog("pid %d: %s returns to more than %d places: exits at the others are not seen",
		     t->pid, r->symbol, CIRRON_RET_SITES);
		return -ENOSPC;
	}
	if (procfs__read_maps(t->pid, &maps))
		return procfs__alive(t->pid) ? -ENOENT : -ESRCH;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];

		if (!m->exec || addr < m->start || addr >= m->end)
			continue;
		if (procfs__host_path(t->pid, m, path, sizeof(path)))
			break;
		if (!o->kf.cookie && bpf_map_update_elem(o->probe_addrs_fd, &key, &id, BPF_ANY)) {
			err = -errno;
			break;
		}
		r->site_links[r->nsites] = bpf_program__attach_uprobe_opts(
			o->prog_ret_site, t->pid, path, m->offset + (addr - m->start), &uo);
		if (!r->site_links[r->nsites]) {
			err = -errno;
			if (!o->kf.cookie)
				bpf_map_delete_elem(o->probe_addrs_fd, &key);
			break;
		}
		r->site_addrs[r->nsites++] = addr;
		site_value = id | RET_SITE_PROBED;	/* BPF records calls returning here now */
		bpf_map_update_elem(o->ret_sites_fd, &site, &site_value, BPF_ANY);
		dlog("pid %d: %s returns to %s+0x%llx: probed there", t->pid, r->symbol, m->path,
		     (unsigned long long)(m->offset + (addr - m->start)));
		err = 0;
		break;
	}
	procfs__free_maps(&maps);
	if (err)
		wlog("pid %d: cannot probe where %s returns (0x%llx): %s", t->pid, r->symbol,
		     (unsigned long long)addr, strerror(-err));
	return err;
}
