// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// From a target's /proc/PID/maps to attached uprobes: every executable ELF mapping is
// checked once against probes/ groups (by a symbol the library defines), and each probe
// of a matching group becomes one entry (and maybe one return) uprobe with its own cookie.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/ulink.h"
#include "common/log.h"
#include "target/cpython.h"
#include "target/elf_syms.h"
#include "target/procfs.h"
#include "target/versions.h"
#include "tree/clock.h"

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

/* Zeroes the per-CPU hit counters of one slot (2 * id entries, 2 * id + 1 returns). */
static void reset_hits(struct observer *o, __u32 slot)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *zero = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*zero)) : NULL;

	if (zero)
		bpf_map_update_elem(o->hits_fd, &slot, zero, BPF_ANY);
	free(zero);
}

static struct mapped_file *find_file(struct target *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].dev == dev && t->files[i].ino == ino)
			return &t->files[i];
	return NULL;
}

static struct probe_result *add_result(struct target *t)
{
	struct probe_result *v = realloc(t->probes, (t->nprobes + 1) * sizeof(*v));

	if (!v)
		return NULL;
	t->probes = v;
	memset(&v[t->nprobes], 0, sizeof(*v));
	return &v[t->nprobes++];
}

static bool cuda_action(enum probe_action a)
{
	return a >= ACT_CUDA_LAUNCH && a <= ACT_CUDA_DEVICE_COUNT;
}

/* Per-call CUDA counting: these probes are the ones --cuda-calls samples or turns off. */
static bool cuda_per_call(enum probe_action a)
{
	return a == ACT_CUDA_LAUNCH || a == ACT_CUDA_MEMCPY || a == ACT_CUDA_MALLOC ||
	       a == ACT_CUDA_FREE || a == ACT_CUDA_GRAPH_LAUNCH;
}

/* Gives r an id (the BPF cookie) and writes its spec; the uprobes come with link_one. */
static int reserve_one(struct observer *o, struct target *t, struct probe_result *r,
		       uint64_t aux)
{
	const struct probe_def *d = r->def;
	struct probe_spec spec = { .action = d->action, .aux = aux };
	uint32_t id = alloc_id(o);

	if (!id)
		return -ENOSPC;
	reset_hits(o, 2 * id);	/* the id may have served an earlier probe */
	reset_hits(o, 2 * id + 1);
	memcpy(spec.arg_src, d->arg_src, sizeof(spec.arg_src));
	memcpy(spec.arg_deref, d->arg_deref, sizeof(spec.arg_deref));
	if (d->ret)
		spec.flags |= PROBE_F_RETURN;
	if (d->nested)
		spec.flags |= PROBE_F_NESTED;
	if (d->ret_site)
		spec.flags |= PROBE_F_RET_SITE;
	/* held while a return address first seen is probed, in every mode: else that call's
	 * exit is lost and its span stays open (docs/probe-exits.md) */
	if (d->ret_site)
		spec.flags |= PROBE_F_STOP_ON_LOAD;
	if (d->meaning == MEAN_PY_CALL)
		spec.flags |= PROBE_F_PY_CALL;
	if (o->opts->cuda_detail && cuda_action(d->action))
		spec.flags |= PROBE_F_DETAIL;
	if (t->stop_on_load && d->action == ACT_DL_STATE)
		spec.flags |= PROBE_F_STOP_ON_LOAD;
	if (cuda_per_call(d->action) && o->opts->cuda_calls == CUDA_CALLS_SAMPLED)
		spec.flags |= PROBE_F_SAMPLED;
	r->progress = o->opts->cuda_calls == CUDA_CALLS_SAMPLED && !d->python_tier &&
		      !d->nested && (d->action == ACT_EMIT || d->action == ACT_CUDA_SYNC);
	if (r->progress)
		spec.flags |= PROBE_F_PROGRESS;
	{	/* a link (perf or uprobe_multi) would fire after an exec too, until it is gone */
		__u32 pid = (__u32)t->pid;

		spec.flags |= PROBE_F_IMAGE;
		bpf_map_lookup_elem(o->images_fd, &pid, &spec.image);
	}
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

static void unlink_one(struct probe_result *r);

/* Creates r's return and entry uprobes, in that order: an entry seen without its return
 * would leave a call open, a return without its entry is ignored. (Re-creating a perf uprobe
 * that was just removed waits ~35 ms for the old one to go; the second link is quick.) */
static int link_one(struct observer *o, struct target *t, struct probe_result *r)
{
	const struct mapped_file *f = &t->files[r->file];
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = o->kf.cookie ? r->id : 0,
				      .retprobe = true };
	atomic_uint *pending = &o->slots[r->id].reaping;
	uint64_t cookie = r->id;
	int err;

	if (o->kf.uprobe_multi) {
		err = r->def->ret ? ulink__multi(bpf_program__fd(o->prog_return), t->pid,
						 f->host_path, &r->file_offset, &cookie, &pending,
						 1, true, &r->ret) : 0;
		if (!err)
			err = ulink__multi(bpf_program__fd(o->prog_entry), t->pid, f->host_path,
					   &r->file_offset, &cookie, &pending, 1, false, &r->entry);
		if (err)
			unlink_one(r);
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
	uo.retprobe = false;
	r->entry = ulink__perf(bpf_program__attach_uprobe_opts(o->prog_entry, t->pid, f->host_path,
							       r->file_offset, &uo), pending);
	if (!r->entry) {
		err = -errno;
		unlink_one(r);
		return err;
	}
	return 0;
}

/* One uprobe_multi link of prog on the probes rs[0..n) of file fi whose return (ret) or
 * entry is asked for; the link is shared by them (ulink.h). */
static int link_multi(struct observer *o, struct target *t, size_t fi, struct probe_result **rs,
		      size_t n, bool ret)
{
	uint64_t *offs = calloc(n, sizeof(*offs)), *cookies = calloc(n, sizeof(*cookies));
	atomic_uint **pending = calloc(n, sizeof(*pending));
	struct ulink *l = NULL;
	size_t k = 0;
	int err = -ENOMEM;

	if (!offs || !cookies || !pending)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (rs[i]->file != fi || (ret && !rs[i]->def->ret))
			continue;
		offs[k] = rs[i]->file_offset;
		cookies[k] = rs[i]->id;
		pending[k++] = &o->slots[rs[i]->id].reaping;
	}
	err = ulink__multi(bpf_program__fd(ret ? o->prog_return : o->prog_entry), t->pid,
			   t->files[fi].host_path, offs, cookies, pending, k, ret, &l);
	for (size_t i = 0; !err && i < n; i++) {
		if (rs[i]->file != fi || (ret && !rs[i]->def->ret))
			continue;
		if (ret)
			rs[i]->ret = l;
		else
			rs[i]->entry = l;
	}
out:
	free(offs);
	free(cookies);
	free(pending);
	return err;
}

