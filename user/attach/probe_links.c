// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A probe's id, spec and uprobe links: the id (the BPF cookie) and its probe_spec, then its entry
// and return uprobes as perf links (any kernel) or uprobe_multi links (Linux 6.6+, one per file
// and kind), and their release (at once, or on the reaper's threads).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/bpf_maps.h"
#include "attach/kernel_features.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/probe_links.h"
#include "attach/ulink.h"

/* Ids 1 .. CIRRON_WATCH_FIRST_ID - 1; the ones above are watch's ld.so probes. An id whose
 * old links are still being destroyed is not given out again. */
static uint32_t alloc_id(struct observer *o)
{
	for (uint32_t n = 0; n < CIRRON_WATCH_FIRST_ID - 1; n++) {
		uint32_t id = 1 + (o->next_free_id + n) % (CIRRON_WATCH_FIRST_ID - 1);

		if (!o->slots[id].target && !atomic_load(&o->slots[id].reaping)) {
			o->next_free_id = id;
			return id;
		}
	}
	return 0;
}

static bool cuda_action(enum probe_action a)
{
	return a >= ACT_CUDA_LAUNCH && a <= ACT_CUDA_DEVICE_COUNT;
}

/* Per-call CUDA counting: these probes are the ones --cuda-calls off leaves out. */
bool probe_links__cuda_per_call(enum probe_action a)
{
	return a == ACT_CUDA_LAUNCH || a == ACT_CUDA_MEMCPY || a == ACT_CUDA_MALLOC ||
	       a == ACT_CUDA_FREE || a == ACT_CUDA_GRAPH_LAUNCH;
}

/* The object layout BPF walks to read a module's `training` at calls of a class not judged
 * yet (bpf/python.bpf.h); offsets of a few dozen bytes. */
static struct py_obj_layout py_obj_layout(const struct py_layout *l)
{
	return (struct py_obj_layout){
		.managed_dict = (__s16)l->managed_dict, .ma_keys = (__s16)l->ma_keys,
		.ma_values = (__s16)l->ma_values, .values_header = (__s16)l->values_header,
		.dk_log2_index_bytes = (__s16)l->dk_log2_index_bytes,
		.dk_indices = (__s16)l->dk_indices, .ascii_data = (__s16)l->ascii_data,
	};
}

/* Gives r an id (the BPF cookie) and writes its spec; the uprobes come with probe_links__link_many. */
int probe_links__reserve(struct observer *o, struct target *t, struct probe_result *r,
		       uint64_t aux)
{
	const struct probe_def *d = r->def;
	struct probe_spec spec = { .action = d->action, .aux = aux };
	uint32_t id = alloc_id(o);

	if (!id)
		return -ENOSPC;
	bpf_maps__percpu_zero(o->hits_fd, 2 * id);	/* the id may have served an earlier probe */
	bpf_maps__percpu_zero(o->hits_fd, 2 * id + 1);
	if (r->arch < 0 || r->arch >= PROBE_ARCH__COUNT)
		return -ENOEXEC;
	memcpy(spec.arg_src, d->arg_src[r->arch], sizeof(spec.arg_src));
	memcpy(spec.arg_deref, d->arg_deref[r->arch], sizeof(spec.arg_deref));
	if (d->ret)
		spec.flags |= PROBE_F_RETURN;
	if (d->nested)
		spec.flags |= PROBE_F_NESTED;
	if (d->exits)
		spec.flags |= PROBE_F_EXITS;
	if (d->meaning == MEAN_PY_CALL) {
		spec.flags |= PROBE_F_PY_CALL;
		if (d->py_layout.known)
			spec.py = py_obj_layout(&d->py_layout);
	}
	if (o->opts->cuda_detail && cuda_action(d->action))
		spec.flags |= PROBE_F_DETAIL;
	if (t->stop_on_load && d->action == ACT_DL_STATE)
		spec.flags |= PROBE_F_STOP_ON_LOAD;
	if (d->nccl)
		spec.flags |= PROBE_F_NCCL;
	if (d->action == ACT_CUDA_KERNEL_NAME)
		spec.aux = d->kernel_name;
	{	/* a link (perf or uprobe_multi) would fire after an exec too, until it is gone */
		__u32 pid = (__u32)t->pid;

		spec.flags |= PROBE_F_IMAGE;
		bpf_map_lookup_elem(o->images_fd, &pid, &spec.image);
	}
	/* driver calls the runtime made: BPF decides by the process's launch layer */
	if (d->driver) {
		spec.flags |= PROBE_F_DRIVER;
		if (d->action == ACT_CUDA_MEMCPY)
			spec.aux = d->memcpy_kind;
	}
	if (bpf_map_update_elem(o->specs_fd, &id, &spec, BPF_ANY))
		return -errno;
	r->id = id;
	o->slots[id].target = t;
	o->slots[id].probe = (size_t)(r - t->probes);
	return 0;
}

