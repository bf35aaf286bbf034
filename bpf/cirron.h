/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * Types and constants shared by the BPF programs (the .bpf.c files of bpf/) and the
 * loader (user/). Types and constants only; keep __u32/__u64, no kernel typedefs.
 */
#ifndef __CIRRON_H
#define __CIRRON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* userspace; BPF gets the types from vmlinux.h */
#endif

#define CIRRON_MAX_PROBES	4096	/* probe ids = BPF cookies, one per attached (pid, symbol) */
#define CIRRON_MAX_TARGETS	1024	/* processes followed at once */
#define CIRRON_STR_LEN		64
#define CIRRON_NARGS		4
#define CIRRON_NCOUNTERS	21	/* enum cuda_counter: what an anchor event carries */

/* What a probe does when it fires; chosen per symbol in probes/ (data). */
enum probe_action {
	ACT_NONE = 0,
	ACT_EMIT,		/* send an event with the captured arguments */
	ACT_CUDA_LAUNCH,	/* count a kernel launch; arg0 = host stub address */
	ACT_CUDA_MEMCPY,	/* arg0 = bytes, arg1 = cudaMemcpyKind; timed */
	ACT_CUDA_MALLOC,	/* arg0 = bytes, arg1 = void **ptr (read at return) */
	ACT_CUDA_FREE,		/* arg0 = the pointer freed */
	ACT_CUDA_SYNC,		/* time blocked between entry and return */
	ACT_CUDA_DEVICE_COUNT,	/* arg0 = int *count, read at return */
	ACT_DL_STATE,		/* ld.so _dl_debug_state: the link map changed */
	ACT_DL_WATCH,		/* the same, probed in every process (watch); aux = address of
				 * r_debug.r_state minus the probe's, both as mapped */
	ACT_CUDA_GRAPH_LAUNCH,	/* a CUDA graph launched (cudaGraphLaunch, cuGraphLaunch) */
	ACT_CUDA_KERNEL_NAME,	/* a kernel's name or handle made (aux: enum kernel_name_call);
				 * arg0, arg1 as that call has them; EV_KERNEL_NAME */
	ACT_GPU_BATCH,		/* the CUPTI companion hands over a batch (bpf/gpu_batch.h):
				 * arg0 = struct cirron_gpu_batch *, copied as EV_GPU_BATCH */
	ACT__COUNT,
};

/* Where an argument comes from: argument registers (x86-64 SysV, arm64 AAPCS64), a stack slot,
 * the return value, or the return address. Which one holds a given argument depends on the
 * architecture: probes/ says it per architecture where they differ (user/probedefs/probe_defs.h). */
enum arg_source {
	ARG_NONE = 0,
	ARG_REG0, ARG_REG1, ARG_REG2, ARG_REG3, ARG_REG4, ARG_REG5,	/* rdi rsi rdx rcx r8 r9;
									 * arm64: x0-x5 */
	ARG_STACK1, ARG_STACK2, ARG_STACK3, ARG_STACK4,	/* the first stack slots at entry:
							 * [rsp + 8*n]; arm64: [sp + 8*(n-1)] */
	ARG_RET,							/* return value (exit only) */
	ARG_RETADDR,		/* entry: the address the call returns to (who called) */
	ARG_REG6, ARG_REG7,	/* arm64 only: x6, x7 (x86-64 passes those arguments on the stack) */
	ARG__COUNT,
};

/* How a captured value is used once read. */
enum arg_deref {
	DEREF_NONE = 0,
	DEREF_STDSTRING,	/* value is a libstdc++ std::string *: copy its text into str */
	DEREF_CSTRING,		/* value is a char *: copy the text into str */
	DEREF_TENSOR_LAST_DIM,	/* value is an at::Tensor *: becomes the size of its last
				 * dimension (aux: the offset of its TensorImpl's sizes), 0 when
				 * not known */
};

