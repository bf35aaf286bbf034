// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: what a look for the models or a read needs from the target, found with the
// loader's caches (the CPython that runs it, __main__, the interpreter, the object and
// tensor layouts) before the worker is asked.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/options.h"
#include "common/test_hooks.h"
#include "probedefs/probe_set.h"
#include "snap/snap_ctl.h"
#include "snap/snap_prepare.h"
#include "snap/snap_env.h"
#include "traced/target.h"
#include "pyobj/cpython.h"
#include "proc/elf_syms.h"
#include "proc/sym_cache.h"

/* The CPython the target runs: the file that defines _PyRuntime (the executable, or
 * libpython where it is shared, as in pyenv's builds), its version, and __main__'s dict. */
static const struct mapped_file *python_of(const struct snap_env *e, struct target *t, uint32_t *hex,
					   uint64_t *main_dict)
{
	const struct mapped_file *any = NULL;

	for (size_t i = 0; i < t->nfiles; i++) {
		if (!strstr(t->files[i].path, "python") ||
		    cpython__version(e->syms, t->pid, &t->files[i], hex))
			continue;
		any = &t->files[i];
		if (!cpython__module_dict(e->syms, t->pid, any, *hex, "__main__", main_dict))
			return any;
	}
	*main_dict = 0;
	return any;
}

static const struct py_layout *py_layout_for(const struct probe_set *probes, uint32_t hex)
{
	for (size_t i = 0; i < probes->n; i++)
		for (size_t k = 0; k < probes->groups[i].n; k++) {
			const struct probe_def *d = &probes->groups[i].probes[k];

			if (d->meaning == MEAN_PY_CALL && d->py_layout.known &&
			    d->py_version == (hex & 0xffff0000u))
				return &d->py_layout;
		}
	return NULL;
}

/* The GNU build-id of the libtorch the probes attached to: what a found layout is kept by. */
static void libtorch_build_id(const struct target *t, char *buf, size_t size)
{
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct probe_result *r = &t->probes[i];

		if (r->id && !strcmp(r->group->name, "libtorch") &&
		    !elf_syms__build_id(t->files[r->file].host_path, buf, size))
			return;
	}
	buf[0] = 0;
}

static void refuse(struct target *t, const char *why)
{
	snprintf(t->snap->why, sizeof(t->snap->why), "%s", why);
	t->snap->models = SNAP_MODELS_REFUSED;
	elog("pid %d: snapshots off: %s", t->pid, why);
}

bool snap_prepare__request(const struct snap_env *e, struct target *t, struct snap_req *q)
{
	const struct mapped_file *f;
	const struct py_layout *pyl;
	uint32_t hex = 0;
	uint64_t dict = 0;
	char why[200], cache[4096];
	int err;
	cJSON *v = cJSON_GetObjectItemCaseSensitive(t->session->root->attrs, "torch_version");

	if (!cJSON_IsString(v))
		return false;	/* not known yet */
	/* the table's entry (checked against the target before use), else only its dtypes:
	 * the worker finds the layout in the target (snap_layout.c) */
	err = test_hooks__get()->no_layout_table ? -ENOENT
	      : torch_layout__find(v->valuestring, &q->l, why, sizeof(why));
	if (err && err != -ENOENT) {
		refuse(t, why);
		return false;
	}
	q->table_ok = !err;
	if (err) {
		memset(&q->l, 0, sizeof(q->l));
		torch_layout__dtypes(&q->l);
		snprintf(q->l.version, sizeof(q->l.version), "%s", v->valuestring);
	}
	if (!q->build_id[0])	/* the request lives as long as the target: once */
		libtorch_build_id(t, q->build_id, sizeof(q->build_id));
	snprintf(q->cache_dir, sizeof(q->cache_dir), "%s", e->opts->cache_dir ? e->opts->cache_dir
		 : sym_cache__default_dir(cache, sizeof(cache)));
	f = python_of(e, t, &hex, &dict);
	if (dict)	/* kept: the interpreter's exit clears sys.modules */
		t->snap->main_dict = dict;
	pyl = f ? py_layout_for(e->probes, hex) : NULL;
	if (!pyl) {
		refuse(t, "no object layout for this CPython in probes/cpython.json (3.11 to 3.13)");
		return false;
	}
	q->pid = t->pid;
	q->pyl = *pyl;
	q->roots.main_dict = t->snap->main_dict;
	q->roots.minor = hex >> 16 & 0xff;
	q->roots.forward = t->py.model_obj;
	q->roots.whole_frames = t->snap->find_partial < FIND_WHOLE_TRIES;
	if (cpython__interp(e->syms, t->pid, f, hex, &q->roots.interp))
		q->roots.interp = 0;
	q->states_fd = e->states_fd;
	q->stats_fd = e->stats_fd;
	return true;
}