/* Links the probes rs[0..n) (reserved, not linked): with uprobe_multi, one link for the
 * returns and one for the entries per file, returns first (as link_one); else, or where a
 * batch fails, each on its own. errs[i]: 0 or -errno per probe. Returns probes linked. */
static int link_many(struct observer *o, struct target *t, struct probe_result **rs, size_t n,
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
		if (!link_multi(o, t, fi, rs, n, true) && !link_multi(o, t, fi, rs, n, false))
			continue;
		for (size_t j = i; j < n; j++)	/* one bad offset: the others link alone */
			if (rs[j]->file == fi)
				unlink_one(rs[j]);
	}
	for (size_t i = 0; i < n; i++) {
		errs[i] = rs[i]->entry ? 0 : link_one(o, t, rs[i]);
		linked += !errs[i];
	}
	return linked;
}

static void unlink_one(struct probe_result *r)
{
	ulink__put(r->entry);
	ulink__put(r->ret);
	r->entry = r->ret = NULL;
	for (unsigned int i = 0; i < r->nsites; i++) {
		bpf_link__destroy(r->site_links[i]);
		r->site_links[i] = NULL;
	}
}

/* The same, the closes left to the reaper (a uprobe_multi link closes at once, in parallel
 * with the others; perf links one at a time). */
static void unlink_one_async(struct observer *o, struct probe_result *r)
{
	atomic_uint *pending = &o->slots[r->id].reaping;

	ulink__put_async(r->entry);
	ulink__put_async(r->ret);
	r->entry = r->ret = NULL;
	for (unsigned int i = 0; i < r->nsites; i++) {	/* perf links: the reaper's queue */
		atomic_fetch_add(pending, 1);
		link_reaper__destroy_then(r->site_links[i], pending);
		r->site_links[i] = NULL;
	}
}

/* No cookies: the return sites' probe_addrs entries (their links are gone or going). */
static void release_sites(struct observer *o, struct target *t, struct probe_result *r)
{
	for (unsigned int i = 0; i < r->nsites; i++) {
		struct probe_addr_key key = { .tgid = (__u32)t->pid, .addr = r->site_addrs[i] };

		if (!o->kf.cookie)
			bpf_map_delete_elem(o->probe_addrs_fd, &key);
	}
	r->nsites = 0;
}