#define PROBE_F_RETURN		(1u << 0)	/* a return probe is attached too */
#define PROBE_F_DETAIL		(1u << 1)	/* send one event per call (detail mode) */
#define PROBE_F_STOP_ON_LOAD	(1u << 2)	/* ACT_DL_STATE: stop the target until the loader resumes it */
#define PROBE_F_NESTED		(1u << 3)	/* ACT_EMIT that recurses (module calls): every
						 * return is sent, the loader pairs them LIFO */
#define PROBE_F_PY_CALL		(1u << 4)	/* with NESTED: arg0 is a PyObject; calls of a
						 * class with verdict PYV_IGNORE send nothing */
#define PROBE_F_NCCL		(1u << 5)	/* an NCCL collective: counted (calls, bytes:
						 * arg0 elements of ncclDataType_t arg1) */
#define PROBE_F_DRIVER		(1u << 6)	/* a driver API entry point (libcuda): counted
						 * also as source=driver, and not at all when
						 * called from the runtime's code (cuda_runtime_text):
						 * the runtime probe counted that call already */
#define PROBE_F_IMAGE		(1u << 8)	/* counts only in the process image it was
						 * linked in (probe_spec.image): a uprobe_multi
						 * link also fires in the image an exec brings */
#define PROBE_F_EXITS		(1u << 9)	/* exits seen by entry-style uprobes on the
						 * function's own exit instructions (its rets and
						 * tail jumps: handle_exit), never a uretprobe: a
						 * uretprobe replaces the return address, and a
						 * C++ exception unwinding through that frame finds
						 * no unwind info there -> std::terminate */

/* Verdicts per Python class (PyTypeObject *), set by the loader once it has read the class. */
enum py_verdict { PYV_UNKNOWN = 0, PYV_REPORT = 1, PYV_IGNORE = 2 };

/* The verdict on a class; for a reported Module also where an instance keeps its
 * `training` attribute: read *(...*(obj + off[0]) + off[1]...) for nderef steps, the value
 * (a PyObject *, Py_True or Py_False) goes out in args[1]. */
#define PY_CHAIN_MAX 3
struct py_verdict_val {
	__u8 verdict;		/* enum py_verdict */
	__u8 nderef;		/* 0: training not known for this class */
	__u16 pad;
	__s32 off[PY_CHAIN_MAX];
};

struct py_type_key {
	__u32 tgid;		/* the same address is a different class in another process */
	__u32 pad;
	__u64 type;
};

/* Per-thread stack of "was this call reported", so returns match their entries. */
struct py_stack {
	__u64 reported;		/* bit i: the call at depth i sent an event */
	__u32 depth;
	__u32 pad;
};

/* Where a CPython build keeps an instance's attributes (probes/cpython.json's object_layout),
 * for PROBE_F_PY_CALL: BPF finds a module's `training` itself at calls of a class the loader
 * has not judged yet (its first calls, before the verdict's chain is in py_verdicts). */
struct py_obj_layout {
	__s16 managed_dict;	/* the PyDictObject * relative to the object; 0: layout unknown */
	__s16 ma_keys, ma_values;	/* in PyDictObject */
	__s16 values_header;	/* bytes before values[0] in PyDictValues */
	__s16 dk_log2_index_bytes, dk_indices;	/* in PyDictKeysObject (dk_kind: the next byte) */
	__s16 ascii_data;	/* first character of a compact ASCII str */
	__s16 pad;
};

struct probe_spec {
	__u32 action;		/* enum probe_action */
	__u32 flags;		/* PROBE_F_* */
	__u8 arg_src[CIRRON_NARGS];	/* enum arg_source */
	__u8 arg_deref[CIRRON_NARGS];	/* enum arg_deref */
	__u32 image;		/* PROBE_F_IMAGE: the process's exec count (images) when linked */
	__u64 aux;		/* action specific: ACT_DL_STATE = address of r_debug.r_state;
				 * an argument read as DEREF_TENSOR_LAST_DIM: the offset of
				 * c10::SizesAndStrides in the build's TensorImpl (0: unknown);
				 * ACT_CUDA_MEMCPY with PROBE_F_DRIVER: the cudaMemcpyKind the
				 * entry point implies (0: other) */
	struct py_obj_layout py;	/* PROBE_F_PY_CALL */
};

