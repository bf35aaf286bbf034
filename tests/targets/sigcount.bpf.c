// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The tests' own signal counter (tests/e2e/test_job_first.py), independent of the observer:
// every stop or continue signal generated for a thread of a descendant of one process
// (tp_btf/signal_generate: kernel BTF, no tracefs), by signal number.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 ancestor;	/* count for its descendants (not for itself) */
__u64 counts[65];

static bool is_stop_or_cont(int sig)
{
	return sig == 19 /* SIGSTOP */ || sig == 18 /* SIGCONT */ || sig == 20 /* SIGTSTP */ ||
	       sig == 21 /* SIGTTIN */ || sig == 22 /* SIGTTOU */;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct task_struct *p = task;

	if (sig < 1 || sig > 64 || !is_stop_or_cont(sig))
		return 0;
	for (int i = 0; i < 8; i++) {	/* the test runner, the observer, the job, its workers */
		p = BPF_CORE_READ(p, real_parent);
		if (!p)
			return 0;
		if (BPF_CORE_READ(p, tgid) == ancestor) {
			__u32 k = (__u32)sig & 63;	/* bounded for the verifier; 17..22 here */

			__sync_fetch_and_add(&counts[k], 1);
			return 0;
		}
	}
	return 0;
}
