// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// From a library that matches a probes/ group to reserved and linked probes: each probe's
// symbol (or, for static functions of known builds, its build-id-keyed offset; for CPython's
// slot_tp_call, the entry for the file's minor version), past a leading endbr64.
#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "attach/observer.h"
#include "attach/launch_layer.h"
#include "attach/probe_links.h"
#include "attach/resolve.h"
#include "common/log.h"
#include "proc/elf_syms.h"
#include "pyobj/cpython.h"
#include "traced/tensor_dims.h"
#include "traced/versions.h"
#include "tree/clock.h"

static struct probe_result *add_result(struct target *t)
{
	struct probe_result *v = realloc(t->probes, (t->nprobes + 1) * sizeof(*v));

	if (!v)
		return NULL;
	t->probes = v;
	memset(&v[t->nprobes], 0, sizeof(*v));
	return &v[t->nprobes++];
}

/* Reserves r's id; links_now says whether its uprobes come with the group's probe_links__link_many. */
static int attach_one(struct observer *o, struct target *t, struct probe_result *r,
		      uint64_t aux)
{
	int err;

	if (o->dry_run)
		return 0;
	err = probe_links__reserve(o, t, r, aux);
	if (err)
		return err;
	/* --python-frames sampled: linked only while a step is sampled (py_sample.c) */
	r->sampled = r->def->python_tier && o->opts->python_frames == PYF_SAMPLED;
	return 0;
}

/* Whether attach_one left r for the group's probe_links__link_many: not linked in windows only. */
static bool links_now(const struct probe_result *r)
{
	return r->id && !r->sampled && !r->entry;
}

/* CET builds start functions with endbr64, which the kernel single-steps (~20 us a hit on
 * these VMs); the next instruction (a push) is emulated (~5 us). Probe there instead: the
 * return address is still on top of the stack, so return probes work too. x86-64 files only:
 * those bytes are another instruction in aarch64 code, and aarch64's first instructions stay
 * probed (past a paciasp, x30 would hold the signed return address). */
uint64_t resolve__skip_endbr64(int fd, uint64_t off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char insn[4], ehdr[EI_NIDENT + 4];

	if (fd < 0 || pread(fd, ehdr, sizeof(ehdr), 0) != sizeof(ehdr) ||
	    ehdr[EI_DATA] != ELFDATA2LSB || (ehdr[18] | ehdr[19] << 8) != EM_X86_64)
		return off;	/* e_machine follows e_ident and e_type */
	if (pread(fd, insn, sizeof(insn), (off_t)off) == sizeof(insn) &&
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
			snprintf(t->py.why, sizeof(t->py.why), "CPython %s: no layout for this "
				 "version in probes/cpython.json", v);
			pf->why = t->py.why;
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
		r->file_offset = resolve__skip_endbr64(f->fd, q->file_offset);
		return 0;
	}
	if (cpython__find_slot_tp_call(t->pid, f, &r->file_offset)) {
		pf->why = "slot_tp_call is neither in the symbol table nor in the slotdefs table";
		return -ENOENT;
	}
	r->symbol = strdup("slot_tp_call (found in slotdefs)");
	r->file_offset = resolve__skip_endbr64(f->fd, r->file_offset);
	return 0;
}

/* "return": "exits": where the function leaves (proc/func_exits.h), cached with its
 * symbols. A function whose exits cannot be found is not probed at all: an entry with no exit
 * would leave every span it opens open. */