static void release_one(struct observer *o, struct probe_result *r)
{
	if (r->id) {
		release_sites(o, o->slots[r->id].target, r);
		if (r->addr)
			kernel_features__del_probe_addr(o, o->slots[r->id].target, r);
		o->slots[r->id].target = NULL;
	}
	r->id = 0;
}

/* Reserves r's id; links_now says whether its uprobes come with the group's link_many. */
static int attach_one(struct observer *o, struct target *t, struct probe_result *r,
		      uint64_t aux)
{
	int err;

	if (o->dry_run)
		return 0;
	err = reserve_one(o, t, r, aux);
	if (err)
		return err;
	/* --python-frames sampled: linked only while a step is sampled (py_sample.c) */
	r->sampled = r->def->python_tier && o->opts->python_frames == PYF_SAMPLED;
	/* --cuda-calls sampled: linked only in windows (py_sample.c) */
	r->cuda_sampled = cuda_per_call(r->def->action) &&
			  o->opts->cuda_calls == CUDA_CALLS_SAMPLED;
	if (r->cuda_sampled && !t->cuda_sample.any) {
		t->cuda_sample.any = true;
		t->cuda_sample.since_ns = t->cuda_sample.ended_ns = clock__mono_ns();
	}
	return 0;
}

/* Whether attach_one left r for the group's link_many: not linked in windows only. */
static bool links_now(const struct probe_result *r)
{
	return r->id && !r->sampled && !r->cuda_sampled && !r->entry;
}

/* CET builds start functions with endbr64, which the kernel single-steps (~20 us a hit on
 * these VMs); the next instruction (a push) is emulated (~5 us). Probe there instead: the
 * return address is still on top of the stack, so return probes work too. */
static uint64_t skip_endbr64(int fd, uint64_t off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char insn[4];

	if (fd >= 0 && pread(fd, insn, sizeof(insn), (off_t)off) == sizeof(insn) &&
	    !memcmp(insn, endbr64, sizeof(insn)))
		return off + 4;
	return off;
}

/* What the CPython tier found in one file: its version, whether a build-id entry took it. */
struct py_find {
	int version_err;	/* 1: not read yet */
	uint32_t hex;
	bool taken;		/* a py_call probe resolved in this file */
	bool wanted;		/* the group has py_call probes and --python-frames asks for them */
	const char *why;	/* the last reason a py_call probe did not resolve */
};

/* A CPython probe keyed by minor version ("python_version"): taken when the file holds that
 * version and no build-id entry took it; the offset is the symbol's where the symbol table
 * has slot_tp_call (pyenv, conda, python.org builds), else found in the slotdefs table. */
static int resolve_by_version(struct observer *o, struct target *t, const struct mapped_file *f,
			      const struct probe_def *d, const struct sym_query *q,
			      struct probe_result *r, struct py_find *pf)
{
	char v[32];

	if (pf->version_err == 1)
		pf->version_err = cpython__version(o->syms, t->pid, f, &pf->hex);
	if (pf->version_err) {
		pf->why = "cannot read the CPython version (no Py_Version, no version in the file name)";
		return -ENOENT;
	}
	if ((pf->hex & 0xffff0000) != d->py_version) {
		if (!pf->why) {
			versions__format_python(pf->hex, v, sizeof(v));
			snprintf(t->py_why, sizeof(t->py_why), "CPython %s: no layout for this "
				 "version in probes/cpython.json", v);
			pf->why = t->py_why;
		}
		return -ENOENT;
	}
	if (pf->taken)
		return -ENOENT;	/* a build-id entry (the fast path) has it */
	if ((pf->hex >> 16 & 0xff) >= 13 &&
	    cpython__check_debug_offsets(o->syms, t->pid, f, pf->hex) == -EINVAL) {
		pf->why = "_Py_DebugOffsets in _PyRuntime disagree with the version (not a "
			  "release build of a known layout)";
		return -ENOENT;
	}
	if (q->found) {
		r->symbol = strdup(q->found);
		r->file_offset = skip_endbr64(f->fd, q->file_offset);
		return 0;
	}
	if (cpython__find_slot_tp_call(t->pid, f, &r->file_offset)) {
		pf->why = "slot_tp_call is neither in the symbol table nor in the slotdefs table";
		return -ENOENT;
	}
	r->symbol = strdup("slot_tp_call (found in slotdefs)");
	r->file_offset = skip_endbr64(f->fd, r->file_offset);
	return 0;
}

/* f holds a CUDA runtime: driver calls made from its code are the runtime's, counted by
 * its own probes, so the driver probes leave them out (PROBE_F_DRIVER). */
