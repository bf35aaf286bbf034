// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Process lifecycle: fork, exec and exit of traced processes (BTF tracepoints, told through
// the control ring), and the node agent's discovery of new dynamic linkers and link maps.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct target_info *t = bpf_map_lookup_elem(&targets, &ptgid);
	struct target_info ct;

	if (!t || ctgid == ptgid)
		return 0;	/* not traced, or a new thread */
	if (!(t->flags & TARGET_F_FOLLOW)) {
		/* watch: a fork of a traced process shares its image (a DataLoader worker): no
		 * job of its own unless it execs (on_exec drops the mark) */
		if (t->flags & TARGET_F_TRACED) {
			ct.flags = TARGET_F_IGNORED;
			ct.lost = 0;
			bpf_map_update_elem(&targets, &ctgid, &ct, BPF_NOEXIST);
		}
		return 0;
	}
	ct.flags = t->flags & (TARGET_F_FOLLOW | TARGET_F_STOP_ON_EXEC);
	ct.lost = 0;
	bpf_map_update_elem(&targets, &ctgid, &ct, BPF_ANY);
	emit_control(EV_FORK, ptgid, ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), one = 1, *n;
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t)
		return 0;
	if (t->flags & TARGET_F_IGNORED) {	/* a new image: watch looks at it afresh */
		bpf_map_delete_elem(&targets, &tgid);
		return 0;
	}
	n = bpf_map_lookup_elem(&images, &tgid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&images, &tgid, &one, BPF_NOEXIST);
	/* Held until the loader has attached to the new image; it sends SIGCONT. Stop
	 * before telling, so that the SIGCONT cannot overtake the SIGSTOP. */
	if (t->flags & TARGET_F_STOP_ON_EXEC)
		hold_current(tgid);	/* an exec leaves one thread */
	emit_control(EV_EXEC, tgid, !!(t->flags & TARGET_F_STOP_ON_EXEC));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t)
		return 0;
	/* signal->live drops before this tracepoint: 0 means the last thread is leaving */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!(t->flags & TARGET_F_IGNORED)) {
		__u32 status = BPF_CORE_READ(p, exit_code);

		bpf_map_update_elem(&exits, &tgid, &status, BPF_ANY);
		emit_control(EV_EXIT, tgid, status);
	}
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

static long file_of_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct file_key *key = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (f) {
		key->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		key->ino = BPF_CORE_READ(f, f_inode, i_ino);
	}
	return 0;
}

/* watch (loaded only there): the first exec through each dynamic linker tells the loader,
 * which probes that ld.so's _dl_debug_state in every process (ACT_DL_WATCH). A new
 * process starts in its ld.so: the VMA of its first instruction names the file. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec_watch, struct task_struct *p)
{
	__u64 ip = PT_REGS_IP_CORE((struct pt_regs *)bpf_task_pt_regs(p));
	struct file_key key = {};
	__u8 one = 1;

	if (bpf_find_vma(p, ip, file_of_vma, &key, 0) || !key.ino ||
	    bpf_map_update_elem(&ldso_seen, &key, &one, BPF_NOEXIST))
		return 0;	/* no file (or a static binary's), or seen before */
	emit_control(EV_NEW_LDSO, BPF_CORE_READ(p, tgid), ip);
	return 0;
}

/* watch without attach cookies: the ld.so probe in every process has a program of its own.
 * It cannot tell which ld.so it is in, so the link map's state is left to the loader. */
SEC("uprobe")
int handle_dl_watch(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (t && (t->flags & (TARGET_F_TRACED | TARGET_F_IGNORED)))
		return 0;
	emit_control_flags(EV_WATCH_LOAD, tgid, 0, BPF_RB_NO_WAKEUP);
	return 0;
}

/* watch without bpf_find_vma (before 5.17): the first exec of each executable file tells the
 * loader, which finds that process's dynamic linker in /proc (EV_NEW_LDSO, args[0] = 0). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec_watch_exe, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct file_key key = {
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
	};
	__u8 one = 1;

	if (!key.ino || bpf_map_update_elem(&exe_seen, &key, &one, BPF_NOEXIST))
		return 0;
	emit_control(EV_NEW_LDSO, BPF_CORE_READ(p, tgid), 0);
	return 0;
}