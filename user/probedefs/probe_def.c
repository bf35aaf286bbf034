// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// One probe of probes/<group>.json: parsed, checked, named (probe_def.h).
#include <cjson/cJSON.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "probedefs/probe_def.h"
#include "pyobj/torch_tensor.h"

static const char *const action_names[ACT__COUNT] = {
	[ACT_NONE] = "none",
	[ACT_EMIT] = "emit",
	[ACT_CUDA_LAUNCH] = "cuda_launch",
	[ACT_CUDA_MEMCPY] = "cuda_memcpy",
	[ACT_CUDA_MALLOC] = "cuda_malloc",
	[ACT_CUDA_FREE] = "cuda_free",
	[ACT_CUDA_SYNC] = "cuda_sync",
	[ACT_CUDA_DEVICE_COUNT] = "cuda_device_count",
	[ACT_DL_STATE] = "dl_state",
	[ACT_DL_WATCH] = "dl_watch",
	[ACT_CUDA_GRAPH_LAUNCH] = "cuda_graph_launch",
	[ACT_CUDA_KERNEL_NAME] = "cuda_kernel_name",
	[ACT_GPU_BATCH] = "gpu_batch",
};

static const char *const meaning_names[MEAN__COUNT] = {
	[MEAN_NONE] = "none",
	[MEAN_SCOPE] = "scope",
	[MEAN_SCOPE_ENTER] = "scope_enter",
	[MEAN_SCOPE_EXIT] = "scope_exit",
	[MEAN_BACKWARD] = "backward",
	[MEAN_GRAD_MODE] = "grad_mode",
	[MEAN_AUTOCAST] = "autocast",
	[MEAN_GRAD_SCALER] = "grad_scaler",
	[MEAN_PY_CALL] = "py_call",
	[MEAN_COMPILED] = "compiled",
	[MEAN_INFERENCE_ENTER] = "inference_enter",
	[MEAN_INFERENCE_EXIT] = "inference_exit",
	[MEAN_TOKEN_PICK] = "token_pick",
	[MEAN_TOKEN_IDS] = "token_ids",
	[MEAN_WAIT_COUNTER] = "wait_counter",
	[MEAN_WAIT_COUNTER_STOP] = "wait_counter_stop",
	[MEAN_TF_CALL] = "tf_call",
	[MEAN_TF_GRADIENT] = "tf_gradient",
	[MEAN_TF_NEXT] = "tf_next",
	[MEAN_TF_ITERATOR] = "tf_iterator",
};

const char *probe_meaning__name(enum probe_meaning m)
{
	return m < MEAN__COUNT && meaning_names[m] ? meaning_names[m] : "?";
}

static int parse_meaning(const char *s)
{
	for (int i = 0; i < MEAN__COUNT; i++)
		if (!strcmp(s, meaning_names[i]))
			return i;
	return -1;
}

static const char *const arch_names[PROBE_ARCH__COUNT] = {
	[PROBE_ARCH_X86_64] = "x86_64",
	[PROBE_ARCH_AARCH64] = "aarch64",
};

const char *probe_arch__name(int a)
{
	return a >= 0 && a < PROBE_ARCH__COUNT ? arch_names[a] : "?";
}

static int parse_arch(const char *s)
{
	for (int i = 0; i < PROBE_ARCH__COUNT; i++)
		if (!strcmp(s, arch_names[i]))
			return i;
	return -1;
}

int probe_arch__of_machine(unsigned int e_machine)
{
	switch (e_machine) {
	case EM_X86_64: return PROBE_ARCH_X86_64;
	case EM_AARCH64: return PROBE_ARCH_AARCH64;
	}
	return -1;
}

int probe_arch__own(void)
{
#if defined(__x86_64__)
	return PROBE_ARCH_X86_64;
#elif defined(__aarch64__)
	return PROBE_ARCH_AARCH64;
#else
	return -1;
#endif
}

bool probe_def__applies(const struct probe_def *d, int a)
{
	return a >= 0 && a < PROBE_ARCH__COUNT && (d->arches >> a & 1);
}

const char *probe_action__name(enum probe_action a)
{
	return a < ACT__COUNT && action_names[a] ? action_names[a] : "?";
}

static int parse_action(const char *s)
{
	for (int i = 1; i < ACT__COUNT; i++)
		/* dl_watch is the loader's own (watch), never a probes/ file's */
		if (action_names[i] && i != ACT_DL_WATCH && !strcmp(s, action_names[i]))
			return i;
	return -1;
}