static void add_runtime_text(struct observer *o, struct target *t, const struct mapped_file *f)
{
	struct code_ranges r = {};
	__u32 pid = (__u32)t->pid;

	bpf_map_lookup_elem(o->runtime_text_fd, &pid, &r);
	for (int i = 0; i < CIRRON_RUNTIME_RANGES; i++) {
		if (r.end[i] == f->map_end && r.start[i] == f->map_start)
			return;
		if (!r.end[i]) {
			r.start[i] = f->map_start;
			r.end[i] = f->map_end;
			bpf_map_update_elem(o->runtime_text_fd, &pid, &r, BPF_ANY);
			return;
		}
	}
	wlog("pid %d: more than %d CUDA runtimes mapped: driver calls of %s counted twice",
	     t->pid, CIRRON_RUNTIME_RANGES, f->path);
}

/* Links the probes from index first on that attach_one reserved (links_now); one that
 * does not link gets its error and gives its id back. */
static int link_group(struct observer *o, struct target *t, size_t first)
{
	size_t n = 0, cap = t->nprobes - first;
	struct probe_result **rs = calloc(cap + 1, sizeof(struct probe_result *));
	int *errs = calloc(cap + 1, sizeof(*errs));

	if (!rs || !errs) {
		free(rs);
		free(errs);
		return -ENOMEM;
	}
	for (size_t i = first; i < t->nprobes; i++)
		if (!t->probes[i].err && links_now(&t->probes[i]))
			rs[n++] = &t->probes[i];
	if (n)
		link_many(o, t, rs, n, errs);
	for (size_t i = 0; i < n; i++) {
		if (!errs[i])
			continue;
		rs[i]->err = errs[i];
		release_one(o, rs[i]);
	}
	free(rs);
	free(errs);
	return 0;
}

/* Resolves and attaches every probe of group g in file f. Returns probes attached. */
static int attach_group(struct observer *o, struct target *t, size_t fi,
			const struct probe_group *g)
{
	struct mapped_file *f = &t->files[fi];
	size_t n = g->n, i;
	struct sym_query *q = calloc(2 * n, sizeof(*q));
	int attached = 0, err, build_id_ok = 0;
	struct py_find pf = { .version_err = 1 };
	char build_id[128];
	bool cached, runtime_code = false, *tried = calloc(n, sizeof(*tried));
	size_t first = t->nprobes;

	if (!q || !tried) {
		free(q);
		free(tried);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		q[i].name = g->probes[i].symbol;
		q[n + i].name = g->probes[i].aux_symbol ? g->probes[i].aux_symbol : "@load";
	}
	err = sym_cache__resolve(o->syms, f->host_path, q, 2 * n, &cached);
	if (err < 0)
		goto out;
	dlog("pid %d: %s matches group %s (symbols %s)", t->pid, f->path, g->name,
	     cached ? "cached" : "read from ELF");
	for (i = 0; i < n; i++) {
		const struct probe_def *d = &g->probes[i];
		struct probe_result *r = add_result(t);
		uint64_t aux = 0;

		if (!r) {
			err = -ENOMEM;
			goto out;
		}
		f = &t->files[fi];
		r->group = g;
		r->def = d;
		r->file = fi;
		if (d->python_tier && o->opts->python_frames == PYF_OFF) {
			r->err = -ENOENT;	/* not asked for: reported like an absent probe */
			continue;
		}
		if (cuda_per_call(d->action) && o->opts->cuda_calls == CUDA_CALLS_OFF) {
			r->err = -ENOENT;
			r->not_asked = true;
			continue;
		}
		pf.wanted |= d->meaning == MEAN_PY_CALL;
		if (d->py_version) {
			r->err = resolve_by_version(o, t, f, d, &q[i], r, &pf);
			if (r->err)
				continue;
		} else if (d->build_id) {	/* a static function of one known build */
			if (!build_id_ok)
				build_id_ok = elf_syms__build_id(f->host_path, build_id,
								 sizeof(build_id)) ? -1 : 1;
			if (build_id_ok < 0 || strcmp(build_id, d->build_id) != 0) {
				r->err = -ENOENT;
				continue;
			}
			r->symbol = strdup(d->symbol);
			r->file_offset = d->file_offset;
		} else if (!q[i].found) {
			r->err = -ENOENT;
			continue;
		} else {
			r->symbol = strdup(q[i].found);
			r->file_offset = skip_endbr64(f->fd, q[i].file_offset);
		}
		if (d->aux_symbol) {
			if (!q[n + i].found) {
				r->err = -ENOENT;
				continue;
			}
			aux = f->bias + q[n + i].vaddr + d->aux_offset;
		}
		r->err = attach_one(o, t, r, aux);
		tried[i] = true;
		/* a later entry for the same function (by version) stands aside */
		pf.taken |= !r->err && d->meaning == MEAN_PY_CALL;
	}
	pf.taken = false;	/* judged again once linked */
	/* the group's probes linked together (one uprobe_multi link per kind), then judged */
	err = link_group(o, t, first);
	if (err)
		goto out;
	for (i = first; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];
		const struct probe_def *d = r->def;

		if (!tried[i - first])
			continue;
		if (r->err == -ESRCH) {	/* the target exited while we attached: it alone ends */
			err = -ESRCH;
			goto out;
		}
		if (r->err && !d->optional)
			wlog("pid %d: cannot attach %s in %s: %s", t->pid, d->symbol,
			     t->files[fi].path, strerror(-r->err));
		if (r->err && d->meaning == MEAN_PY_CALL)
			pf.why = "slot_tp_call found, but its uprobe could not be attached";
		pf.taken |= !r->err && d->meaning == MEAN_PY_CALL;
		attached += !r->err && r->id;
		runtime_code |= !r->err && r->id && cuda_per_call(d->action) && !d->driver;
	}
	/* Only when every way failed: python_frames=unavailable, the reason in health, one
	 * line on stderr. */
	if (pf.wanted && !pf.taken) {
		if (pf.why != t->py_why)
			snprintf(t->py_why, sizeof(t->py_why), "%s", pf.why ? pf.why :
				 "no entry in probes/cpython.json matches this CPython build");
		wlog("pid %d: Python frames unavailable in %s: %s", t->pid, f->path, t->py_why);
	} else if (pf.taken) {
		t->py_why[0] = 0;
	}
	if (runtime_code)
		add_runtime_text(o, t, f);
	err = attached;