/* Per-process CUDA totals, updated atomically by every thread of the process: every call
 * counted at its entry (docs/outputs.md, "What one launch is"). */
struct cuda_counts {
	__u64 launches;			/* kernels: runtime launches + driver launches made
					 * from outside the runtime; graph launches apart */
	__u64 memcpy_calls;
	__u64 memcpy_bytes_h2d;
	__u64 memcpy_bytes_d2h;
	__u64 memcpy_bytes_d2d;
	__u64 memcpy_bytes_other;	/* host-to-host and cudaMemcpyDefault */
	__u64 memcpy_ns;		/* time inside synchronous cudaMemcpy calls */
	__u64 malloc_calls;
	__u64 malloc_bytes;		/* bytes asked for, failed calls included */
	__u64 free_calls;
	__u64 sync_calls;
	__u64 sync_ns;			/* time blocked in *Synchronize */
	/* source=driver: the part of the totals above that came from libcuda's entry points
	 * called from outside libcudart (cuBLAS, cuDNN, NCCL, driver API clients) */
	__u64 launches_driver;
	__u64 memcpy_calls_driver;
	__u64 malloc_calls_driver;
	__u64 free_calls_driver;
	__u64 graph_launches;		/* not in launches: a graph holds many kernels */
	__u64 graph_launches_driver;
	__u64 nccl_calls;		/* NCCL collectives (all-reduce, send, ...) */
	__u64 nccl_bytes;		/* their element count times the element size */
	__u64 free_bytes;		/* frees of allocations seen made (cuda_allocs) */
	__u64 reserved_bytes;		/* allocations seen made and not freed yet */
	__u64 reserved_peak_bytes;	/* the most reserved_bytes has been */
	/* Per-span kernels (span_kernels): anchor events of the process so far, and launches
	 * left out of that split because its map was full (still in every total). */
	__u64 kernel_seq;
	__u64 kernels_unsplit;
	/* For a bound on GPU time without the CUPTI companion (gpu_ns_upper): when the last
	 * launch, graph launch or copy was made, and the entry and return of the last
	 * synchronize call that returned (CLOCK_MONOTONIC ns). */
	__u64 last_launch_ns;
	__u64 sync_entry_ns;
	__u64 sync_return_ns;
};

/* What an anchor event carries (event.counters), so a span gets exactly what happened
 * while it ran, whatever it is: the loader's names in tree/session.c. */
enum cuda_counter {
	CC_LAUNCHES, CC_MEMCPY_BYTES, CC_MEMCPY_NS, CC_SYNC_NS, CC_MALLOC_BYTES,
	CC_LAUNCHES_DRIVER, CC_GRAPH_LAUNCHES, CC_MEMCPY_CALLS, CC_MEMCPY_BYTES_H2D,
	CC_MEMCPY_BYTES_D2H, CC_MEMCPY_BYTES_D2D, CC_MALLOC_CALLS, CC_FREE_CALLS, CC_SYNC_CALLS,
	CC_NCCL_CALLS, CC_NCCL_BYTES,
	CC_KERNEL_SEQ,		/* not a count: the anchor's place in span_kernels' seq */
	CC_KERNELS_UNSPLIT,
	CC_LAST_LAUNCH_NS,	/* not counts: times (cuda_counts), for gpu_ns_upper */
	CC_SYNC_ENTRY_NS,
	CC_SYNC_RETURN_NS,
	CC__COUNT,
};

/* The calls that tell what a launched kernel is (probe_spec.aux of ACT_CUDA_KERNEL_NAME):
 * each becomes an EV_KERNEL_NAME with args[0] = the call, args[1], args[2] below. */
enum kernel_name_call {
	KN_REGISTER = 1,	/* __cudaRegisterFunction: [1] host stub, [2] char *mangled name */
	KN_GET_KERNEL,		/* __cudaGetKernel (CUDA 13 launches): [1] handle made, [2] stub */
	KN_MODULE_FUNCTION,	/* cuModuleGetFunction: [1] CUfunction, [2] char *name */
	KN_LIBRARY_KERNEL,	/* cuLibraryGetKernel: [1] CUkernel, [2] char *name */
	KN_KERNEL_FUNCTION,	/* cuKernelGetFunction: [1] CUfunction, [2] its CUkernel */
};