/* "reg0".."reg5" ("reg6", "reg7": aarch64's x6 and x7, where x86-64 has stack slots),
 * "stack1".."stack4" (the first stack slots at entry: the 7th argument on x86-64, the 9th on
 * aarch64), "ret", "retaddr" (who called: the entry's return address), optionally
 * ":stdstring", ":cstring" or ":tensor_last_dim" (an at::Tensor *: the size of its last
 * dimension, read in BPF where the build's tensor layout is known). nregs: the architecture's argument registers, 6 (x86-64, or a
 * list for every architecture) or 8. */
static int parse_arg(const char *s, int nregs, __u8 *src, __u8 *deref)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	int n;

	*deref = DEREF_NONE;
	if (colon && !strcmp(colon + 1, "stdstring"))
		*deref = DEREF_STDSTRING;
	else if (colon && !strcmp(colon + 1, "cstring"))
		*deref = DEREF_CSTRING;
	else if (colon && !strcmp(colon + 1, "tensor_last_dim"))
		*deref = DEREF_TENSOR_LAST_DIM;
	else if (colon)
		return -EINVAL;
	if (len == 4 && !strncmp(s, "reg", 3) && (n = s[3] - '0') >= 0 && n < nregs)
		*src = (__u8)(n <= 5 ? ARG_REG0 + n : ARG_REG6 + n - 6);
	else if (len == 6 && !strncmp(s, "stack", 5) && (n = s[5] - '0') >= 1 && n <= 4)
		*src = (__u8)(ARG_STACK1 + n - 1);
	else if (len == 3 && !strncmp(s, "ret", 3))
		*src = ARG_RET;
	else if (len == 7 && !strncmp(s, "retaddr", 7))
		*src = ARG_RETADDR;
	else
		return -EINVAL;
	return 0;
}

char *probe_def__dup_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

/* "object_layout": {"managed_dict": -24, ...}: every field, all integers. */
static int parse_py_layout(const cJSON *j, struct py_layout *l, const char *origin,
			   const char *symbol)
{
	static const char *const names[] = { "managed_dict", "ma_keys", "ma_values",
		"values_header", "dk_log2_index_bytes", "dk_nentries", "dk_indices", "ascii_data" };
	int64_t *fields[] = { &l->managed_dict, &l->ma_keys, &l->ma_values, &l->values_header,
		&l->dk_log2_index_bytes, &l->dk_nentries, &l->dk_indices, &l->ascii_data };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, names[i]);

		/* range first: converting a double out of int64_t's range is undefined
		 * (found by tests/fuzz/fuzz_probe_defs.c) */
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= -4096 && v->valuedouble <= 4096) ||
		    v->valuedouble != (double)(int64_t)v->valuedouble) {
			elog("%s: %s: \"object_layout\" needs an integer \"%s\"", origin, symbol,
			     names[i]);
			return -EINVAL;
		}
		*fields[i] = (int64_t)v->valuedouble;
	}
	l->known = true;
	return 0;
}

/* "source": "driver" (libcuda's entry points; default "runtime") and, for a driver memcpy,
 * "memcpy_kind": the cudaMemcpyKind its name implies (1 h2d, 2 d2h, 3 d2d; default 0);
 * "nccl": true, an NCCL collective whose first two arguments are its element count and
 * ncclDataType_t. */
