/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PROBE_SET_H
#define __CIRRON_PROBE_SET_H

#include <stddef.h>
#include "probedefs/probe_def.h"

/* A library, recognized by a symbol it defines (file names vary: hashed wheel copies). */
struct probe_group {
	char *name;
	char *match_defines;
	char *file_hint;	/* substring of the file name to try first */
	struct probe_def *probes;
	size_t n;
};

struct probe_set {
	struct probe_group *groups;
	size_t n;
	char dir[4096];		/* where they were read; "" built in */
	char *torch_layouts;	/* that directory's torch_layouts.json, or NULL */
};

/* Loads the probes/ JSON files built into the binary. Returns 0 or -EINVAL (logged). */
int probe_set__load_embedded(struct probe_set *s);
/* The probes/ directory that goes with this binary: a checkout's (the binary at its top, or in
 * .output/ under it: a directory with bpf/ and probes/), else an installed one
 * (PREFIX/share/cirron-probe/probes next to PREFIX/bin). Returns 0 (its real path in buf) or
 * -ENOENT. */
int probe_set__find_dir(char *buf, size_t size);
/* Loads every *.json of dir in name order (torch_layouts.json: the tensor layouts, not a
 * group). Returns 0 or -errno (logged). */
int probe_set__load_dir(struct probe_set *s, const char *dir);
/* The files found by probe_set__find_dir, else the built-in copy: files on disk win, so a
 * probe definition can be fixed (a new library build's symbols) without a rebuild, and the
 * packaged /usr/share/cirron-probe/probes is what runs; the built-in copy keeps a lone binary
 * (copied into a container) working. s->dir says which. */
int probe_set__load(struct probe_set *s);
/* Parses one group file and appends it. origin names it in error messages. */
int probe_set__parse(struct probe_set *s, const char *json, const char *origin);
void probe_set__free(struct probe_set *s);
#endif
