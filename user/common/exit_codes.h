/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_EXIT_CODES_H
#define __CIRRON_EXIT_CODES_H

/* Documented in --help, man/cirron-probe.1 and docs/usage.md; tests check each. */
enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,	/* BPF load/attach or another runtime failure */
	EXIT_NO_SUCH_PROCESS = 2,	/* the PID does not exist */
	EXIT_NO_PERMISSION = 3,		/* not root / no CAP_BPF + CAP_PERFMON */
	EXIT_NO_KNOWN_LIBRARY = 4,	/* nothing in the target matches probes/ */
	EXIT_SPOOL_UNWRITABLE = 5,	/* --path cannot be created or written */
	EXIT_TARGET_GONE = 6,		/* the target exited while we attached */
	EXIT_CORRUPT_INPUT = 7,		/* read-back found corrupt or foreign files */
	EXIT_NO_SPOOL = 8,		/* read-back: DIR/spool missing or unreadable */
	EXIT_KERNEL_UNSUPPORTED = 9,	/* the kernel lacks BTF or the BPF ring buffer */
	EXIT_OUTPUT_UNWRITABLE = 10,	/* -o FILE cannot be written */
	EXIT_METRICS_LISTEN = 11,	/* --metrics ADDR:PORT cannot be listened on (in use) */
	EXIT_USAGE = 64,		/* bad command line (argp's convention) */
};

#endif
