// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks through fentry on the kernel's ksys_write: a BPF object of its own, loaded while some
// process is traced (user/attach/write_hook.c) and sharing the main object's maps, because a
// kernel may refuse fentry (here: load fails with EPERM) without refusing the rest, and Linux
// 5.10 attaches a tracing program only once per load. Only write(2) reaches ksys_write: no
// other system call pays for it.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cirron.h"
#include "maps.bpf.h"
#include "emit.bpf.h"
#include "writes.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("fentry/ksys_write")
int BPF_PROG(on_ksys_write, unsigned int fd, const char *buf, size_t count)
{
	emit_write(fd, (__u64)buf, count);
	return 0;
}
