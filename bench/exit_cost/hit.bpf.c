// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
// Empty programs: what a hit costs the traced thread, before any work of cirron-probe's own.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("uprobe")
int on_hit(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int on_ret(void *ctx)
{
	return 0;
}
