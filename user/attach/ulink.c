// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Uprobe links shared by the probes they cover: perf links (one probe each) and uprobe_multi
// links (a batch of offsets in one file). libbpf 1.1 (Debian bookworm) has no uprobe_multi
// API, so the link is made with the bpf(2) syscall itself.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "attach/link_reaper.h"
#include "attach/ulink.h"

#define UPROBE_MULTI_RETURN	1u	/* BPF_F_UPROBE_MULTI_RETURN */
#define CMD_LINK_CREATE		28	/* BPF_LINK_CREATE */

/* union bpf_attr's link_create member with its uprobe_multi part (Linux 6.6 uapi); the
 * kernel takes a shorter attr than its own and reads the rest as zero. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

struct ulink {
	struct bpf_link *perf;
	int fd;			/* uprobe_multi link, or -1 */
	unsigned int refs;	/* probes that hold it */
	size_t npending;
	atomic_uint *pending[];	/* id reservations, released once it is closed */
};

static struct ulink *ulink_new(atomic_uint *const *pending, size_t n)
{
	struct ulink *l = calloc(1, sizeof(*l) + n * sizeof(l->pending[0]));

	if (!l)
		return NULL;
	l->fd = -1;
	for (size_t i = 0; pending && i < n; i++) {
		if (!pending[i])
			continue;
		l->pending[l->npending++] = pending[i];
		atomic_fetch_add(pending[i], 1);
	}
	return l;
}

static void ulink_free(void *arg)
{
	struct ulink *l = arg;

	bpf_link__destroy(l->perf);
	if (l->fd >= 0)
		close(l->fd);
	for (size_t i = 0; i < l->npending; i++)
		atomic_fetch_sub(l->pending[i], 1);
	free(l);
}

static int link_create_ref(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
			   const uint64_t *cookies, const uint64_t *ref_ctrs, size_t n, bool ret)
{
	struct link_create_uprobe_multi a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = ULINK_ATTACH_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs;
	a.cnt = (uint32_t)n;
	a.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	a.pid = pid > 0 ? (uint32_t)pid : 0;
	fd = (int)syscall(__NR_bpf, CMD_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int link_create(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, size_t n, bool ret)
{
	return link_create_ref(prog_fd, pid, path, offsets, cookies, NULL, n, ret);
}

int ulink__multi_semaphore(int prog_fd, pid_t pid, const char *path, uint64_t offset,
			   uint64_t cookie, uint64_t ref_ctr_offset, atomic_uint *pending,
			   struct ulink **out)
{
	struct ulink *l;
	int fd = link_create_ref(prog_fd, pid, path, &offset, &cookie, &ref_ctr_offset, 1, false);

	*out = NULL;
	if (fd < 0)
		return fd;
	l = ulink_new(&pending, 1);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	l->refs = 1;
	*out = l;
	return 0;
}

int ulink__multi(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
		 const uint64_t *cookies, atomic_uint *const *pending, size_t n, bool ret,
		 struct ulink **out)
{
	struct ulink *l;
	int fd;

	*out = NULL;
	if (!n)
		return 0;
	fd = link_create(prog_fd, pid, path, offsets, cookies, n, ret);
	if (fd < 0)
		return fd;
	l = ulink_new(pending, n);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	l->refs = (unsigned int)n;
	*out = l;
	return 0;
}

struct ulink *ulink__perf(struct bpf_link *bl, atomic_uint *pending)
{
	struct ulink *l;

	if (!bl)
		return NULL;
	l = ulink_new(&pending, 1);
	if (!l) {
		bpf_link__destroy(bl);
		return NULL;
	}
	l->perf = bl;
	l->refs = 1;
	return l;
}

void ulink__put(struct ulink *l)
{
	if (l && !--l->refs)
		ulink_free(l);
}

void ulink__put_async(struct ulink *l)
{
	if (l && !--l->refs)
		link_reaper__run(ulink_free, l, l->perf != NULL);
}

void ulink__close(struct ulink *l)
{
	if (l)
		ulink_free(l);
}

bool ulink__multi_supported(void)
{
	static const struct bpf_insn ret0[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	struct bpf_prog_load_opts po = { .sz = sizeof(po),
					 .expected_attach_type = ULINK_ATTACH_UPROBE_MULTI };
	uint64_t off = 0;
	int prog, fd;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", ret0, 2, &po);
	if (prog < 0)
		return false;
	fd = link_create(prog, 0, "/", &off, NULL, 1, false);
	close(prog);
	if (fd >= 0)
		close(fd);
	return fd == -EBADF;
}
