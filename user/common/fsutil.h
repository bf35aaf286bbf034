/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_FSUTIL_H
#define __CIRRON_FSUTIL_H

#include <stdbool.h>

/* mkdir -p. Returns 0 or -errno. */
int fs__mkdir_p(const char *path);
/* True if this process may load BPF and attach uprobes: root, or CAP_BPF + CAP_PERFMON
 * (or CAP_SYS_ADMIN) in the effective set. */
bool fs__have_bpf_caps(void);

#endif
