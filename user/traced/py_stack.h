/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_STACK_H
#define __CIRRON_PY_STACK_H

struct sym_cache;
struct target;

#include <stdbool.h>

/* Which Keras method the job's Python threads are in now (enum tf_hint, tftree/tf_tree.h):
 * fit, evaluate inside fit (validation), evaluate, predict, or none (TFH_NONE: none on any
 * stack, or the stacks cannot be read: a CPython other than 3.11-3.13). Read from the
 * target's memory while it runs: the answer is the stacks at the read, not at any event.
 * *in_call: that thread's innermost frame was calling into TensorFlow's C++
 * (execute.quick_execute: a tf.function's call under way), so the method is that call's
 * caller. Keras 3's and tf-keras's methods are told by their names and a file under a keras
 * package. */
int py_stack__keras(struct sym_cache *syms, struct target *t, bool *in_call);

#endif
