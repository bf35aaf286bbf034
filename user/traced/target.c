// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/elf_syms.h"
#include "traced/target.h"

struct target *target__new(int pid)
{
	struct target *t = calloc(1, sizeof(*t));

	if (t) {
		t->pid = pid;
		t->cuda.count = -1;
		span_kernels__init(&t->cuda.span_kernels, -1, -1);
	}
	return t;
}

void target__free(struct target *t)
{
	size_t i;

	if (!t)
		return;
	span_kernels__free(&t->cuda.span_kernels);
	cJSON_Delete(t->report.hangs);
	cJSON_Delete(t->report.sys);
	for (i = 0; i < t->nprobes; i++) {
		free(t->probes[i].symbol);
		free(t->probes[i].why);
	}
	for (i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		free(t->files[i].host_path);
		if (t->files[i].fd >= 0)
			close(t->files[i].fd);
		sym_table__free(t->files[i].syms);
	}
	kernel_names__free(&t->cuda.kernel_names);
	free(t->probes);
	free(t->files);
	infer_tree__free(&t->infer);
	session__free(t->session);
	free(t);
}

const char *target__symbolize(struct target *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		struct mapped_file *f = &t->files[i];
		char fdpath[64];

		if (addr < f->map_start || addr >= f->map_end)
			continue;
		if (!f->syms && f->fd >= 0) {
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", f->fd);
			f->syms = sym_table__load(fdpath);
		}
		return sym_table__lookup(f->syms, addr - f->bias);
	}
	return NULL;
}

const char *target__kernel_name(struct target *t, uint64_t key, char *buf, size_t size)
{
	const char *name = kernel_names__get(&t->cuda.kernel_names, key);

	if (!name)
		name = target__symbolize(t, kernel_names__end(&t->cuda.kernel_names, key));
	if (name)
		return name;
	snprintf(buf, size, "0x%llx (unnamed: %s)", (unsigned long long)key,
		 t->mid_run ? "made before attach" : "no name seen");
	return buf;
}

bool target__has_signal_source(const struct target *t)
{
	for (size_t i = 0; i < t->nprobes; i++)
		if (t->probes[i].id && probe_def__gives_session(t->probes[i].def))
			return true;
	return false;
}