/* A live device allocation, by process and address (cuda_allocs): its size. */
struct alloc_key {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};

/* Where a process's kernel launches are counted (cuda_layer): at the runtime's entry points
 * (absent: until the process maps the driver and its probes are in), or at the driver's
 * alone, every caller's, so that a runtime launch traps once (user/attach/launch_layer.c). */
enum cuda_layer { CUDA_LAYER_RUNTIME = 0, CUDA_LAYER_DRIVER = 1 };

/* Code ranges of a process's CUDA runtime copies (libcudart), for PROBE_F_DRIVER. */
#define CIRRON_RUNTIME_RANGES	4
struct code_ranges {
	__u64 start[CIRRON_RUNTIME_RANGES];
	__u64 end[CIRRON_RUNTIME_RANGES];
};

struct kernel_key {
	__u32 tgid;
	__u32 pad;
	__u64 func;			/* host stub address passed to cudaLaunchKernel */
};
/* Launches per kernel between two anchor events of a process: seq is the process's
 * kernel_seq when they were made, so a span opened at an anchor carrying seq a and closed at
 * one carrying b made the launches of seqs a..b-1 (user/observe/kernel_split.c). */
struct span_kernel_key {
	__u32 tgid;
	__u32 seq;
	__u64 func;			/* as in kernel_key */
};
/* In kernel_key.func: a graph's launches, keyed by its executable graph (no user address
 * has bit 63 set). */
#define KERNEL_KEY_GRAPH (1ULL << 63)

enum event_type {
	EV_CALL = 1,		/* probe entry (ACT_EMIT or detail mode) */
	EV_RETURN,		/* probe return; ret and dur_ns are set */
	EV_EXEC,		/* a followed process called execve */
	EV_FORK,		/* a followed process forked a new process (args[0] = child pid) */
	EV_EXIT,		/* the last thread of a traced process exited (args[0] = exit_code) */
	EV_LINK_MAP,		/* a traced process loaded or unloaded a library */
	EV_DEVICE_COUNT,	/* cudaGetDeviceCount returned; args[0] = count, ret = cudaError_t */
	EV_WATCH_LOAD,		/* watch: the link map of a process not traced (nor ignored)
				 * became consistent: it may have loaded a library to trace */
	EV_NEW_LDSO,		/* watch: a process exec'd with a dynamic linker not probed yet;
				 * args[0] = its first instruction's address (in that ld.so), or
				 * 0: an executable not seen before (no bpf_find_vma) */
	EV_WRITE,		/* a traced process wrote to fd 1 or 2: a struct write_event */
	EV_KERNEL_NAME,		/* a kernel's name or handle made: a struct kname_event */
	EV_GPU_BATCH,		/* records from the CUPTI companion: a struct gpu_batch_event
				 * (bpf/gpu_batch.h) */
	EV__COUNT,
};

/* Every ring-buffer record is one of these: fixed size, tagged by type first. */
struct event {
	__u32 type;		/* enum event_type */
	__u32 probe_id;		/* BPF cookie; 0 for events that come from no probe */
	__u32 pid;		/* tgid, as the host sees it */
	__u32 tid;
	__u32 lost_before;	/* anchor events of this process dropped (ring buffer full)
				 * since its previous anchor event that got through */
	__u32 snap_updates;	/* anchor events: updates of its parameters begun so far
				 * (--snapshots, bpf/snap.h), low 32 bits */
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 dur_ns;		/* EV_RETURN: time since the matching entry */
	__u64 args[CIRRON_NARGS];
	__u64 ret;
	/* Anchor events (ACT_EMIT): the process's CUDA counters when the probe fired, so a span
	 * gets exactly what happened while it ran, however late the loader reads the event. */
	__u64 counters[CIRRON_NCOUNTERS];
	char str[CIRRON_STR_LEN];
};