out:
	for (i = 0; i < 2 * n; i++)
		free(q[i].found);
	free(q);
	free(tried);
	return err;
}

/* Adds newly mapped executable files; returns the index of the first new one. */
static int add_new_files(struct target *t, const struct proc_maps *maps, size_t *first_new)
{
	*first_new = t->nfiles;
	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->v[i];
		struct mapped_file *f = find_file(t, m->dev, m->ino), *v;

		if (f) {	/* extend the known address range, e.g. segments after text */
			if (m->start < f->map_start)
				f->map_start = m->start;
			if (m->end > f->map_end)
				f->map_end = m->end;
			continue;
		}
		if (!m->exec)
			continue;
		v = realloc(t->files, (t->nfiles + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->files = v;
		f = &v[t->nfiles];
		memset(f, 0, sizeof(*f));
		f->dev = m->dev;
		f->ino = m->ino;
		f->path = strdup(m->path);
		f->host_path = malloc(PATH_MAX);
		if (!f->path || !f->host_path) {
			free(f->path);
			free(f->host_path);
			return -ENOMEM;
		}
		if (procfs__host_path(t->pid, m, f->host_path, PATH_MAX))
			dlog("pid %d: cannot open %s from here", t->pid, m->path);
		f->fd = open(f->host_path, O_RDONLY | O_CLOEXEC);
		f->map_start = m->start;
		f->map_end = m->end;
		/* The lowest mapping of a file starts at its first PT_LOAD. */
		for (size_t j = 0; j < maps->n; j++)
			if (maps->v[j].dev == m->dev && maps->v[j].ino == m->ino &&
			    maps->v[j].start < f->map_start)
				f->map_start = maps->v[j].start;
		t->nfiles++;
	}
	return 0;
}

static bool hint_matches(const struct probe_group *g, const char *path)
{
	const char *base = strrchr(path, '/');

	return g->file_hint && strstr(base ? base + 1 : path, g->file_hint);
}

/* A group of probes/ that makes a session (torch, CUDA runtime, NCCL; not ld.so or CPython). */
static bool gives_session(const struct probe_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (probe_def__gives_session(&g->probes[i]))
			return true;
	return false;
}

/* Is the file named like a library of such a group? Then skipping it is worth a word. */
static bool named_like_session_lib(const struct observer *o, const char *path)
{
	for (size_t gi = 0; gi < o->probes.n; gi++)
		if (gives_session(&o->probes.groups[gi]) &&
		    hint_matches(&o->probes.groups[gi], path))
			return true;
	return false;
}

static int scan(struct observer *o, struct target *t)
{
	struct proc_maps maps;
	size_t first, fi, gi;
	int err, total = 0;

	err = procfs__read_maps(t->pid, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = add_new_files(t, &maps, &first);
	procfs__free_maps(&maps);
	if (err)
		return err;

	for (fi = first; fi < t->nfiles; fi++) {
		struct mapped_file *f = &t->files[fi];
		struct sym_query *q = calloc(o->probes.n + 1, sizeof(*q));
		bool cached;

		if (!q)
			return -ENOMEM;
		for (gi = 0; gi < o->probes.n; gi++)
			q[gi].name = o->probes.groups[gi].match_defines;
		q[o->probes.n].name = "@load";
		err = sym_cache__resolve(o->syms, f->host_path, q, o->probes.n + 1, &cached);
		if (err < 0) {
			/* a file the target maps but we cannot read as ELF (crafted, truncated,
			 * gone): this file is skipped, the rest of the target is not */
			if (named_like_session_lib(o, f->path) || log_verbosity >= 2)
				wlog("pid %d: skipped %s: %s", t->pid, f->path,
				     err == -ENOEXEC ? "not an ELF file it can read" : strerror(-err));
			if (!procfs__alive(t->pid)) {
				free(q);
				return -ESRCH;
			}
		} else if (q[o->probes.n].found) {
			f->bias = f->map_start - q[o->probes.n].vaddr;
		}
		for (gi = 0; err >= 0 && gi < o->probes.n; gi++) {
			const struct probe_group *g = &o->probes.groups[gi];
			int n;

			if (!q[gi].found) {
				if (hint_matches(g, f->path) && *g->file_hint && gives_session(g))
					ilog("pid %d: skipped %s: named like %s's library but defines "
					     "no %s", t->pid, f->path, g->name, g->match_defines);
				continue;
			}
			if (!hint_matches(g, f->path))
				dlog("pid %d: %s defines %s: group %s by symbol, not by name",
				     t->pid, f->path, g->match_defines, g->name);
			n = attach_group(o, t, fi, g);
			if (n < 0) {
				err = n;
				break;
			}
			total += n;
		}
		for (gi = 0; gi <= o->probes.n; gi++)
			free(q[gi].found);
		free(q);
		if (err == -ENOMEM || err == -ENOSPC || err == -ESRCH)
			return err;
	}
	if (!procfs__alive(t->pid))
		return -ESRCH;
	return total;
}

/* The links go to the reaper's threads: detaching a target never holds up the loader (see
 * link_reaper.h). Its ids stay reserved until their links are gone. */
int attach__scan(struct observer *o, struct target *t)
{
	int n;

	link_reaper__hold();	/* no close of old links delays these (link_reaper.h) */
	n = scan(o, t);
	link_reaper__release();
	return n;
}

/* probe_specs is an array: a delete would leave the spec in place, counting in the new
 * image too once the exec count is forgotten. A spec of no image matches no hit. */
static void forget_spec(struct observer *o, __u32 id)
{
	struct probe_spec none = { .flags = PROBE_F_IMAGE, .image = UINT32_MAX };

	bpf_map_update_elem(o->specs_fd, &id, &none, BPF_ANY);
}

/* A process that exited: its links go to the reaper's threads, so that detaching it never
 * holds up the loader (see link_reaper.h); its ids stay reserved until their links are
 * gone. A process still alive (it exec'd, or we detach from it): a uprobe follows the task,
 * not the image, so a link left behind would fire in the new image too (and count its CUDA
 * calls twice; a uprobe_multi link's hits between the exec and here are left out by
 * PROBE_F_IMAGE). Perf links go here and now; uprobe_multi links go to the reaper (closed in
 * parallel, a grace period for all) once BPF forgets their ids: a hit meanwhile finds a spec
 * of no image and does nothing. */
void attach__detach(struct observer *o, struct target *t)
{
	bool gone = procfs__alive(t->pid) <= 0;
	__u32 pid = (__u32)t->pid;

	bpf_map_delete_elem(o->cuda_windows_fd, &pid);
	bpf_map_delete_elem(o->runtime_text_fd, &pid);
	t->cuda_sample.on = false;
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (r->id && !gone && o->kf.uprobe_multi)
			forget_spec(o, r->id);
		if (r->id && (gone || o->kf.uprobe_multi))
			unlink_one_async(o, r);
		else
			unlink_one(r);
		release_one(o, r);
	}
	/* after the specs: the next image's probes start from no exec */
	bpf_map_delete_elem(o->images_fd, &pid);
	if (t->write_link)
		link_reaper__destroy(t->write_link);
	t->write_link = NULL;
}

/* A return address is the instruction after a call, so always an instruction boundary; the
 * BPF side pairs a hit there with its call by thread and stack pointer, so a hit that did not
 * come from returning (a jump to that instruction) is ignored. */
int attach__ret_site(struct observer *o, struct target *t, uint32_t id, uint64_t addr)
{
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = o->kf.cookie ? id : 0 };
	struct probe_addr_key key = { .tgid = (__u32)t->pid, .addr = addr };
	struct ret_site_key site = { .tgid = (__u32)t->pid, .addr = addr };
	struct probe_result *r;
	struct proc_maps maps;
	__u32 site_value;
	char path[PATH_MAX];
	int err = -ENOENT;

	if (id >= CIRRON_MAX_PROBES || o->slots[id].target != t)
		return -ENOENT;	/* detached since */
	r = &t->probes[o->slots[id].probe];
	for (unsigned int i = 0; i < r->nsites; i++)
		if (r->site_addrs[i] == addr)
			return 0;
	if (r->nsites == CIRRON_RET_SITES) {
		wlog("pid %d: %s returns to more than %d places: exits at the others are not seen",
		     t->pid, r->symbol, CIRRON_RET_SITES);
		return -ENOSPC;
	}
	if (procfs__read_maps(t->pid, &maps))
		return procfs__alive(t->pid) ? -ENOENT : -ESRCH;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];

		if (!m->exec || addr < m->start || addr >= m->end)
			continue;
		if (procfs__host_path(t->pid, m, path, sizeof(path)))
			break;
		if (!o->kf.cookie && bpf_map_update_elem(o->probe_addrs_fd, &key, &id, BPF_ANY)) {
			err = -errno;
			break;
		}
		r->site_links[r->nsites] = bpf_program__attach_uprobe_opts(
			o->prog_ret_site, t->pid, path, m->offset + (addr - m->start), &uo);
		if (!r->site_links[r->nsites]) {
			err = -errno;
			if (!o->kf.cookie)
				bpf_map_delete_elem(o->probe_addrs_fd, &key);
			break;
		}
		r->site_addrs[r->nsites++] = addr;
		site_value = id | RET_SITE_PROBED;	/* BPF records calls returning here now */
		bpf_map_update_elem(o->ret_sites_fd, &site, &site_value, BPF_ANY);
		dlog("pid %d: %s returns to %s+0x%llx: probed there", t->pid, r->symbol, m->path,
		     (unsigned long long)(m->offset + (addr - m->start)));
		err = 0;
		break;
	}
	procfs__free_maps(&maps);
	if (err)
		wlog("pid %d: cannot probe where %s returns (0x%llx): %s", t->pid, r->symbol,
		     (unsigned long long)addr, strerror(-err));
	return err;
}

