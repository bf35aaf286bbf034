// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Probes linked only in windows: CPython's during sampled steps (--python-frames sampled);
// py_sample.c decides when.
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/probe_links.h"
#include "attach/windows.h"
#include "common/log.h"

/* Links rs[0..n) for a sample or window (why); the first that fails is said, and undoes
 * nothing of the others. Returns 0 or that -errno; *linked: probes linked. */
static int link_sampled(struct observer *o, struct target *t, struct probe_result **rs,
			size_t n, const char *why, int *linked)
{
	int *errs = calloc(n + 1, sizeof(*errs)), err = 0;

	if (!errs)
		return -ENOMEM;
	*linked += n ? probe_links__link_many(o, t, rs, n, errs) : 0;
	for (size_t i = 0; i < n && !err; i++) {
		err = errs[i];
		if (err)
			wlog("pid %d: cannot attach %s for %s: %s", t->pid, rs[i]->symbol, why,
			     strerror(-err));
	}
	free(errs);
	return err;
}

int windows__python_sample(struct observer *o, struct target *t, bool on)
{
	struct probe_result **rs = calloc(t->nprobes + 1, sizeof(struct probe_result *));
	int linked = 0, err = 0;
	size_t n = 0;

	if (!rs)
		return -ENOMEM;
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->sampled || !r->id || !r->entry == !on)
			continue;
		if (!on) {	/* both at once: neither outlives the other by a grace period */
			probe_links__unlink_async(o, r);
			continue;
		}
		rs[n++] = r;
	}
	link_reaper__hold();
	err = link_sampled(o, t, rs, n, "a sampled step", &linked);
	link_reaper__release();
	free(rs);
	return err ? err : linked;
}