static int find_exits(struct observer *o, struct target *t, const struct mapped_file *f,
		      uint64_t vaddr, struct probe_result *r)
{
	struct func_exits fe;
	char why[256];

	r->err = sym_cache__exits(o->syms, f->host_path, vaddr, &fe, why, sizeof(why));
	if (r->err) {
		char msg[320];

		snprintf(msg, sizeof(msg), "its exits were not found: %s", why);
		r->why = strdup(msg);
		wlog("pid %d: %s in %s: %s", t->pid, r->symbol, f->path, msg);
		return r->err;
	}
	memcpy(r->exit_offsets, fe.offsets, fe.n * sizeof(fe.offsets[0]));
	r->nexits = (unsigned int)fe.n;
	dlog("pid %d: %s leaves by %zu exits (%zu split-off parts, %zu without unwind info)",
	     t->pid, r->symbol, fe.n, fe.parts, fe.no_cfi);
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

/* The architecture of f's code (its ELF e_machine, not this machine's), whose "args" and
 * entries apply. A file of another architecture than this observer's (an emulated process)
 * gets no uprobe: its breakpoint would be this architecture's instruction in that code.
 * Then why says so (logged once per group), else it is "". */
static int file_arch(struct target *t, const struct mapped_file *f, const struct probe_group *g,
		     char *why, size_t size)
{
	int machine = elf_syms__machine(f->host_path);
	int arch = machine < 0 ? -1 : probe_arch__of_machine((unsigned int)machine);

	*why = 0;
	if (arch >= 0 && arch == probe_arch__own())
		return arch;
	if (machine < 0)
		snprintf(why, size, "cannot read its ELF header: %s", strerror(-machine));
	else
		snprintf(why, size, "its code is %s (ELF machine %d), this observer's %s",
			 arch >= 0 ? probe_arch__name(arch) : "another architecture's", machine,
			 probe_arch__name(probe_arch__own()));
	wlog("pid %d: %s (group %s) not probed: %s", t->pid, f->path, g->name, why);
	return arch;
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
		probe_links__link_many(o, t, rs, n, errs);
	for (size_t i = 0; i < n; i++) {
		if (!errs[i])
			continue;
		rs[i]->err = errs[i];
		probe_links__release(o, rs[i]);
	}
	free(rs);
	free(errs);
	return 0;
}

/* Resolves and attaches every probe of group g in file f. Returns probes attached. */
int resolve__group(struct observer *o, struct target *t, size_t fi,
			const struct probe_group *g)
{
	struct mapped_file *f = &t->files[fi];
	size_t n = g->n, i;
	struct sym_query *q = calloc(2 * n, sizeof(*q));
	int attached = 0, err, build_id_ok = 0, arch;
	char foreign[160];
	struct py_find pf = { .version_err = 1 };
	char build_id[128];
	bool cached, runtime_code = false, *tried = calloc(n, sizeof(*tried));
	size_t first = t->nprobes;

	if (!q || !tried) {
		free(q);
		free(tried);
		return -ENOMEM;
	}
	launch_layer__before_group(o, t);
	for (i = 0; i < n; i++) {
		q[i].name = g->probes[i].symbol;
		q[n + i].name = g->probes[i].aux_symbol ? g->probes[i].aux_symbol : "@load";
	}
	err = sym_cache__resolve(o->syms, f->host_path, q, 2 * n, &cached);
	if (err < 0)
		goto out;
	arch = file_arch(t, f, g, foreign, sizeof(foreign));
	dlog("pid %d: %s matches group %s (symbols %s, %s)", t->pid, f->path, g->name,
	     cached ? "cached" : "read from ELF", probe_arch__name(arch));
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
		r->arch = arch;
		if (*foreign) {		/* not this observer's architecture: nothing in it */
			r->err = -ENOEXEC;
			r->why = strdup(foreign);
			continue;
		}
		if (!probe_def__applies(d, arch)) {	/* another architecture's entry */
			char why[96];

			snprintf(why, sizeof(why), "not for %s files (\"arch\" in probes/%s.json)",
				 probe_arch__name(arch), g->name);
			r->err = -ENOENT;
			r->why = strdup(why);
			continue;
		}
		if (d->python_tier && o->opts->python_frames == PYF_OFF) {
			r->err = -ENOENT;	/* not asked for: reported like an absent probe */
			continue;
		}
		if ((probe_links__cuda_per_call(d->action) && o->opts->cuda_calls == CUDA_CALLS_OFF) ||
		    launch_layer__skips(t, d)) {
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
			r->file_offset = resolve__skip_endbr64(f->fd, q[i].file_offset);
			if (d->exits && find_exits(o, t, f, q[i].vaddr, r))
				continue;
		}
		if (d->aux_symbol) {
			if (!q[n + i].found) {
				r->err = -ENOENT;
				continue;
			}
			aux = f->bias + q[n + i].vaddr + d->aux_offset;
			if (d->action == ACT_GPU_BATCH)	/* the USDT semaphore the uprobe raises */
				r->ref_ctr_offset = q[n + i].file_offset;
		}
		if (memchr(d->arg_deref[arch], DEREF_TENSOR_LAST_DIM, CIRRON_NARGS))
			aux = tensor_dims__sizes_offset(f->host_path);	/* 0: not read */
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
		runtime_code |= !r->err && r->id && probe_links__cuda_per_call(d->action) && !d->driver;
	}
	/* Only when every way failed: python_frames=unavailable, the reason in health, one
	 * line on stderr. */
	if (pf.wanted && !pf.taken) {
		if (pf.why != t->py.why)
			snprintf(t->py.why, sizeof(t->py.why), "%s", pf.why ? pf.why :
				 "no entry in probes/cpython.json matches this CPython build");
		wlog("pid %d: Python frames unavailable in %s: %s", t->pid, f->path, t->py.why);
	} else if (pf.taken) {
		t->py.why[0] = 0;
	}
	if (runtime_code)
		add_runtime_text(o, t, f);
	launch_layer__after_group(o, t);
	err = attached;
out:
	for (i = 0; i < 2 * n; i++)
		free(q[i].found);
	free(q);
	free(tried);
	return err;
}