int attach__write_uprobe(struct observer *o, struct target *t)
{
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .func_name = "write" };
	struct bpf_link *l;

	for (size_t i = 0; i < t->nfiles; i++) {
		const char *base = strrchr(t->files[i].path, '/');

		base = base ? base + 1 : t->files[i].path;
		if (strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libc-", 5) != 0)
			continue;
		l = bpf_program__attach_uprobe_opts(o->prog_write, t->pid, t->files[i].host_path,
						    0, &uo);
		if (!l)
			return -errno;
		t->write_link = l;
		return 0;
	}
	return -ENOENT;
}

/* Links rs[0..n) for a sample or window (why); the first that fails is said, and undoes
 * nothing of the others. Returns 0 or that -errno; *linked: probes linked. */
static int link_sampled(struct observer *o, struct target *t, struct probe_result **rs,
			size_t n, const char *why, int *linked)
{
	int *errs = calloc(n + 1, sizeof(*errs)), err = 0;

	if (!errs)
		return -ENOMEM;
	*linked += n ? link_many(o, t, rs, n, errs) : 0;
	for (size_t i = 0; i < n && !err; i++) {
		err = errs[i];
		if (err)
			wlog("pid %d: cannot attach %s for %s: %s", t->pid, rs[i]->symbol, why,
			     strerror(-err));
	}
	free(errs);
	return err;
}

