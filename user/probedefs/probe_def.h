/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PROBE_DEF_H
#define __CIRRON_PROBE_DEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <cjson/cJSON.h>
#include "cirron.h"
#include "pyobj/pytypes.h"

/* What an ACT_EMIT event means to the training-structure tree (probes/ "meaning"). */
enum probe_meaning {
	MEAN_NONE = 0,
	MEAN_SCOPE,		/* record_function enter (entry, str = name) and exit (return) */
	MEAN_SCOPE_ENTER,	/* record_function enter only (str = name) */
	MEAN_SCOPE_EXIT,	/* record_function exit only */
	MEAN_BACKWARD,		/* autograd engine: entry and return */
	MEAN_GRAD_MODE,		/* c10::GradMode::set_enabled(bool): args[0]; args[1] its
				 * caller's return address (grad_caller.h) */
	MEAN_AUTOCAST,		/* autocast switched: args[0] = enabled */
	MEAN_GRAD_SCALER,	/* a GradScaler updated its scale */
	MEAN_PY_CALL,		/* CPython slot_tp_call: args[0] = the called object (entry, return) */
	MEAN_COMPILED,		/* torch.compile: dynamo made a cache entry, a frame's compile is
				 * done; args[0] = the frame's code state (ExtraState *) */
	MEAN_INFERENCE_ENTER,	/* torch.inference_mode() entered (torch._C._InferenceMode) */
	MEAN_INFERENCE_EXIT,	/* ... and left */
	MEAN_WAIT_COUNTER,	/* torch.monitor wait counter made: args[0] its handle, str its
				 * key (dynamo's compile: the compile's start) */
	MEAN_WAIT_COUNTER_STOP,	/* ... stopped: args[0] the handle */
	MEAN_TOKEN_PICK,	/* an op that picks a generation's next token (argmax,
				 * multinomial): scope_name names it */
	MEAN_TF_CALL,		/* TensorFlow: a tf.function called (str = its op name), entry and
				 * exit (tftree/tf_tree.h) */
	MEAN_TF_GRADIENT,	/* TensorFlow: tape.gradient(), entry and exit */
	MEAN_TF_NEXT,		/* TensorFlow: a tf.data batch read, args[0] = the iterator */
	MEAN_TF_ITERATOR,	/* TensorFlow: an iterator made, args[0] = it, args[1] = dataset */
	MEAN_TOKEN_IDS,		/* a model embeds its token ids (at::embedding): args[0] how
				 * many new tokens (the ids' last dimension), 0 unknown */
	MEAN__COUNT,
};

/* The architectures a probes/ entry may be keyed by ("arch", per-architecture "args"), told
 * by the probed file's ELF e_machine, never by the machine the observer runs on. */
enum probe_arch {
	PROBE_ARCH_X86_64 = 0,	/* "x86_64": EM_X86_64, SysV: rdi rsi rdx rcx r8 r9, then the stack */
	PROBE_ARCH_AARCH64,	/* "aarch64": EM_AARCH64, AAPCS64: x0-x7, then the stack; a
				 * returned object's memory comes in x8, not as argument 0 */
	PROBE_ARCH__COUNT,
};
#define PROBE_ARCH_ALL	((1u << PROBE_ARCH__COUNT) - 1)

/* One probed symbol, as written in probes/<group>.json. */
struct probe_def {
	char *symbol;		/* exact name, or a prefix ending in '*' */
	enum probe_action action;
	/* where each argument is, per architecture ("args": one list for all, or one each) */
	__u8 arg_src[PROBE_ARCH__COUNT][CIRRON_NARGS];
	__u8 arg_deref[PROBE_ARCH__COUNT][CIRRON_NARGS];
	unsigned int arches;	/* bit per enum probe_arch: the files it applies to ("arch") */
	bool ret;		/* attach a return probe too */
	bool exits;		/* "return": "exits": the exit is seen by entry-style uprobes on
				 * the function's own exit instructions (PROBE_F_EXITS): a C++
				 * function an exception may leave, where a uretprobe may not be */
	bool optional;		/* missing in some builds: not an attach failure */
	bool nested;		/* recursive: every return is sent (PROBE_F_NESTED) */
	bool python_tier;	/* attached only with --python-frames always|sampled */
	enum probe_meaning meaning;
	char *build_id;		/* set: a static function at file_offset in exactly that build */
	uint64_t file_offset;
	char *aux_symbol;	/* data symbol whose address (+ aux_offset) goes to probe_spec.aux */
	uint64_t aux_offset;
	struct py_layout py_layout;	/* py_call probes: this build's object layout */
	uint32_t py_version;	/* "python_version": 3.N as 0x030N0000: any build of that minor */
	char *scope_name;	/* scope probes: a fixed span name (else the name argument) */
	bool driver;		/* "source": "driver": a libcuda entry point (PROBE_F_DRIVER) */
	uint8_t memcpy_kind;	/* driver memcpy: the cudaMemcpyKind its name implies */
	uint8_t kernel_name;	/* cuda_kernel_name: which call (enum kernel_name_call) */
	bool nccl;		/* "nccl": true: a collective, counted (PROBE_F_NCCL) from its
				 * two arguments: element count, ncclDataType_t */
};

const char *probe_action__name(enum probe_action a);
/* ld.so and CPython probes assist; a probe the tree or the CUDA counts use makes a session. */
bool probe_def__gives_session(const struct probe_def *d);
const char *probe_meaning__name(enum probe_meaning m);
/* "x86_64", "aarch64"; "?" out of range. */
const char *probe_arch__name(int a);
/* The probe_arch of an ELF e_machine, or -1 (not one this tool probes). */
int probe_arch__of_machine(unsigned int e_machine);
/* The architecture this binary and its BPF object were built for: the only one whose files
 * its uprobes can probe. */
int probe_arch__own(void);
/* Whether d applies to a file of architecture a (its "arch"). */
bool probe_def__applies(const struct probe_def *d, int a);

/* Parses one entry of a group's "probes" into d (origin names the group in error messages).
 * Returns 0 or -EINVAL (logged); d holds what was parsed either way (probe_def__free). */
int probe_def__parse(const cJSON *p, struct probe_def *d, const char *origin);
void probe_def__free(struct probe_def *d);
/* A copy of obj's string member key, or NULL. */
char *probe_def__dup_string(const cJSON *obj, const char *key);

#endif