/* r's exit uprobes (PROBE_F_EXITS), one perf link each. */
static int link_exits(struct observer *o, struct target *t, struct probe_result *r)
{
	const struct mapped_file *f = &t->files[r->file];
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = o->kf.cookie ? r->id : 0 };
	atomic_uint *pending = &o->slots[r->id].reaping;
	int err;

	for (unsigned int i = 0; i < r->nexits; i++) {
		if (r->exit_links[i])
			continue;
		if (!o->kf.cookie) {	/* BPF tells probes apart by address */
			err = kernel_features__add_exit_addr(o, t, r, i);
			if (err)
				return err;
		}
		r->exit_links[i] = ulink__perf(bpf_program__attach_uprobe_opts(
			o->prog_exit, t->pid, f->host_path, r->exit_offsets[i], &uo), pending);
		if (!r->exit_links[i])
			return -errno;
	}
	return 0;
}

/* Creates r's return or exit uprobes, then its entry: an entry seen without its exit would
 * leave a call open, an exit without its entry is ignored. (Re-creating a perf uprobe that
 * was just removed waits ~35 ms for the old one to go; the second link is quick.) */
static int link_one(struct observer *o, struct target *t, struct probe_result *r)
{
	const struct mapped_file *f = &t->files[r->file];
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = o->kf.cookie ? r->id : 0,
				      .retprobe = true };
	atomic_uint *pending = &o->slots[r->id].reaping;
	uint64_t cookie = r->id;
	int err;

	if (o->kf.uprobe_multi && r->ref_ctr_offset)	/* the CUPTI companion's gate */
		return ulink__multi_semaphore(bpf_program__fd(o->prog_entry), t->pid, f->host_path,
					      r->file_offset, cookie, r->ref_ctr_offset, pending,
					      &r->entry);
	if (o->kf.uprobe_multi) {
		err = r->def->ret ? ulink__multi(bpf_program__fd(o->prog_return), t->pid,
						 f->host_path, &r->file_offset, &cookie, &pending,
						 1, true, &r->ret) : 0;
		for (unsigned int i = 0; !err && i < r->nexits; i++)
			err = r->exit_links[i] ? 0 :
			      ulink__multi(bpf_program__fd(o->prog_exit), t->pid, f->host_path,
					   &r->exit_offsets[i], &cookie, &pending, 1, false,
					   &r->exit_links[i]);
		if (!err)
			err = ulink__multi(bpf_program__fd(o->prog_entry), t->pid, f->host_path,
					   &r->file_offset, &cookie, &pending, 1, false, &r->entry);
		if (err)
			probe_links__unlink(r);
		return err;
	}
	if (!o->kf.cookie && !r->addr) {	/* BPF tells probes apart by address */
		err = kernel_features__add_probe_addr(o, t, r);
		if (err)
			return err;
	}
	if (r->def->ret) {
		r->ret = ulink__perf(bpf_program__attach_uprobe_opts(o->prog_return, t->pid,
								     f->host_path, r->file_offset,
								     &uo), pending);
		if (!r->ret)
			return -errno;
	}
	err = link_exits(o, t, r);
	if (err) {
		probe_links__unlink(r);
		return err;
	}
	uo.retprobe = false;
	uo.ref_ctr_offset = r->ref_ctr_offset;
	r->entry = ulink__perf(bpf_program__attach_uprobe_opts(o->prog_entry, t->pid, f->host_path,
							       r->file_offset, &uo), pending);
	if (!r->entry) {
		err = -errno;
		probe_links__unlink(r);
		return err;
	}
	return 0;
}

enum link_kind { LINK_RETURNS, LINK_EXITS, LINK_ENTRIES };

/* One uprobe_multi link on the probes rs[0..n) of file fi: their return probes, their exit
 * instructions or their entries; the link is shared by them, one reference per offset
 * (ulink.h). */