int attach__python_sample(struct observer *o, struct target *t, bool on)
{
	struct probe_result **rs = calloc(t->nprobes + 1, sizeof(struct probe_result *));
	int linked = 0, err = 0;
	size_t n = 0;

	if (!rs)
		return -ENOMEM;
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->sampled || !r->id || !r->entry == !on)
			continue;
		if (!on) {	/* both at once: neither outlives the other by a grace period */
			unlink_one_async(o, r);
			continue;
		}
		rs[n++] = r;
	}
	link_reaper__hold();
	err = link_sampled(o, t, rs, n, "a sampled step", &linked);
	link_reaper__release();
	free(rs);
	return err ? err : linked;
}

/* Entry hits of probe id so far. */
static uint64_t entry_hits(struct observer *o, uint32_t id)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
	__u32 key = 2 * id;
	uint64_t sum = 0;

	if (v && !bpf_map_lookup_elem(o->hits_fd, &key, v))
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	free(v);
	return sum;
}

int attach__cuda_sample(struct observer *o, struct target *t, bool on)
{
	struct cuda_window w = { .state = on ? CW_ARMED : CW_CLOSED };
	struct probe_result **rs = calloc(t->nprobes + 1, sizeof(struct probe_result *));
	__u32 pid = (__u32)t->pid;
	int linked = 0, err = 0;
	size_t n = 0;

	if (!rs)
		return -ENOMEM;
	/* Counting starts after every probe is in and stops before any goes. */
	if (!on)
		bpf_map_update_elem(o->cuda_windows_fd, &pid, &w, BPF_ANY);
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->cuda_sampled || !r->id || !r->entry == !on)
			continue;
		if (!on && !o->kf.uprobe_multi && !entry_hits(o, r->id)) {
			linked++;	/* never called: costs nothing linked, stays (the gate is
					 * closed); removing and re-adding a perf link takes the
					 * loader ~75 ms each (a uprobe_multi link goes whole) */
			continue;
		}
		if (!on) {
			unlink_one_async(o, r);
			continue;
		}
		rs[n++] = r;
	}
	if (on)
		err = link_sampled(o, t, rs, n, "a CUDA window", &linked);
	free(rs);
	if (on && linked && bpf_map_update_elem(o->cuda_windows_fd, &pid, &w, BPF_ANY))
		err = -errno;
	return err ? err : linked;
}

