// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --marks uprobe: a uprobe on the C library's write() in one traced process.
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include "attach/observer.h"

int attach__write_uprobe(struct observer *o, struct target *t)
{
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .func_name = "write" };
	struct bpf_link *l;

	for (size_t i = 0; i < t->nfiles; i++) {
		const char *base = strrchr(t->files[i].path, '/');

		base = base ? base + 1 : t->files[i].path;
		if (strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libc-", 5) != 0)
			continue;
		l = bpf_program__attach_uprobe_opts(o->prog_write, t->pid, t->files[i].host_path,
						    0, &uo);
		if (!l)
			return -errno;
		t->write_link = l;
		return 0;
	}
	return -ENOENT;
}