static int link_multi(struct observer *o, struct target *t, size_t fi, struct probe_result **rs,
		      size_t n, enum link_kind kind)
{
	struct bpf_program *prog = kind == LINK_RETURNS ? o->prog_return :
				   kind == LINK_EXITS ? o->prog_exit : o->prog_entry;
	size_t cap = kind == LINK_EXITS ? n * FUNC_EXITS_MAX : n, k = 0;
	uint64_t *offs = calloc(cap + 1, sizeof(*offs)), *cookies = calloc(cap + 1, sizeof(*cookies));
	atomic_uint **pending = calloc(cap + 1, sizeof(*pending));
	struct ulink *l = NULL;
	int err = -ENOMEM;

	if (!offs || !cookies || !pending)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct probe_result *r = rs[i];
		unsigned int m = kind == LINK_EXITS ? r->nexits :
				 kind == LINK_RETURNS ? r->def->ret : 1;

		for (unsigned int j = 0; r->file == fi && !r->ref_ctr_offset && j < m; j++) {
			offs[k] = kind == LINK_EXITS ? r->exit_offsets[j] : r->file_offset;
			cookies[k] = r->id;
			pending[k++] = &o->slots[r->id].reaping;
		}
	}
	err = ulink__multi(bpf_program__fd(prog), t->pid, t->files[fi].host_path, offs, cookies,
			   pending, k, kind == LINK_RETURNS, &l);
	for (size_t i = 0; !err && i < n; i++) {
		struct probe_result *r = rs[i];

		if (r->file != fi)
			continue;
		if (r->ref_ctr_offset)	/* a perf link of its own (link_one) */
			continue;
		if (kind == LINK_RETURNS && r->def->ret)
			r->ret = l;
		else if (kind == LINK_ENTRIES)
			r->entry = l;
		for (unsigned int j = 0; kind == LINK_EXITS && j < r->nexits; j++)
			r->exit_links[j] = l;
	}
out:
	free(offs);
	free(cookies);
	free(pending);
	return err;
}

/* Links the probes rs[0..n) (reserved, not linked): with uprobe_multi, one link for the
 * returns, one for the exits and one for the entries per file, in that order (as link_one);
 * else, or where a batch fails, each on its own. errs[i]: 0 or -errno per probe. Returns
 * probes linked. */
int probe_links__link_many(struct observer *o, struct target *t, struct probe_result **rs, size_t n,
		     int *errs)
{
	int linked = 0;

	for (size_t i = 0; o->kf.uprobe_multi && i < n; i++) {
		size_t fi = rs[i]->file;
		bool first = true;

		for (size_t j = 0; j < i && first; j++)
			first = rs[j]->file != fi;
		if (!first)
			continue;
		if (!link_multi(o, t, fi, rs, n, LINK_RETURNS) &&
		    !link_multi(o, t, fi, rs, n, LINK_EXITS) &&
		    !link_multi(o, t, fi, rs, n, LINK_ENTRIES))
			continue;
		for (size_t j = i; j < n; j++)	/* one bad offset: the others link alone */
			if (rs[j]->file == fi)
				probe_links__unlink(rs[j]);
	}
	for (size_t i = 0; i < n; i++) {
		errs[i] = rs[i]->entry ? 0 : link_one(o, t, rs[i]);
		linked += !errs[i];
	}
	return linked;
}

void probe_links__unlink(struct probe_result *r)
{
	ulink__put(r->entry);
	ulink__put(r->ret);
	r->entry = r->ret = NULL;
	for (unsigned int i = 0; i < r->nexits; i++) {
		ulink__put(r->exit_links[i]);
		r->exit_links[i] = NULL;
	}
}

/* The same, the closes left to the reaper (a uprobe_multi link closes at once, in parallel
 * with the others; perf links one at a time). */
void probe_links__unlink_async(struct observer *o, struct probe_result *r)
{
	ulink__put_async(r->entry);
	ulink__put_async(r->ret);
	r->entry = r->ret = NULL;
	for (unsigned int i = 0; i < r->nexits; i++) {
		ulink__put_async(r->exit_links[i]);
		r->exit_links[i] = NULL;
	}
}

void probe_links__release(struct observer *o, struct probe_result *r)
{
	if (r->id) {
		for (unsigned int i = 0; !o->kf.cookie && i < r->nexits; i++)
			kernel_features__del_exit_addr(o, o->slots[r->id].target, r, i);
		if (r->addr)
			kernel_features__del_probe_addr(o, o->slots[r->id].target, r);
		o->slots[r->id].target = NULL;
	}
	r->id = 0;
}

/* Entry hits of probe id so far. */
uint64_t probe_links__entry_hits(struct observer *o, uint32_t id)
{
	return bpf_maps__percpu_sum(o->hits_fd, 2 * id);
}
