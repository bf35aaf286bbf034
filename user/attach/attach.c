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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "common/log.h"
#include "target/elf_syms.h"
#include "target/procfs.h"
#include "tree/clock.h"

/* Ids 1 .. CIRRON_WATCH_FIRST_ID - 1; the ones above are watch's ld.so probes. */
static uint32_t alloc_id(struct observer *o)
{
	for (uint32_t n = 0; n < CIRRON_WATCH_FIRST_ID - 1; n++) {
		uint32_t id = 1 + (o->next_free_id + n) % (CIRRON_WATCH_FIRST_ID - 1);

		if (!o->slots[id].target) {
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

/* Creates r's return and entry uprobes, in that order: an entry seen without its return
 * would leave a call open, a return without its entry is ignored. (Re-creating a uprobe
 * that was just removed waits ~35 ms for the old one to go; the second link is quick.) */
static int link_one(struct observer *o, struct target *t, struct probe_result *r)
{
	const struct mapped_file *f = &t->files[r->file];
	struct bpf_uprobe_opts uo = { .sz = sizeof(uo), .bpf_cookie = r->id, .retprobe = true };
	int err;

	if (r->def->ret) {
		r->ret = bpf_program__attach_uprobe_opts(o->prog_return, t->pid, f->host_path,
							 r->file_offset, &uo);
		if (!r->ret)
			return -errno;
	}
	uo.retprobe = false;
	r->entry = bpf_program__attach_uprobe_opts(o->prog_entry, t->pid, f->host_path,
						   r->file_offset, &uo);
	if (!r->entry) {
		err = -errno;
		bpf_link__destroy(r->ret);
		r->ret = NULL;
		return err;
	}
	return 0;
}

static void unlink_one(struct probe_result *r)
{
	bpf_link__destroy(r->entry);
	bpf_link__destroy(r->ret);
	r->entry = r->ret = NULL;
}

static void release_one(struct observer *o, struct probe_result *r)
{
	if (r->id)
		o->slots[r->id].target = NULL;
	r->id = 0;
}

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
	err = r->sampled || r->cuda_sampled ? 0 : link_one(o, t, r);
	if (err)
		release_one(o, r);
	return err;
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

/* Resolves and attaches every probe of group g in file f. Returns probes attached. */
static int attach_group(struct observer *o, struct target *t, size_t fi,
			const struct probe_group *g)
{
	struct mapped_file *f = &t->files[fi];
	size_t n = g->n, i;
	struct sym_query *q = calloc(2 * n, sizeof(*q));
	int attached = 0, err, build_id_ok = 0;
	char build_id[128];
	bool cached, runtime_code = false;

	if (!q)
		return -ENOMEM;
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
		if (d->build_id) {	/* a static function of one known build */
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
		if (r->err && !d->optional)
			wlog("pid %d: cannot attach %s in %s: %s", t->pid, d->symbol, f->path,
			     strerror(-r->err));
		attached += !r->err && r->id;
		runtime_code |= !r->err && r->id && cuda_per_call(d->action) && !d->driver;
	}
	if (runtime_code)
		add_runtime_text(o, t, f);
	err = attached;
out:
	for (i = 0; i < 2 * n; i++)
		free(q[i].found);
	free(q);
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

int attach__scan(struct observer *o, struct target *t)
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
			dlog("pid %d: skip %s: %s", t->pid, f->path, strerror(-err));
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

			if (!q[gi].found)
				continue;
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
		if (err == -ENOMEM || err == -ENOSPC)
			return err;
	}
	if (!procfs__alive(t->pid))
		return -ESRCH;
	return total;
}

void attach__detach(struct observer *o, struct target *t)
{
	__u32 pid = (__u32)t->pid;

	bpf_map_delete_elem(o->cuda_windows_fd, &pid);
	bpf_map_delete_elem(o->runtime_text_fd, &pid);
	t->cuda_sample.on = false;
	for (size_t i = 0; i < t->nprobes; i++) {
		unlink_one(&t->probes[i]);
		release_one(o, &t->probes[i]);
	}
}

int attach__python_sample(struct observer *o, struct target *t, bool on)
{
	int linked = 0, err = 0;

	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->sampled || !r->id || !r->entry == !on)
			continue;
		if (!on) {	/* both at once: neither outlives the other by a grace period */
			link_reaper__destroy(r->entry);
			link_reaper__destroy(r->ret);
			r->entry = r->ret = NULL;
			continue;
		}
		err = link_one(o, t, r);
		if (err) {
			wlog("pid %d: cannot attach %s for a sampled step: %s", t->pid, r->symbol,
			     strerror(-err));
			break;
		}
		linked++;
	}
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
	__u32 pid = (__u32)t->pid;
	int linked = 0, err = 0;

	/* Counting starts after every probe is in and stops before any goes. */
	if (!on)
		bpf_map_update_elem(o->cuda_windows_fd, &pid, &w, BPF_ANY);
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->cuda_sampled || !r->id || !r->entry == !on)
			continue;
		if (!on && !entry_hits(o, r->id)) {
			linked++;	/* never called: costs nothing linked, stays (the gate is
					 * closed); removing and re-adding links takes the loader
					 * ~75 ms each */
			continue;
		}
		if (!on) {
			link_reaper__destroy(r->entry);
			link_reaper__destroy(r->ret);
			r->entry = r->ret = NULL;
			continue;
		}
		err = link_one(o, t, r);
		if (err) {
			wlog("pid %d: cannot attach %s for a CUDA window: %s", t->pid, r->symbol,
			     strerror(-err));
			break;
		}
		linked++;
	}
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
	uint64_t off;
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
	l = &w->ldsos[w->nldsos];
	l->link = bpf_program__attach_uprobe_opts(o->prog_entry, -1, path, off, &uo);
	if (!l->link) {
		err = -errno;
		goto out;
	}
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
		bpf_link__destroy(o->watch.ldsos[i].link);
	o->watch.nldsos = 0;
}