int attach__ldso_watch(struct observer *o, int pid, const struct proc_map *m)
{
	struct watch *w = &o->watch;
	const struct probe_def *d = w->ldso;
	struct sym_query q[2] = { { .name = d->symbol }, { .name = d->aux_symbol } };
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo) };
	struct probe_spec spec = { .action = ACT_DL_WATCH };
	char path[PATH_MAX];
	struct watch_ldso *l;
	uint64_t off, cookie;
	struct stat st;
	bool cached;
	int fd, err;

	if (procfs__host_path(pid, m, path, sizeof(path)) || stat(path, &st))
		return -ENOENT;
	for (size_t i = 0; i < w->nldsos; i++)
		if (w->ldsos[i].dev == st.st_dev && w->ldsos[i].ino == st.st_ino)
			return 1;
	if (w->nldsos == CIRRON_WATCH_LDSO)
		return -ENOSPC;
	err = sym_cache__resolve(o->syms, path, q, 2, &cached);
	if (err < 2) {
		err = err < 0 ? err : -ENOENT;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	off = skip_endbr64(fd, q[0].file_offset);
	if (fd >= 0)
		close(fd);
	/* r_debug.r_state relative to the probe: the same in every process, whatever the
	 * load address (the BPF program adds it to the address it was hit at) */
	spec.aux = q[1].vaddr + d->aux_offset - (q[0].vaddr + (off - q[0].file_offset));
	uo.bpf_cookie = CIRRON_WATCH_FIRST_ID + (uint32_t)w->nldsos;
	if (bpf_map_update_elem(o->specs_fd, &uo.bpf_cookie, &spec, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	if (!o->kf.cookie)	/* a program of its own, which needs no cookie */
		uo.bpf_cookie = 0;
	l = &w->ldsos[w->nldsos];
	link_reaper__hold();
	if (o->kf.uprobe_multi) {	/* pid 0: every process */
		cookie = uo.bpf_cookie;
		err = ulink__multi(bpf_program__fd(o->prog_entry), 0, path, &off, &cookie, NULL, 1,
				   false, &l->link);
	} else {
		l->link = ulink__perf(bpf_program__attach_uprobe_opts(o->kf.cookie ? o->prog_entry :
								      o->prog_dl_watch, -1, path,
								      off, &uo), NULL);
		err = l->link ? 0 : -errno;
	}
	link_reaper__release();
	if (err)
		goto out;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	w->nldsos++;
	ilog("watching the processes that %s serves (from pid %d)", m->path, pid);
	err = 0;
out:
	free(q[0].found);
	free(q[1].found);
	return err;
}

void attach__ldso_unwatch(struct observer *o)
{
	for (size_t i = 0; i < o->watch.nldsos; i++)
		ulink__put(o->watch.ldsos[i].link);
	o->watch.nldsos = 0;
}
