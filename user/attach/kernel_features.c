// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Kernel features the BPF object can use, probed at start, and the fallbacks for kernels
// that lack them: attach cookies (5.15) -> a map of probed addresses per process; bpf_find_vma
// (5.17) -> the exec event names the executable, the loader finds its ld.so in /proc;
// uprobe_multi links (6.6) -> one perf link per probe.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "attach/kernel_features.h"
#include "attach/observer.h"
#include "attach/ulink.h"
#include "proc/procfs.h"

/* Whether the kernel's enum bpf_func_id names the helper (kernel BTF). */
static bool btf_has_helper(const struct btf *btf, const char *name)
{
	int id = btf ? btf__find_by_name_kind(btf, "bpf_func_id", BTF_KIND_ENUM) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e;

	if (!t)
		return false;
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return true;
	return false;
}

/* Whether CIRRON_KERNEL_WITHOUT (a comma-separated list) names the feature. */
static bool turned_off(const char *name)
{
	const char *list = getenv("CIRRON_KERNEL_WITHOUT"), *p = list;
	size_t n = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return false;
}

void kernel_features__probe(struct kernel_features *kf)
{
	bool *have[] = { &kf->btf, &kf->ringbuf, &kf->cookie, &kf->find_vma, &kf->uprobe_multi };
	static const char *const names[] = { "btf", "ringbuf", "cookie", "find_vma",
					     "uprobe_multi" };
	struct btf *btf;
	struct utsname u;

	memset(kf, 0, sizeof(*kf));
	if (!uname(&u))
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	btf = btf__load_vmlinux_btf();
	kf->btf = btf != NULL;
	kf->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	kf->cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					     NULL) == 1;
	/* a tracing program's helper cannot be probed without an attach target: the kernel's
	 * own list of helpers says (both came in 5.17 and 5.15) */
	kf->find_vma = btf_has_helper(btf, "BPF_FUNC_find_vma") &&
		       btf_has_helper(btf, "BPF_FUNC_task_pt_regs");
	btf__free(btf);
	/* its cookies are what tells probes apart (Linux 6.6 has both) */
	kf->uprobe_multi = kf->cookie && ulink__multi_supported();
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (*have[i] && turned_off(names[i])) {
			*have[i] = false;
			kf->without |= 1u << i;
		}
	}
	kf->uprobe_multi &= kf->cookie;
}

const char *kernel_features__missing(const struct kernel_features *kf)
{
	if (!kf->btf && kf->without & KF_BTF)
		return "kernel BTF (turned off by CIRRON_KERNEL_WITHOUT)";
	if (!kf->ringbuf && kf->without & KF_RINGBUF)
		return "the BPF ring buffer (turned off by CIRRON_KERNEL_WITHOUT)";
	if (!kf->btf)
		return "kernel BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF; Linux 5.5+)";
	if (!kf->ringbuf)
		return "the BPF ring buffer (BPF_MAP_TYPE_RINGBUF, Linux 5.8+)";
	return NULL;
}

/* Why a feature is absent: the kernel's age, or the environment. */
static const char *absent(const struct kernel_features *kf, unsigned int bit, const char *since)
{
	return kf->without & bit ? "turned off by CIRRON_KERNEL_WITHOUT" : since;
}

void kernel_features__print(FILE *f, const struct kernel_features *kf, const char *indent)
{
	fprintf(f, "%skernel %s\n", indent, kf->release);
	fprintf(f, "%skernel BTF: %s\n", indent, kf->btf ? "yes" : "MISSING (nothing can load)");
	fprintf(f, "%sBPF ring buffer: %s\n", indent,
		kf->ringbuf ? "yes" : "MISSING (Linux 5.8+; nothing can load)");
	if (kf->cookie)
		fprintf(f, "%sprobe ids: attach cookies (bpf_get_attach_cookie)\n", indent);
	else
		fprintf(f, "%sprobe ids: probed-address map (no bpf_get_attach_cookie: %s)\n", indent,
			absent(kf, KF_COOKIE, "Linux 5.15+ has it"));
	if (kf->uprobe_multi)
		fprintf(f, "%suprobe links: uprobe_multi (one per file and batch)\n", indent);
	else
		fprintf(f, "%suprobe links: one perf link per probe (no uprobe_multi: %s)\n", indent,
			kf->without & KF_UPROBE_MULTI ? "turned off by CIRRON_KERNEL_WITHOUT" :
			!kf->cookie ? "needs attach cookies" : "Linux 6.6+ has it");
	if (kf->find_vma)
		fprintf(f, "%swatch finds dynamic linkers: in BPF at exec (bpf_find_vma)\n", indent);
	else
		fprintf(f, "%swatch finds dynamic linkers: from /proc at each new executable "
			"(no bpf_find_vma: %s)\n", indent, absent(kf, KF_FIND_VMA, "Linux 5.17+ has it"));
}

