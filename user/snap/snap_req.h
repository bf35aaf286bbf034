/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* --snapshots: the protocol between the event thread (snapshots.c), which fills a request
 * while the worker is idle and takes the result back once it is done, and the worker thread
 * of one target (snap_worker.c, snap_tensors.c, snap_layout.c), which reads the target and
 * writes files and never touches the loader's state. */
#ifndef __CIRRON_SNAP_REQ_H
#define __CIRRON_SNAP_REQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "common/options.h"
#include "pyobj/py_models.h"
#include "pyobj/pytypes.h"
#include "pyobj/torch_tensor.h"
#include "snap/snap_copy.h"

enum snap_req_kind { SNAP_REQ_NONE, SNAP_REQ_FIND, SNAP_REQ_READ };

/* What the worker is asked; filled by the event thread while the worker is idle. */
struct snap_req {
	enum snap_req_kind kind;
	int pid;
	/* FIND: where to look */
	struct py_layout pyl;
	struct py_roots roots;
	/* the tensor layout (snap_layout.c): l is the table's entry for this torch when
	 * table_ok, else only its dtypes and version; build_id (libtorch's, "" unknown) keys
	 * what is found under cache_dir */
	struct torch_layout l;
	bool table_ok;
	char build_id[96];
	char cache_dir[4096];
	/* READ */
	enum snapshots mode;
	double sample_rate;
	uint64_t max_bytes;
	char dir[4096];		/* sampled / full: the files' directory, "" for none */
	uint32_t s0;		/* the update count the loader had seen, BPF's too at start (not
				 * for a read of the weights alone: an update is under way) */
	uint64_t steps0;	/* BPF's optimizer steps begun at start (none open) */
	uint64_t drops0;	/* ring-buffer drops then */
	int states_fd, stats_fd;	/* BPF maps: snap_states, stats */
	/* a READ of BPF's copy at a loop's end (snap_copy.h) instead of the target's memory for
	 * the tensors' bytes; NULL: the target's */
	const struct snap_copy_src *copy;
};

/* What the worker hands back. */
struct snap_result {
	int err;		/* FIND: 0 or -ENOENT; READ: 0, or -errno (nothing read) */
	char why[320];		/* the reason, when err */
	cJSON *records;		/* READ: one object per model: model, found_by, params, ... */
	cJSON *model_attr;	/* READ: the inventory for the session's `model` attribute */
	bool exact;		/* READ: no update began before the read ended */
	bool weights_exact;	/* READ: no optimizer step began before it ended (the weights are
				 * those after steps0; the grads may be a later update's) */
	bool refused;		/* a tensor failed the layout's checks: no more snapshots */
	/* FIND, and READ of the target: what BPF is to copy at a loop's end, where plan_ok (a
	 * small model on the CPU) */
	struct snap_copy_plan plan;
	bool plan_ok;
	uint64_t bytes;
	double ms;
	size_t models, optimizers;	/* FIND */
	char found_how[160];	/* FIND: what was looked at (-vv) */
};

struct snap_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started;
	int nice, find_nice;	/* the thread's priority for reads, and for FIND */
	bool has_req;		/* under mu: a request waits */
	bool quit;		/* under mu */
	atomic_bool cancel;	/* stop a read between tensors */
	atomic_bool done;	/* the result is ready (the event thread takes it) */
	struct snap_req req;
	struct snap_result res;
	/* the worker's own: kept across requests */
	struct py_types types;
	struct py_models models;
	/* the tensor layout reads use, once chosen (snap_layout.c) */
	struct torch_layout layout;
	const char *layout_source;	/* "table", "found", "cache"; NULL: none yet */
	bool layout_grad_checked;	/* a .grad confirmed where AutogradMeta keeps it */
	int layout_searches;
	double layout_search_ms;	/* the last search's time */
	char layout_why[320];		/* the last search's failure */
};

#endif
