// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pyobj/cpython.h"
#include "proc/procfs.h"
#include "proc/sym_cache.h"
#include "traced/target.h"
#include "traced/versions.h"
#include "tree/clock.h"

int versions__torch_from_path(const char *host_path, char *buf, size_t size)
{
	const char *base = strrchr(host_path, '/'), *so;
	char py[PATH_MAX], line[256];
	FILE *f;
	int err = -ENOENT;

	base = base ? base + 1 : host_path;
	so = strstr(base, ".so.");
	if (so && so[4] >= '0' && so[4] <= '9') {
		snprintf(buf, size, "%s", so + 4);
		return 0;
	}
	/* pip and Debian bookworm layout: .../torch/lib/libtorch_cpu.so, .../torch/version.py */
	snprintf(py, sizeof(py), "%.*s/../version.py", (int)(base - host_path - 1), host_path);
	f = fopen(py, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char v[64];

		if (sscanf(line, "__version__ = '%63[^']'", v) == 1 ||
		    sscanf(line, "__version__ = \"%63[^\"]\"", v) == 1) {
			snprintf(buf, size, "%s", v);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

void versions__format_python(uint32_t hex, char *buf, size_t size)
{
	snprintf(buf, size, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
}

static void attrs_set(cJSON *a, const char *key, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(a, key))
		cJSON_ReplaceItemInObjectCaseSensitive(a, key, cJSON_CreateString(v));
	else
		cJSON_AddStringToObject(a, key, v);
}

static bool has_group(const struct target *t, const char *name)
{
	for (size_t i = 0; i < t->nprobes; i++)
		if (t->probes[i].id && !strcmp(t->probes[i].group->name, name))
			return true;
	return false;
}

/* torch_version wherever libtorch is mapped; framework=torch where nothing else names one. */
static void detect_torch(struct target *t, cJSON *a)
{
	char v[64];

	if (cJSON_GetObjectItemCaseSensitive(a, "torch_version"))
		return;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct probe_result *r = &t->probes[i];

		if (!r->id || strcmp(r->group->name, "libtorch") != 0)
			continue;
		if (versions__torch_from_path(t->files[r->file].host_path, v, sizeof(v)))
			snprintf(v, sizeof(v), "unknown");
		if (!cJSON_GetObjectItemCaseSensitive(a, "framework"))
			cJSON_AddStringToObject(a, "framework", "torch");
		cJSON_AddStringToObject(a, "torch_version", v);
		return;
	}
}

/* Py_Version is exported by CPython >= 3.11: read it from the target's memory. */
static void detect_python(struct sym_cache *syms, struct target *t, cJSON *a)
{
	if (cJSON_GetObjectItemCaseSensitive(a, "python_version"))
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct mapped_file *f = &t->files[i];
		struct sym_query q = { .name = "Py_Version" };
		uint32_t hex = 0;
		bool cached;
		char v[32];

		if (!strstr(f->path, "python"))
			continue;
		if (sym_cache__resolve(syms, f->host_path, &q, 1, &cached) != 1)
			continue;
		free(q.found);
		if (!procfs__read_mem(t->pid, f->bias + q.vaddr, &hex, sizeof(hex)) || !hex)
			continue;
		versions__format_python(hex, v, sizeof(v));
		cJSON_AddStringToObject(a, "python_version", v);
		return;
	}
}

/* A framework on top of torch, from the modules the target has imported (sys.modules, read
 * from its memory), most specific first: not guessed from what is installed. Frameworks are
 * imported after torch, so this is tried again at each library load and flush until one is
 * found with its version, for the session's first FRAMEWORK_WINDOW_NS (a plain torch job
 * never imports one). */
#define FRAMEWORK_WINDOW_NS (600ull * 1000000000ull)

static void detect_framework(struct sym_cache *syms, struct target *t, cJSON *a)
{
	static const char *const modules[] = { "keras", "lightning", "pytorch_lightning",
		"transformers" };
	static const char *const names[] = { "keras", "lightning", "lightning", "transformers" };
	char v[64];

	if (t->py.framework_found || t->py.framework_unsupported ||
	    clock_map__now(&t->clock) - t->session->root->start_ns > FRAMEWORK_WINDOW_NS)
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct mapped_file *f = &t->files[i];
		uint32_t hex;
		int k;

		if (!strstr(f->path, "python") || cpython__version(syms, t->pid, f, &hex))
			continue;
		k = cpython__imported(syms, t->pid, f, hex, modules,
				      sizeof(modules) / sizeof(modules[0]), v, sizeof(v),
				      &t->py.modules_used);
		if (k == -ENOTSUP) {
			t->py.framework_unsupported = true;
			return;
		}
		if (k < 0)
			continue;
		attrs_set(a, "framework", names[k]);
		attrs_set(a, "framework_version", v[0] ? v : "unknown");
		/* sys.modules holds a package from the start of its import: its __version__
		 * may come later */
		t->py.framework_found = v[0] != 0;
		session__touch_root(t->session);
		return;
	}
}