/* Per-pid state in the `targets` map. */
#define TARGET_F_TRACED		(1u << 0)	/* probes attached; its events count */
#define TARGET_F_FOLLOW		(1u << 1)	/* follow its forks and execs (`run` mode) */
#define TARGET_F_STOP_ON_EXEC	(1u << 2)	/* SIGSTOP it at exec so the loader attaches first */
#define TARGET_F_ARMED		(1u << 3)	/* all its probes are in: ACT_EMIT events flow.
						 * Set once after attaching, so scope enters and
						 * exits start together, never half a pair. */
#define TARGET_F_IGNORED	(1u << 4)	/* watch: looked at and not wanted (--match); no
						 * more EV_WATCH_LOAD until it execs */

/* watch: probe ids of the ld.so probes in every process, the top ones (one per ld.so) */
#define CIRRON_WATCH_LDSO	16
#define CIRRON_WATCH_FIRST_ID	(CIRRON_MAX_PROBES - CIRRON_WATCH_LDSO)

/* watch: a file by its kernel identity, as a VMA maps it */
struct file_key {
	__u64 dev;		/* super_block.s_dev, the kernel's encoding (major << 20 | minor) */
	__u64 ino;
};

/* Kernels without attach cookies: which probe a process hit, by the address it hit. */
struct probe_addr_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;		/* the probed instruction, as mapped in that process */
};

struct target_info {
	__u32 flags;
	__u32 lost;		/* anchor events dropped, not yet told (event.lost_before) */
};

/* Global counters, a per-CPU array indexed by these. */
enum stat_id {
	STAT_RB_DROPS = 0,	/* bpf_ringbuf_reserve failed on the events ring: an event was lost */
	STAT_KERNEL_KEYS_FULL,	/* the per-kernel launch map was full */
	STAT_CONTROL_DROPS,	/* the control ring was full: an exec, exit or link-map event
				 * was lost (watch looks at /proc again) */
	STAT_WRITE_DROPS,	/* a write_event found the ring buffer full */
	STAT_DRIVER_FROM_RUNTIME,	/* driver calls left out: made by libcudart's code */
	STAT_KERNEL_NAMES_LOST,	/* a kernel's name (EV_KERNEL_NAME) found the ring full: its
				 * launches go unnamed */
	STAT_ALLOCS_FULL,	/* cuda_allocs was full: an allocation's size is not known at its
				 * free (cuda.reserved_bytes stays higher by it) */
	STAT_GPU_BATCH_DROPS,	/* a batch of the CUPTI companion found the events ring full */
	STAT__COUNT,
};

/* EV_KERNEL_NAME: the name copied in BPF (the process may be gone before the loader reads
 * anything of it); a name that long is cut (no NUL in name). On the events ring: a library's
 * registrations come in bursts of thousands at its load. */
#define CIRRON_KNAME_LEN	256
struct kname_event {
	__u32 type;		/* EV_KERNEL_NAME */
	__u32 probe_id;
	__u32 pid;
	__u32 call;		/* enum kernel_name_call */
	__u64 key;		/* the stub, handle or CUfunction named */
	__u64 alias;		/* KN_GET_KERNEL, KN_KERNEL_FUNCTION: the key it stands for */
	char name[CIRRON_KNAME_LEN];
};

/* Marks: what a traced process writes to its stdout and stderr (fds 1 and 2), copied up to
 * CIRRON_WRITE_COPY bytes per write (a power of two); the record is sent only as long as
 * the copy (header + copied bytes), not always full size. */
#define CIRRON_WRITE_COPY	8192	/* Python's io.DEFAULT_BUFFER_SIZE: a block-buffered
					 * stdout (a pipe, a file) flushes 8 KiB */
struct write_event {
	__u32 type;		/* EV_WRITE */
	__u32 pid;		/* tgid, as the host sees it */
	__u32 tid;
	__u32 fd;		/* 1 or 2 */
	__u64 ts_ns;		/* CLOCK_MONOTONIC */
	__u64 len;		/* bytes the write asked to write */
	__u32 copied;		/* bytes in data: min(len, CIRRON_WRITE_COPY), 0 if unreadable */
	__u32 pad;
	char data[CIRRON_WRITE_COPY];
};

#endif /* __CIRRON_H */
