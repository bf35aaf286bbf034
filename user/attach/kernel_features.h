/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * What the running kernel offers the BPF object, probed once at start, and the path
 * chosen per feature (README, "Kernels"). doctor prints it, each health block carries it.
 */
#ifndef __CIRRON_KERNEL_FEATURES_H
#define __CIRRON_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

struct observer;
struct target;
struct probe_result;

struct kernel_features {
	char release[65];	/* uname -r */
	bool btf;		/* /sys/kernel/btf/vmlinux: CO-RE and tp_btf programs (5.5+) */
	bool ringbuf;		/* BPF_MAP_TYPE_RINGBUF (5.8+) */
	bool cookie;		/* bpf_get_attach_cookie in uprobes (5.15+) */
	bool find_vma;		/* bpf_find_vma + bpf_task_pt_regs (5.17+) */
	bool uprobe_multi;	/* uprobe_multi links (6.6+): one link per file, see ulink.h */
	unsigned int without;	/* KF_*: present, but turned off by CIRRON_KERNEL_WITHOUT */
};

/* the order of the names CIRRON_KERNEL_WITHOUT takes: btf, ringbuf, cookie, find_vma,
 * uprobe_multi */
#define KF_BTF		(1u << 0)
#define KF_RINGBUF	(1u << 1)
#define KF_COOKIE	(1u << 2)
#define KF_FIND_VMA	(1u << 3)
#define KF_UPROBE_MULTI	(1u << 4)

/* Probes the running kernel (libbpf feature probes, kernel BTF). Never fails; a feature that
 * cannot be probed counts as absent. CIRRON_KERNEL_WITHOUT=cookie,find_vma (any of btf,
 * ringbuf, cookie, find_vma, uprobe_multi) takes the features named as absent, to test and measure the
 * fallbacks and the refusal on a kernel that has them. */
void kernel_features__probe(struct kernel_features *kf);
/* The missing feature below which nothing works ("BPF ring buffer (Linux 5.8)"), or NULL. */
const char *kernel_features__missing(const struct kernel_features *kf);
/* One line per feature: what was found and which path was chosen. */
void kernel_features__print(FILE *f, const struct kernel_features *kf, const char *indent);
/* The same as a JSON object (health.kernel). */
cJSON *kernel_features__json(const struct kernel_features *kf);

/* Without cookies: tells BPF the address at which r's entry fires in its target
 * (probe_addrs), or forgets it. Returns 0 or -errno. */
int kernel_features__add_probe_addr(struct observer *o, struct target *t, struct probe_result *r);
void kernel_features__del_probe_addr(struct observer *o, struct target *t, struct probe_result *r);
/* The same for r's exit instruction i (exit_offsets[i] -> exit_addrs[i]). */
int kernel_features__add_exit_addr(struct observer *o, struct target *t, struct probe_result *r,
				   unsigned int i);
void kernel_features__del_exit_addr(struct observer *o, struct target *t, struct probe_result *r,
				    unsigned int i);

#endif
