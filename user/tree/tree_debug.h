/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TREE_DEBUG_H
#define __CIRRON_TREE_DEBUG_H

#include "tree/tree_input.h"

/* CIRRON_DEBUG_TREE=1: every input a tree takes, on stderr, one line each before its rules see
 * it: "<tree> pid=P tid=T ts=NS KIND name=NAME obj=HEX val=V" (tree: TREE for the training
 * tree, ITREE for the inference tree), what the unit tests replay real runs from
 * (tests/unit/tree_replay.h, test_torch_tree_replay.c). */
void tree_debug__input(const char *tree, int pid, const struct tree_event *ev);
/* A KIND as those lines name it ("SCOPE+", "GRAD", ...), NULL for none. */
const char *tree_debug__kind(enum tree_input kind);

#endif