/* TensorFlow (its probe groups attached): framework=tensorflow, or transformers when that is
 * imported too (the SDK's precedence: transformers > tensorflow > torch), tensorflow_version
 * and, once Keras is imported, keras_version and keras_package (keras: Keras 3; tf_keras:
 * Keras 2, TF_USE_LEGACY_KERAS=1; the first imported of the two, tf_keras first). */
static void detect_tensorflow(struct sym_cache *syms, struct target *t, cJSON *a)
{
	static const char *const fw[] = { "transformers", "tensorflow" };
	static const char *const keras[] = { "tf_keras", "keras" };
	char v[64];

	const cJSON *named = cJSON_GetObjectItemCaseSensitive(a, "framework");
	bool ours = cJSON_IsString(named) && (!strcmp(named->valuestring, "tensorflow") ||
					      !strcmp(named->valuestring, "transformers"));

	if ((t->py.framework_found && ours) || t->py.framework_unsupported ||
	    clock_map__now(&t->clock) - t->session->root->start_ns > FRAMEWORK_WINDOW_NS)
		return;
	if (!ours) {	/* named by the torch side before TensorFlow's tree took the session */
		t->py.framework_found = false;
		t->py.modules_used = 0;
		cJSON_DeleteItemFromObjectCaseSensitive(a, "framework_version");
		attrs_set(a, "framework", "tensorflow");
	}
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct mapped_file *f = &t->files[i];
		uint32_t hex;
		int k;

		if (!strstr(f->path, "python") || cpython__version(syms, t->pid, f, &hex))
			continue;
		if (!cJSON_GetObjectItemCaseSensitive(a, "tensorflow_version")) {
			k = cpython__imported(syms, t->pid, f, hex, fw, 2, v, sizeof(v), NULL);
			if (k == -ENOTSUP) {
				t->py.framework_unsupported = true;
				return;
			}
			if (k < 0)
				continue;
			attrs_set(a, "framework", fw[k]);
			if (k == 0) {
				attrs_set(a, "framework_version", v[0] ? v : "unknown");
				if (cpython__imported(syms, t->pid, f, hex, fw + 1, 1, v, sizeof(v),
						      NULL) < 0)
					continue;
			}
			if (!v[0])
				continue;	/* its __version__ comes later in its import */
			attrs_set(a, "tensorflow_version", v);
			session__touch_root(t->session);
		}
		/* Keras comes after TensorFlow, if at all: walked again only when sys.modules
		 * changed size since the last walk that found neither */
		k = cpython__imported(syms, t->pid, f, hex, keras, 2, v, sizeof(v),
				      &t->py.modules_used);
		if (k >= 0 && v[0]) {
			attrs_set(a, "keras_version", v);
			attrs_set(a, "keras_package", keras[k]);
			/* Keras is imported inside TensorFlow's own import, before TensorFlow's
			 * __version__ is set: done only once both are read */
			t->py.framework_found =
				cJSON_GetObjectItemCaseSensitive(a, "tensorflow_version") != NULL;
			session__touch_root(t->session);
		}
		return;
	}
}

void versions__detect(struct sym_cache *syms, struct target *t)
{
	if (!t->session)
		return;
	/* TensorFlow names the job where it trains, or where no torch is loaded (a job of both
	 * that trains with torch and reads its data with tf.data is torch's) */
	bool tf = (has_group(t, "tensorflow") || has_group(t, "tensorflow_python")) &&
		  (t->tf.active || !has_group(t, "libtorch"));

	if (tf)
		detect_tensorflow(syms, t, t->session->root->attrs);
	detect_torch(t, t->session->root->attrs);
	detect_python(syms, t, t->session->root->attrs);
	if (!tf)
		detect_framework(syms, t, t->session->root->attrs);
}