/* Appends "; " and what if the buffer has words already. */
static void add_reason(char *buf, size_t size, const char *what)
{
	size_t n = strlen(buf);

	snprintf(buf + n, size - n, "%s%s", n ? "; " : "", what);
}

cJSON *kernel_features__json(const struct kernel_features *kf)
{
	cJSON *k = cJSON_CreateObject();
	char reason[256] = "";

	if (!kf->cookie)
		add_reason(reason, sizeof(reason), kf->without & KF_COOKIE ? "cookie turned off by "
			   "CIRRON_KERNEL_WITHOUT" : "no bpf_get_attach_cookie (Linux < 5.15)");
	if (!kf->uprobe_multi && kf->cookie)
		add_reason(reason, sizeof(reason), kf->without & KF_UPROBE_MULTI ? "uprobe_multi "
			   "turned off by CIRRON_KERNEL_WITHOUT" : "no uprobe_multi links (Linux < 6.6)");
	if (!kf->find_vma)
		add_reason(reason, sizeof(reason), kf->without & KF_FIND_VMA ? "find_vma turned off "
			   "by CIRRON_KERNEL_WITHOUT" : "no bpf_find_vma (Linux < 5.17)");
	if (!*reason)
		snprintf(reason, sizeof(reason), "all features present");
	cJSON_AddStringToObject(k, "release", kf->release);
	cJSON_AddStringToObject(k, "probe_ids", kf->cookie ? "cookie" : "address_map");
	cJSON_AddStringToObject(k, "uprobe_links", kf->uprobe_multi ? "uprobe_multi" : "perf");
	cJSON_AddStringToObject(k, "ldso_discovery", kf->find_vma ? "bpf_find_vma" : "procfs");
	cJSON_AddStringToObject(k, "reason", reason);
	return k;
}

/* Where file offset off of t's file fi is mapped now; 0 if it is not. */
static uint64_t mapped_address(struct target *t, size_t fi, uint64_t off)
{
	const struct mapped_file *f = &t->files[fi];
	struct proc_maps maps;
	uint64_t addr = 0;

	if (procfs__read_maps(t->pid, &maps))
		return 0;
	for (size_t i = 0; i < maps.n && !addr; i++) {
		const struct proc_map *m = &maps.v[i];

		if (m->exec && m->dev == f->dev && m->ino == f->ino && m->offset <= off &&
		    off < m->offset + (m->end - m->start))
			addr = m->start + (off - m->offset);
	}
	procfs__free_maps(&maps);
	return addr;
}

int kernel_features__add_probe_addr(struct observer *o, struct target *t, struct probe_result *r)
{
	struct probe_addr_key key = { .tgid = (__u32)t->pid };

	key.addr = mapped_address(t, r->file, r->file_offset);
	if (!key.addr)
		return procfs__alive(t->pid) ? -ENOENT : -ESRCH;
	if (bpf_map_update_elem(o->probe_addrs_fd, &key, &r->id, BPF_ANY))
		return -errno;
	r->addr = key.addr;
	return 0;
}

void kernel_features__del_probe_addr(struct observer *o, struct target *t, struct probe_result *r)
{
	struct probe_addr_key key = { .tgid = (__u32)t->pid, .addr = r->addr };

	if (!r->addr)
		return;
	bpf_map_delete_elem(o->probe_addrs_fd, &key);
	r->addr = 0;
}

int kernel_features__add_exit_addr(struct observer *o, struct target *t, struct probe_result *r,
				   unsigned int i)
{
	struct probe_addr_key key = { .tgid = (__u32)t->pid };

	key.addr = mapped_address(t, r->file, r->exit_offsets[i]);
	if (!key.addr)
		return procfs__alive(t->pid) ? -ENOENT : -ESRCH;
	if (bpf_map_update_elem(o->probe_addrs_fd, &key, &r->id, BPF_ANY))
		return -errno;
	r->exit_addrs[i] = key.addr;
	return 0;
}

void kernel_features__del_exit_addr(struct observer *o, struct target *t, struct probe_result *r,
				    unsigned int i)
{
	struct probe_addr_key key = { .tgid = (__u32)t->pid, .addr = r->exit_addrs[i] };

	if (!r->exit_addrs[i])
		return;
	bpf_map_delete_elem(o->probe_addrs_fd, &key);
	r->exit_addrs[i] = 0;
}