static int parse_cuda_source(const cJSON *p, struct probe_def *d, const char *origin)
{
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(p, "source");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(p, "memcpy_kind");
	const cJSON *nccl = cJSON_GetObjectItemCaseSensitive(p, "nccl");

	if (nccl && !cJSON_IsBool(nccl)) {
		elog("%s: %s: \"nccl\" is true or false", origin, d->symbol);
		return -EINVAL;
	}
	d->nccl = cJSON_IsTrue(nccl);
	if (d->action == ACT_CUDA_KERNEL_NAME) {
		static const char *const calls[] = {
			[KN_REGISTER] = "register", [KN_GET_KERNEL] = "get_kernel",
			[KN_MODULE_FUNCTION] = "module_function",
			[KN_LIBRARY_KERNEL] = "library_kernel",
			[KN_KERNEL_FUNCTION] = "kernel_function",
		};
		const cJSON *kn = cJSON_GetObjectItemCaseSensitive(p, "kernel_name");

		for (size_t i = 1; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (cJSON_IsString(kn) && !strcmp(kn->valuestring, calls[i]))
				d->kernel_name = (uint8_t)i;
		if (!d->kernel_name) {
			elog("%s: %s: cuda_kernel_name needs \"kernel_name\": register, get_kernel, "
			     "module_function, library_kernel or kernel_function", origin, d->symbol);
			return -EINVAL;
		}
	}

	if (src && (!cJSON_IsString(src) || (strcmp(src->valuestring, "driver") != 0 &&
					     strcmp(src->valuestring, "runtime") != 0))) {
		elog("%s: %s: \"source\" is \"runtime\" or \"driver\"", origin, d->symbol);
		return -EINVAL;
	}
	d->driver = src && !strcmp(src->valuestring, "driver");
	if (kind && (!cJSON_IsNumber(kind) || kind->valueint < 0 || kind->valueint > 4)) {
		elog("%s: %s: \"memcpy_kind\" is 0 to 4 (cudaMemcpyKind)", origin, d->symbol);
		return -EINVAL;
	}
	d->memcpy_kind = kind ? (uint8_t)kind->valueint : 0;
	return 0;
}

/* One architecture's argument list into d (arch < 0: the same list for every architecture). */
static int parse_arg_list(const cJSON *list, int arch, struct probe_def *d, const char *origin)
{
	int nregs = arch == PROBE_ARCH_AARCH64 ? 8 : 6, i = 0;
	const cJSON *a;

	if (!cJSON_IsArray(list)) {
		elog("%s: %s: \"args\" is an array, or an object of arrays by architecture",
		     origin, d->symbol);
		return -EINVAL;
	}
	cJSON_ArrayForEach(a, list) {
		__u8 src, deref;

		if (i == CIRRON_NARGS || !cJSON_IsString(a) ||
		    parse_arg(a->valuestring, nregs, &src, &deref)) {
			elog("%s: %s: bad %s argument #%d (want reg0-%d, stack1-4, ret or retaddr, "
			     "optionally :stdstring, :cstring or :tensor_last_dim; at most %d)", origin, d->symbol,
			     arch < 0 ? "" : probe_arch__name(arch), i, nregs - 1, CIRRON_NARGS);
			return -EINVAL;
		}
		for (int k = 0; k < PROBE_ARCH__COUNT; k++) {
			if (arch >= 0 && k != arch)
				continue;
			d->arg_src[k][i] = src;
			d->arg_deref[k][i] = deref;
		}
		i++;
	}
	return 0;
}

/* "args": ["reg0", ...] where the arguments are in the same places on every architecture,
 * else {"x86_64": [...], "aarch64": [...]}, one list for each architecture the entry applies
 * to (and none other). */
static int parse_args(const cJSON *args, struct probe_def *d, const char *origin)
{
	const cJSON *list;
	unsigned int named = 0;

	if (!args || cJSON_IsArray(args))
		return args ? parse_arg_list(args, -1, d, origin) : 0;
	if (!cJSON_IsObject(args)) {
		elog("%s: %s: \"args\" is an array, or an object of arrays by architecture",
		     origin, d->symbol);
		return -EINVAL;
	}
	cJSON_ArrayForEach(list, args) {
		int a = parse_arch(list->string);

		if (a < 0 || !probe_def__applies(d, a)) {
			elog("%s: %s: \"args\" for \"%s\": %s", origin, d->symbol, list->string,
			     a < 0 ? "not an architecture (x86_64, aarch64)" :
			     "an architecture its \"arch\" leaves out");
			return -EINVAL;
		}
		if (parse_arg_list(list, a, d, origin))
			return -EINVAL;
		named |= 1u << a;
	}
	if (named != d->arches) {
		elog("%s: %s: \"args\" by architecture needs a list for each architecture it "
		     "applies to", origin, d->symbol);
		return -EINVAL;
	}
	return 0;
}

/* "arch": "x86_64" or "aarch64": an entry that holds one architecture's facts (a file
 * offset, an instruction); every architecture without it. An entry keyed by "build_id" is
 * one build of one architecture: it must say which. */
static int parse_arches(const cJSON *p, struct probe_def *d, const char *origin)
{
	const cJSON *arch = cJSON_GetObjectItemCaseSensitive(p, "arch");
	int a;

	d->arches = PROBE_ARCH_ALL;
	if (!arch) {
		if (!cJSON_GetObjectItemCaseSensitive(p, "build_id"))
			return 0;
		elog("%s: %s: a probe with \"build_id\" names its \"arch\" (x86_64 or "
		     "aarch64): its offset is one architecture's code", origin, d->symbol);
		return -EINVAL;
	}
	a = cJSON_IsString(arch) ? parse_arch(arch->valuestring) : -1;
	if (a < 0) {
		elog("%s: %s: \"arch\" is \"x86_64\" or \"aarch64\"", origin, d->symbol);
		return -EINVAL;
	}
	d->arches = 1u << a;
	return 0;
}

int probe_def__parse(const cJSON *p, struct probe_def *d, const char *origin)
{
	const cJSON *action = cJSON_GetObjectItemCaseSensitive(p, "action");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(p, "args");
	const cJSON *aux_off = cJSON_GetObjectItemCaseSensitive(p, "aux_offset"), *meaning, *ret;
	int act;

	memset(d, 0, sizeof(*d));
	d->symbol = probe_def__dup_string(p, "symbol");
	if (!d->symbol || !cJSON_IsString(action)) {
		elog("%s: each probe needs \"symbol\" and \"action\" strings", origin);
		return -EINVAL;
	}
	act = parse_action(action->valuestring);
	if (act < 0) {
		elog("%s: %s: unknown action \"%s\"", origin, d->symbol, action->valuestring);
		return -EINVAL;
	}
	d->action = act;
	if (parse_arches(p, d, origin) || parse_args(args, d, origin))
		return -EINVAL;
	meaning = cJSON_GetObjectItemCaseSensitive(p, "meaning");
	if (meaning) {
		int m = cJSON_IsString(meaning) ? parse_meaning(meaning->valuestring) : -1;

		if (m < 0) {
			elog("%s: %s: unknown meaning (want scope, scope_enter, scope_exit, "
			     "backward, grad_mode, autocast, grad_scaler, py_call, compiled, "
			     "inference_enter, inference_exit, wait_counter, wait_counter_stop, "
			     "token_pick, tf_call, tf_gradient, tf_next or tf_iterator)",
			     origin, d->symbol);
			return -EINVAL;
		}
		d->meaning = m;
	}
	ret = cJSON_GetObjectItemCaseSensitive(p, "return");
	if (cJSON_IsString(ret) && !strcmp(ret->valuestring, "exits")) {
		d->exits = true;
	} else if (ret && !cJSON_IsBool(ret)) {
		elog("%s: %s: \"return\" is true, false or \"exits\"", origin, d->symbol);
		return -EINVAL;
	} else {
		d->ret = cJSON_IsTrue(ret);
	}
	d->optional = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "optional"));
	d->nested = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "nested"));
	d->python_tier = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "python_tier"));
	d->aux_symbol = probe_def__dup_string(p, "aux_symbol");
	d->scope_name = probe_def__dup_string(p, "scope_name");
	d->build_id = probe_def__dup_string(p, "build_id");
	if (d->build_id) {
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(p, "offset");
		char *end = NULL;

		if (cJSON_IsString(off))
			d->file_offset = strtoull(off->valuestring, &end, 0);
		if (!end || *end || !d->file_offset) {
			elog("%s: %s: a probe with \"build_id\" needs an \"offset\" string "
			     "(file offset, e.g. \"0x3b5fc00\")", origin, d->symbol);
			return -EINVAL;
		}
	}
	if (cJSON_GetObjectItemCaseSensitive(p, "python_version")) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "python_version");
		unsigned int major, minor;
		char end;

		if (!cJSON_IsString(v) ||
		    sscanf(v->valuestring, "%u.%u%c", &major, &minor, &end) != 2 ||
		    major != 3 || minor > 99 || d->build_id) {
			elog("%s: %s: \"python_version\" must be \"3.N\" (and no \"build_id\")",
			     origin, d->symbol);
			return -EINVAL;
		}
		d->py_version = major << 24 | minor << 16;
	}
	if (aux_off && (!cJSON_IsNumber(aux_off) || !(aux_off->valuedouble >= 0 &&
						       aux_off->valuedouble <= 65536) ||
			aux_off->valuedouble != (double)(uint64_t)aux_off->valuedouble)) {
		elog("%s: %s: \"aux_offset\" must be an integer from 0 to 65536", origin, d->symbol);
		return -EINVAL;
	}
	d->aux_offset = aux_off ? (uint64_t)aux_off->valuedouble : 0;
	if (parse_cuda_source(p, d, origin))
		return -EINVAL;
	if (cJSON_GetObjectItemCaseSensitive(p, "object_layout") &&
	    parse_py_layout(cJSON_GetObjectItemCaseSensitive(p, "object_layout"), &d->py_layout,
			    origin, d->symbol))
		return -EINVAL;
	return 0;
}

void probe_def__free(struct probe_def *d)
{
	free(d->symbol);
	free(d->aux_symbol);
	free(d->scope_name);
	free(d->build_id);
}

bool probe_def__gives_session(const struct probe_def *d)
{
	return d->action != ACT_DL_STATE && d->meaning != MEAN_PY_CALL &&
	       d->action != ACT_GPU_BATCH;
}
