// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `doctor -p PID`: what the target maps, which probe groups match, which symbols resolve
// and why not, plus what this machine allows. It attaches nothing.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "attach/attach.h"
#include "attach/observer.h"
#include "common/caps.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "doctor.h"
#include "observe/setup.h"
#include "proc/procfs.h"

/* deploy/capabilities, each as this process has it on this kernel. */
static void check_caps(void)
{
	uint64_t eff = caps__effective();
	unsigned int kernel = caps__kernel();

	printf("  capabilities (deploy/capabilities; root has them all):\n");
	for (size_t i = 0; i < caps__count; i++) {
		const struct cap_need *c = &caps__needed[i];
		bool applies = !(c->from && kernel < c->from) && !(c->before && kernel >= c->before);

		printf("    %-20s %-8s %s: %s\n", c->name,
		       !applies ? "-" : caps__lacks(c, eff, kernel) ? "MISSING" : "ok",
		       !applies ? "not needed on this kernel" : c->others ?
		       "for other users' processes (watch, attach)" : "for every command", c->why);
	}
}

static void check_machine(const struct probe_set *probes)
{
	struct kernel_features kf;

	printf("machine:\n");
	printf("  euid %d%s\n", geteuid(), geteuid() ? " (not root)" : "");
	check_caps();
	printf("  probes: %s\n", probes->dir[0] ? probes->dir : "built in");
	printf("  kernel BTF (/sys/kernel/btf/vmlinux): %s\n",
	       access("/sys/kernel/btf/vmlinux", R_OK) ? "MISSING (tracepoints will not load)" : "ok");
	printf("  uprobe PMU (/sys/bus/event_source/devices/uprobe): %s\n",
	       access("/sys/bus/event_source/devices/uprobe/type", R_OK) ? "MISSING" : "ok");
	kernel_features__probe(&kf);
	kernel_features__print(stdout, &kf, "  ");
}

int doctor__main(const struct options *opts)
{
	struct observer *o = calloc(1, sizeof(*o));
	struct target *t = NULL;
	char comm[64] = "?";
	int err, n, code = EXIT_OK;
	size_t i;

	if (!o)
		return EXIT_FAILURE_RUNTIME;
	err = setup__init(o, opts);
	if (err) {
		free(o);
		return err;
	}
	o->dry_run = true;
	check_machine(&o->probes);
	if (!procfs__alive(opts->pid)) {
		elog("no such process: %d", opts->pid);
		code = EXIT_NO_SUCH_PROCESS;
		goto out;
	}
	procfs__comm(opts->pid, comm, sizeof(comm));
	printf("target: pid %d (%s), RANK=%ld LOCAL_RANK=%ld WORLD_SIZE=%ld\n", opts->pid, comm,
	       procfs__env_long(opts->pid, "RANK", 0), procfs__env_long(opts->pid, "LOCAL_RANK", 0),
	       procfs__env_long(opts->pid, "WORLD_SIZE", 1));
	t = target__new(opts->pid);
	if (!t) {
		code = EXIT_FAILURE_RUNTIME;
		goto out;
	}
	o->targets = t;
	n = attach__scan(o, t);
	if (n == -ESRCH) {
		elog("process %d exited while being examined", opts->pid);
		code = EXIT_TARGET_GONE;
		goto out;
	} else if (n < 0) {
		elog("cannot read process %d: %s", opts->pid, strerror(-n));
		code = n == -EACCES || n == -EPERM ? EXIT_NO_PERMISSION : EXIT_FAILURE_RUNTIME;
		goto out;
	}
	printf("executable mappings: %zu files\n", t->nfiles);
	for (i = 0; i < t->nfiles; i++)
		printf("  %s%s\n", t->files[i].path, t->files[i].fd < 0 ? " (unreadable)" : "");
	printf("probe groups:\n");
	for (size_t g = 0; g < o->probes.n; g++) {
		const struct probe_group *grp = &o->probes.groups[g];
		bool matched = false;
		size_t file = (size_t)-1;

		for (i = 0; i < t->nprobes; i++) {
			const struct probe_result *r = &t->probes[i];

			if (r->group != grp)
				continue;
			/* a group may match in several files: each offset under its own file */
			if (r->file != file)
				printf("  %s: matched in %s (defines %s)\n", grp->name,
				       t->files[r->file].path, grp->match_defines);
			file = r->file;
			matched = true;
			if (!r->err) {
				printf("    ok       %-32s %s +0x%llx", r->def->symbol,
				       probe_action__name(r->def->action),
				       (unsigned long long)r->file_offset);
				for (unsigned int k = 0; k < r->nexits; k++)	/* "return": "exits" */
					printf("%s+0x%llx", k ? ", " : ", exits at ",
					       (unsigned long long)r->exit_offsets[k]);
				printf("\n");
			} else {
				printf("    %-8s %-32s %s\n", r->def->optional ? "absent" : "MISSING",
				       r->def->symbol, r->why ? r->why :
				       r->err == -ENOENT ? (r->def->optional ?
				       "not in this build (optional)" : "symbol not defined in the file") :
				       strerror(-r->err));
			}
		}
		if (!matched)
			printf("  %s: no mapped file defines %s\n", grp->name, grp->match_defines);
	}
	/* Same rule as attach: only the ld.so hook is not a signal source. */
	for (i = 0; i < t->nprobes && t->probes[i].def->action == ACT_DL_STATE; i++)
		;
	if (i == t->nprobes) {
		printf("verdict: nothing to observe yet (no known library is mapped)\n");
		code = EXIT_NO_KNOWN_LIBRARY;
	} else {
		printf("verdict: attachable\n");
	}
out:
	o->targets = NULL;
	target__free(t);
	setup__free(o);
	free(o);
	return code;
}
