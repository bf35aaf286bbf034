// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Generic uprobe programs for C-level symbols plus process lifecycle tracepoints.
// Which symbol means what is data (probes/), handed over as probe_spec per BPF cookie.
// Every read of target memory is bounded and fault tolerant: a probe must never
// be able to break the process it observes.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cirron.h"

#define SIGSTOP 19
#define RT_CONSISTENT 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load (user/kernel_features.c). Without attach cookies (before
 * 5.15) a probe is told by the address it hit in its process (probe_addrs), and a return by
 * the stack pointer its entry saw (calls); the verifier prunes the branch not taken, so a
 * kernel without bpf_get_attach_cookie never sees that call. */
const volatile bool use_cookie = true;

/* High-rate events: may drop under overload (counted in STAT_RB_DROPS). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Rare events that must not be lost behind high-rate ones: exec, fork, exit, link map.
 * Should it fill up all the same (a burst of process starts), the drop is counted in
 * STAT_CONTROL_DROPS and the loader looks at /proc again. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CIRRON_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct probe_spec);
} probe_specs SEC(".maps");

/* Hits per probe: [2*id] entries, [2*id+1] returns. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * CIRRON_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct target_info);
} targets SEC(".maps");

/* Traced processes' execs so far (absent: none), for PROBE_F_IMAGE. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} images SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct cuda_counts);
} cuda_totals SEC(".maps");

/* The wait status of each traced process that exited, also sent as EV_EXIT: kept here for
 * the loader in case that event is lost to a full control ring (it deletes what it read). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kernel_key);
	__type(value, __u64);
} kernel_launches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct py_type_key);
	__type(value, struct py_verdict_val);
} py_verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_stack);
} py_stacks SEC(".maps");

/* watch: the dynamic linkers already told to the loader (EV_NEW_LDSO once per file) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct file_key);
	__type(value, __u8);
} ldso_seen SEC(".maps");

/* No attach cookies: (process, probed address) -> probe id, filled by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_PROBES);
	__type(key, struct probe_addr_key);
	__type(value, __u32);
} probe_addrs SEC(".maps");

/* PROBE_F_RET_SITE: return addresses told to the loader, per process (LRU: exited
 * processes' entries age out). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ret_site_key);
	__type(value, __u32);
} ret_sites SEC(".maps");

/* watch without bpf_find_vma: the executables already told to the loader, which finds
 * their dynamic linker itself (EV_NEW_LDSO with no address) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, __u8);
} exe_seen SEC(".maps");

/* With cookies: (thread, probe id). Without: (thread, stack pointer at entry), which the
 * return sees 8 bytes higher; the entry's probe id is then kept in the state. */
struct call_key {
	__u32 tid;
	__u32 probe_id;
	__u64 sp;
};

struct call_state {
	__u64 ts_ns;
	__u64 args[CIRRON_NARGS];
	__u32 probe_id;
	__u32 pad;
};

/* --cuda-calls sampled: per tgid, nonzero while the loader's window is open. A call is
 * counted at its entry probe, so a call under way when the window opens or closes is
 * counted once or not at all. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct cuda_window);
} cuda_windows SEC(".maps");

/* Per tgid, where libcudart's code is mapped: driver calls made from there are left out. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct code_ranges);
} cuda_runtime_text SEC(".maps");

/* Entry state of calls that also have a return probe. LRU: a lost return cannot leak. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct call_key);
	__type(value, struct call_state);
} calls SEC(".maps");

static __always_inline void count(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		(*v)++;
}

static __always_inline __u64 read_arg(struct pt_regs *ctx, __u8 src)
{
	__u64 v = 0;

	switch (src) {
	case ARG_REG0: return PT_REGS_PARM1(ctx);
	case ARG_REG1: return PT_REGS_PARM2(ctx);
	case ARG_REG2: return PT_REGS_PARM3(ctx);
	case ARG_REG3: return PT_REGS_PARM4(ctx);
	case ARG_REG4: return PT_REGS_PARM5(ctx);
	case ARG_REG5: return ctx->r9;	/* no PT_REGS_PARM6 in libbpf 1.1 */
	case ARG_STACK1: case ARG_STACK2: case ARG_STACK3: case ARG_STACK4:
		bpf_probe_read_user(&v, sizeof(v),
				    (void *)(PT_REGS_SP(ctx) + 8 * (src - ARG_STACK1 + 1)));
		return v;
	case ARG_RET: return PT_REGS_RC(ctx);
	}
	return 0;
}

static __always_inline void read_args(struct pt_regs *ctx, const struct probe_spec *spec,
				      __u64 args[CIRRON_NARGS])
{
	for (int i = 0; i < CIRRON_NARGS; i++)
		args[i] = read_arg(ctx, spec->arg_src[i]);
}

static __always_inline void copy_str(char dst[CIRRON_STR_LEN], const struct probe_spec *spec,
				     const __u64 args[CIRRON_NARGS])
{
	for (int i = 0; i < CIRRON_NARGS; i++) {
		const void *p = (const void *)args[i];

		if (spec->arg_deref[i] == DEREF_STDSTRING) {
			/* libstdc++: the data pointer is the first member */
			if (bpf_probe_read_user(&p, sizeof(p), p))
				return;
		} else if (spec->arg_deref[i] != DEREF_CSTRING) {
			continue;
		}
		bpf_probe_read_user_str(dst, CIRRON_STR_LEN, p);
		return;
	}
}

static __always_inline bool armed(__u32 tgid)
{
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	return t && (t->flags & TARGET_F_ARMED);
}

/* Ring-buffer records: every bpf_ringbuf_reserve is followed at once by its one NULL check,
 * and every path after it ends in a submit. Older verifiers (6.1 and 5.10, checked in the
 * kernel matrix) do not know that a reservation that passed the check is not NULL: checked
 * a second time (a helper that returns NULL on failure, then its caller), they walk a "NULL"
 * path that never releases it and reject the program ("Unreleased reference"). */
static __always_inline void event_init(struct event *e)
{
	__u64 id = bpf_get_current_pid_tgid();

	__builtin_memset(e, 0, sizeof(*e));
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts_ns = bpf_ktime_get_ns();
}

static __always_inline void emit_control_flags(__u32 type, __u32 pid, __u64 arg0, __u64 rb_flags)
{
	struct event *e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);

	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = type;
	e->pid = pid;
	e->args[0] = arg0;
	bpf_get_current_comm(e->str, sizeof(e->str));
	bpf_ringbuf_submit(e, rb_flags);
}

static __always_inline void emit_control(__u32 type, __u32 pid, __u64 arg0)
{
	emit_control_flags(type, pid, arg0, 0);
}

static __always_inline void emit_link_map(__u32 id, __u64 stopped)
{
	struct event *e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);

	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = EV_LINK_MAP;
	e->probe_id = id;
	e->args[0] = stopped;
	bpf_ringbuf_submit(e, 0);
}

/* cudaGetDeviceCount returned ret; count_ptr is its int *count */
static __always_inline void emit_device_count(__u32 id, __u64 count_ptr, __u64 ret)
{
	struct event *e;
	int n = -1;

	bpf_probe_read_user(&n, sizeof(n), (void *)count_ptr);
	e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);
	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = EV_DEVICE_COUNT;
	e->probe_id = id;
	e->args[0] = (__u64)(__s64)n;
	e->ret = ret;
	bpf_ringbuf_submit(e, 0);
}

/* Waking the loader costs the traced thread an IPI per event; the loader polls at least
 * every 100 ms anyway. Wake it only when the buffer is an eighth full. */
static __always_inline __u64 wakeup_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 8)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void emit(__u32 type, __u32 probe_id, const struct probe_spec *spec,
				 const __u64 args[CIRRON_NARGS], __u64 ret, __u64 dur_ns)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct target_info *ti = spec->action == ACT_EMIT ? bpf_map_lookup_elem(&targets, &tgid)
							  : NULL;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	/* A gap in a process's anchors breaks the pairing of scope enters and exits: the
	 * next anchor that gets through says how many went missing before it. */
	if (!e) {
		count(&stats, STAT_RB_DROPS);
		if (ti)
			__sync_fetch_and_add(&ti->lost, 1);
		return;
	}
	event_init(e);
	if (ti && ti->lost) {
		__u32 lost = ti->lost;

		e->lost_before = lost;
		__sync_fetch_and_add(&ti->lost, -lost);
	}
	e->type = type;
	e->probe_id = probe_id;
	e->ret = ret;
	e->dur_ns = dur_ns;
	for (int i = 0; i < CIRRON_NARGS; i++)
		e->args[i] = args[i];
	if (type == EV_CALL)
		copy_str(e->str, spec, args);
	if (spec->action == ACT_EMIT) {
		struct cuda_counts *c = bpf_map_lookup_elem(&cuda_totals, &tgid);

		if (c) {
			e->counters[0] = c->launches;
			e->counters[1] = c->memcpy_bytes_h2d + c->memcpy_bytes_d2h +
					 c->memcpy_bytes_d2d + c->memcpy_bytes_other;
			e->counters[2] = c->memcpy_ns;
			e->counters[3] = c->sync_ns;
			e->counters[4] = c->malloc_bytes;
		}
	}
	bpf_ringbuf_submit(e, wakeup_flags());
}

static __always_inline struct cuda_counts *cuda_counts_of(__u32 tgid)
{
	struct cuda_counts *c = bpf_map_lookup_elem(&cuda_totals, &tgid);
	struct cuda_counts zero = {};

	if (c)
		return c;
	bpf_map_update_elem(&cuda_totals, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cuda_totals, &tgid);
}

static __always_inline void count_kernel(__u32 tgid, __u64 func)
{
	struct kernel_key key = { .tgid = tgid, .func = func };
	__u64 one = 1, *n = bpf_map_lookup_elem(&kernel_launches, &key);

	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	if (bpf_map_update_elem(&kernel_launches, &key, &one, BPF_NOEXIST) == -17 /* EEXIST */) {
		n = bpf_map_lookup_elem(&kernel_launches, &key);
		if (n)
			__sync_fetch_and_add(n, 1);
	} else if (!bpf_map_lookup_elem(&kernel_launches, &key)) {
		count(&stats, STAT_KERNEL_KEYS_FULL);
	}
}

static __always_inline void add_memcpy_bytes(struct cuda_counts *c, __u64 bytes, __u64 kind)
{
	switch (kind) {	/* cudaMemcpyKind */
	case 1: __sync_fetch_and_add(&c->memcpy_bytes_h2d, bytes); break;
	case 2: __sync_fetch_and_add(&c->memcpy_bytes_d2h, bytes); break;
	case 3: __sync_fetch_and_add(&c->memcpy_bytes_d2d, bytes); break;
	default: __sync_fetch_and_add(&c->memcpy_bytes_other, bytes); break;
	}
}

/* Follows the verdict's pointer chain from the object: its `training` attribute. */
static __always_inline __u64 py_read_chain(__u64 obj, const struct py_verdict_val *v)
{
	__u64 p = obj;

	for (int i = 0; i < PY_CHAIN_MAX; i++) {
		if (i >= v->nderef)
			break;
		if (bpf_probe_read_user(&p, sizeof(p), (void *)(p + (__s64)v->off[i])) || !p)
			return 0;
	}
	return p;
}

/* A call of a Python object (args[0], its class in args[2]): report it unless its class was judged
 * uninteresting. Deeper than 64 nested calls, everything is reported (the loader pairs
 * those itself). */
static __always_inline bool py_call_enter(__u64 args[CIRRON_NARGS])
{
	__u64 id = bpf_get_current_pid_tgid(), obj = args[0];
	__u32 tid = (__u32)id;
	struct py_type_key key = { .tgid = id >> 32 };
	struct py_stack zero = {}, *st;
	const struct py_verdict_val *v;
	bool report;

	bpf_probe_read_user(&key.type, sizeof(key.type), (void *)(obj + 8));	/* ob_type */
	/* The class, read now: the loader reads memory later, when a short-lived object may
	 * be gone (or the whole process, for the last calls before an exit). */
	args[2] = key.type;
	v = bpf_map_lookup_elem(&py_verdicts, &key);
	report = !v || v->verdict != PYV_IGNORE;
	if (v && report && v->nderef)
		args[1] = py_read_chain(obj, v);
	st = bpf_map_lookup_elem(&py_stacks, &tid);
	if (!st) {
		bpf_map_update_elem(&py_stacks, &tid, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&py_stacks, &tid);
		if (!st)
			return true;
	}
	if (st->depth < 64) {
		if (report)
			st->reported |= 1ull << st->depth;
		else
			st->reported &= ~(1ull << st->depth);
	}
	st->depth++;
	return report || st->depth > 64;
}

static __always_inline bool py_call_return(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct py_stack *st = bpf_map_lookup_elem(&py_stacks, &tid);

	if (!st || !st->depth)
		return true;	/* entered before we were armed: the loader ignores it */
	st->depth--;
	return st->depth >= 64 || (st->reported >> st->depth) & 1;
}

/* ld.so's r_debug.r_state at r_state is RT_CONSISTENT: the libraries are in. */
static __always_inline bool link_map_consistent(__u64 r_state)
{
	int state = -1;

	return !bpf_probe_read_user(&state, sizeof(state), (void *)r_state) &&
	       state == RT_CONSISTENT;
}

/* The probe that fired: its cookie, or (no cookies) the loader's entry for the address. */
static __always_inline __u32 entry_probe_id(struct pt_regs *ctx, __u32 tgid)
{
	struct probe_addr_key key = { .tgid = tgid, .addr = PT_REGS_IP(ctx) };
	__u32 *id;

	if (use_cookie)
		return bpf_get_attach_cookie(ctx);
	id = bpf_map_lookup_elem(&probe_addrs, &key);
	return id ? *id : 0;
}

/* Entry state for the return probe: keyed by probe id, or (no cookies) by stack pointer. */
static __always_inline void save_call(struct pt_regs *ctx, __u32 id, const __u64 args[CIRRON_NARGS])
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid() };
	struct call_state st = { .ts_ns = bpf_ktime_get_ns(), .probe_id = id };

	if (use_cookie)
		key.probe_id = id;
	else
		key.sp = PT_REGS_SP(ctx);
	for (int i = 0; i < CIRRON_NARGS; i++)
		st.args[i] = args[i];
	bpf_map_update_elem(&calls, &key, &st, BPF_ANY);
}

/* PROBE_F_RET_SITE entry: whether this call is recorded, telling the loader about a return
 * address first seen. A call is recorded when its exit will be seen: the loader has probed
 * where it returns, or it is the call that tells the loader and the process is held until
 * that address is probed (stop first, then tell; PROBE_F_STOP_ON_LOAD, set in every mode: see
 * docs/probe-exits.md for why that is still open). Without the flag, a call to a return
 * address not probed yet goes unrecorded rather than open with no exit (so does one while
 * another thread's call is telling). */
static __always_inline bool site_ready(struct pt_regs *ctx, __u32 tgid, __u32 id,
				       const struct probe_spec *spec)
{
	struct ret_site_key site = { .tgid = tgid };
	bool stop = spec->flags & PROBE_F_STOP_ON_LOAD;
	struct event *e;
	__u32 *v;

	if (bpf_probe_read_user(&site.addr, sizeof(site.addr), (void *)PT_REGS_SP(ctx)))
		return false;
	v = bpf_map_lookup_elem(&ret_sites, &site);
	if (v)
		return *v & RET_SITE_PROBED;
	if (bpf_map_update_elem(&ret_sites, &site, &id, BPF_NOEXIST))
		return false;	/* another thread told it just now */
	e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);
	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		bpf_map_delete_elem(&ret_sites, &site);	/* the next call tells again */
		return false;
	}
	if (stop)
		bpf_send_signal(SIGSTOP);
	event_init(e);
	e->type = EV_RET_SITE;
	e->probe_id = id;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->args[0] = site.addr;
	e->args[1] = stop;
	bpf_ringbuf_submit(e, 0);
	return stop;
}

/* A recorded PROBE_F_RET_SITE call: keyed by (thread, probe id, stack pointer) in both modes,
 * so that the return-site probe, which sees the stack 8 bytes higher, finds exactly this call
 * (recursion included; a jump to that instruction finds nothing). A call an exception left
 * keeps its state until the LRU drops it. */
static __always_inline void save_site_call(struct pt_regs *ctx, __u32 id,
					   const __u64 args[CIRRON_NARGS])
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .probe_id = id,
				.sp = PT_REGS_SP(ctx) };
	struct call_state st = { .ts_ns = bpf_ktime_get_ns(), .probe_id = id };

	for (int i = 0; i < CIRRON_NARGS; i++)
		st.args[i] = args[i];
	bpf_map_update_elem(&calls, &key, &st, BPF_ANY);
}

/* Whether a sampled or driver CUDA call goes uncounted: its process's window is closed, or
 * (driver) the runtime made it. Entry probes sit at the first instruction (or just after
 * endbr64), so [sp] is the return address: the immediate caller. */
static __always_inline bool cuda_call_left_out(struct pt_regs *ctx, const struct probe_spec *spec,
					       __u32 tgid)
{
	if (spec->flags & PROBE_F_SAMPLED) {
		struct cuda_window *w = bpf_map_lookup_elem(&cuda_windows, &tgid);

		if (!w || (w->state != CW_COUNTING && w->state != CW_CLOSING &&
			   w->state != CW_TIMED))
			return true;
	}
	if (spec->flags & PROBE_F_DRIVER) {
		struct code_ranges *r = bpf_map_lookup_elem(&cuda_runtime_text, &tgid);
		__u64 ra = 0;

		if (!r || bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx)))
			return false;
		for (int i = 0; i < CIRRON_RUNTIME_RANGES; i++) {
			if (ra >= r->start[i] && ra < r->end[i]) {
				count(&stats, STAT_DRIVER_FROM_RUNTIME);
				return true;
			}
		}
	}
	return false;
}

/* A progress call (anchor, synchronize) opens or closes the process's armed or closing
 * CUDA window, and counts inside it. */
static __always_inline void cuda_window_progress(__u32 tgid)
{
	struct cuda_window *w = bpf_map_lookup_elem(&cuda_windows, &tgid);

	if (!w)
		return;
	if (w->state == CW_ARMED) {
		w->state = CW_COUNTING;
	} else if (w->state == CW_COUNTING) {
		__sync_fetch_and_add(&w->progress, 1);
	} else if (w->state == CW_CLOSING) {
		__sync_fetch_and_add(&w->progress, 1);
		w->state = CW_CLOSED;
	}
}

/* Driver API calls and graph launches: the totals, and the source=driver part. */
static __always_inline void count_cuda_call(const struct probe_spec *spec, __u32 tgid,
					    const __u64 args[CIRRON_NARGS])
{
	struct cuda_counts *c = cuda_counts_of(tgid);
	bool drv = spec->flags & PROBE_F_DRIVER;

	if (!c)
		return;
	switch (spec->action) {
	case ACT_CUDA_LAUNCH:
		__sync_fetch_and_add(&c->launches, 1);
		if (drv)
			__sync_fetch_and_add(&c->launches_driver, 1);
		break;
	case ACT_CUDA_GRAPH_LAUNCH:
		__sync_fetch_and_add(&c->graph_launches, 1);
		if (drv)
			__sync_fetch_and_add(&c->graph_launches_driver, 1);
		break;
	case ACT_CUDA_MEMCPY:
		__sync_fetch_and_add(&c->memcpy_calls, 1);
		add_memcpy_bytes(c, args[0], drv ? spec->aux : args[1]);
		if (drv)
			__sync_fetch_and_add(&c->memcpy_calls_driver, 1);
		break;
	case ACT_CUDA_MALLOC:
		__sync_fetch_and_add(&c->malloc_calls, 1);
		__sync_fetch_and_add(&c->malloc_bytes, args[0]);
		if (drv)
			__sync_fetch_and_add(&c->malloc_calls_driver, 1);
		break;
	case ACT_CUDA_FREE:
		__sync_fetch_and_add(&c->free_calls, 1);
		if (drv)
			__sync_fetch_and_add(&c->free_calls_driver, 1);
		break;
	}
}

/* A probe linked in an image the process has since left by exec (PROBE_F_IMAGE). */
static __always_inline bool other_image(const struct probe_spec *spec, __u32 tgid)
{
	__u32 *n;

	if (!(spec->flags & PROBE_F_IMAGE))
		return false;
	n = bpf_map_lookup_elem(&images, &tgid);
	return (n ? *n : 0) != spec->image;
}

static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 id = entry_probe_id(ctx, tgid);
	const struct probe_spec *spec;
	struct cuda_counts *c;
	__u64 args[CIRRON_NARGS];

	if (!id)
		return 0;
	spec = bpf_map_lookup_elem(&probe_specs, &id);
	if (spec && other_image(spec, tgid))
		return 0;	/* not a hit of this image's probe */
	count(&hits, 2 * id);
	if (!spec)
		return 0;
	read_args(ctx, spec, args);
	/* no cookies: a nested return needs the entry's id whatever the entry decides */
	if (!use_cookie && (spec->flags & PROBE_F_NESTED) && (spec->flags & PROBE_F_RETURN))
		save_call(ctx, id, args);
	if (spec->flags & PROBE_F_PROGRESS)
		cuda_window_progress(tgid);
	if ((spec->flags & (PROBE_F_SAMPLED | PROBE_F_DRIVER)) &&
	    cuda_call_left_out(ctx, spec, tgid))
		return 0;
	if ((spec->flags & PROBE_F_DRIVER) || spec->action == ACT_CUDA_GRAPH_LAUNCH) {
		count_cuda_call(spec, tgid, args);
		if (spec->flags & PROBE_F_DETAIL)
			emit(EV_CALL, id, spec, args, 0, 0);
		return 0;
	}

	switch (spec->action) {
	case ACT_CUDA_LAUNCH:
		c = cuda_counts_of(tgid);
		if (!c)
			return 0;
		__sync_fetch_and_add(&c->launches, 1);
		count_kernel(tgid, args[0]);
		break;
	case ACT_CUDA_MEMCPY:
		c = cuda_counts_of(tgid);
		if (!c)
			return 0;
		__sync_fetch_and_add(&c->memcpy_calls, 1);
		add_memcpy_bytes(c, args[0], args[1]);
		break;
	case ACT_CUDA_MALLOC:
		c = cuda_counts_of(tgid);
		if (!c)
			return 0;
		__sync_fetch_and_add(&c->malloc_calls, 1);
		__sync_fetch_and_add(&c->malloc_bytes, args[0]);
		break;
	case ACT_CUDA_FREE:
		c = cuda_counts_of(tgid);
		if (!c)
			return 0;
		__sync_fetch_and_add(&c->free_calls, 1);
		break;
	case ACT_DL_WATCH: {
		struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

		/* traced processes have their own ld.so probe; ignored ones are not wanted */
		if ((t && (t->flags & (TARGET_F_TRACED | TARGET_F_IGNORED))) ||
		    !link_map_consistent(PT_REGS_IP(ctx) + spec->aux))
			return 0;
		/* Every process start on the node comes here: waking the loader for each cost it
		 * ~150 us (a crowd of shell commands); it drains the ring every 100 ms anyway */
		emit_control_flags(EV_WATCH_LOAD, tgid, 0, BPF_RB_NO_WAKEUP);
		return 0;
	}
	case ACT_DL_STATE: {
		if (!link_map_consistent(spec->aux))
			return 0;
		/* Stop first, then tell: the loader's SIGCONT must come after the SIGSTOP. */
		if (spec->flags & PROBE_F_STOP_ON_LOAD)
			bpf_send_signal(SIGSTOP);
		emit_link_map(id, !!(spec->flags & PROBE_F_STOP_ON_LOAD));
		return 0;
	}
	}

	if (spec->action == ACT_EMIT && !armed(tgid))
		return 0;
	if ((spec->flags & PROBE_F_PY_CALL) && !py_call_enter(args))
		return 0;
	if ((spec->flags & PROBE_F_RET_SITE) && !site_ready(ctx, tgid, id, spec))
		return 0;
	if (spec->action == ACT_EMIT || (spec->flags & PROBE_F_DETAIL))
		emit(EV_CALL, id, spec, args, 0, 0);

	if ((spec->flags & PROBE_F_RETURN) && !(spec->flags & PROBE_F_NESTED))
		save_call(ctx, id, args);
	if (spec->flags & PROBE_F_RET_SITE)
		save_site_call(ctx, id, args);
	return 0;
}

/* PROBE_F_RET_SITE: an entry-style uprobe on an instruction a probed function returns to
 * (its cookie, or its probe_addrs entry, is the function's probe id). The function's frame
 * is gone: the stack pointer is 8 above the entry's. */
SEC("uprobe")
int handle_ret_site(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(),
				.sp = PT_REGS_SP(ctx) - 8 };
	const struct probe_spec *spec;
	struct call_state *st;

	key.probe_id = entry_probe_id(ctx, tgid);
	if (!key.probe_id)
		return 0;
	st = bpf_map_lookup_elem(&calls, &key);
	spec = bpf_map_lookup_elem(&probe_specs, &key.probe_id);
	if (!st || !spec)
		return 0;	/* reached without that call (a jump target), or not armed then */
	count(&hits, 2 * key.probe_id + 1);
	if (spec->action == ACT_EMIT)
		emit(EV_RETURN, key.probe_id, spec, st->args, PT_REGS_RC(ctx),
		     bpf_ktime_get_ns() - st->ts_ns);
	bpf_map_delete_elem(&calls, &key);
	return 0;
}

static __always_inline int on_return(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid() };
	const struct probe_spec *spec;
	struct call_state *st;
	struct cuda_counts *c;
	__u64 dur, ret = PT_REGS_RC(ctx);
	__u32 id;

	if (use_cookie) {
		id = bpf_get_attach_cookie(ctx);
		key.probe_id = id;
	} else {
		/* the return address the entry saw on top of its stack has been popped */
		key.sp = PT_REGS_SP(ctx) - 8;
		st = bpf_map_lookup_elem(&calls, &key);
		if (!st)
			return 0;
		id = st->probe_id;
	}
	spec = bpf_map_lookup_elem(&probe_specs, &id);
	if (spec && other_image(spec, tgid))
		return 0;
	count(&hits, 2 * id + 1);
	if (spec && (spec->flags & PROBE_F_NESTED)) {
		__u64 none[CIRRON_NARGS] = {};

		if (!use_cookie)
			bpf_map_delete_elem(&calls, &key);

		if (armed(tgid) && (!(spec->flags & PROBE_F_PY_CALL) || py_call_return()))
			emit(EV_RETURN, id, spec, none, ret, 0);
		return 0;
	}
	st = bpf_map_lookup_elem(&calls, &key);
	if (!spec || !st)
		return 0;
	dur = bpf_ktime_get_ns() - st->ts_ns;

	switch (spec->action) {
	case ACT_CUDA_MEMCPY:
	case ACT_CUDA_SYNC:
		c = cuda_counts_of(tgid);
		if (!c)
			break;
		if (spec->action == ACT_CUDA_SYNC) {
			__sync_fetch_and_add(&c->sync_calls, 1);
			__sync_fetch_and_add(&c->sync_ns, dur);
		} else {
			__sync_fetch_and_add(&c->memcpy_ns, dur);
		}
		break;
	case ACT_CUDA_DEVICE_COUNT:
		emit_device_count(id, st->args[0], ret);
		break;
	}
	if (spec->action == ACT_EMIT || (spec->flags & PROBE_F_DETAIL))
		emit(EV_RETURN, id, spec, st->args, ret, dur);
	bpf_map_delete_elem(&calls, &key);
	return 0;
}

/* One copy per attach type: perf uprobes (any kernel), and uprobe_multi links (Linux 6.6+,
 * the loader sets their attach type, which libbpf 1.1 cannot name, and loads them instead:
 * bpf_get_attach_cookie differs between the two). */
SEC("uprobe")
int handle_entry(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int handle_return(struct pt_regs *ctx)
{
	return on_return(ctx);
}

SEC("uprobe")
int handle_entry_multi(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int handle_return_multi(struct pt_regs *ctx)
{
	return on_return(ctx);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct target_info *t = bpf_map_lookup_elem(&targets, &ptgid);
	struct target_info ct;

	if (!t || ctgid == ptgid)
		return 0;	/* not traced, or a new thread */
	if (!(t->flags & TARGET_F_FOLLOW)) {
		/* watch: a fork of a traced process shares its image (a DataLoader worker): no
		 * job of its own unless it execs (on_exec drops the mark) */
		if (t->flags & TARGET_F_TRACED) {
			ct.flags = TARGET_F_IGNORED;
			ct.lost = 0;
			bpf_map_update_elem(&targets, &ctgid, &ct, BPF_NOEXIST);
		}
		return 0;
	}
	ct.flags = t->flags & (TARGET_F_FOLLOW | TARGET_F_STOP_ON_EXEC);
	ct.lost = 0;
	bpf_map_update_elem(&targets, &ctgid, &ct, BPF_ANY);
	emit_control(EV_FORK, ptgid, ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), one = 1, *n;
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t)
		return 0;
	if (t->flags & TARGET_F_IGNORED) {	/* a new image: watch looks at it afresh */
		bpf_map_delete_elem(&targets, &tgid);
		return 0;
	}
	n = bpf_map_lookup_elem(&images, &tgid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&images, &tgid, &one, BPF_NOEXIST);
	/* Held until the loader has attached to the new image; it sends SIGCONT. Stop
	 * before telling, so that the SIGCONT cannot overtake the SIGSTOP. */
	if (t->flags & TARGET_F_STOP_ON_EXEC)
		bpf_send_signal(SIGSTOP);
	emit_control(EV_EXEC, tgid, !!(t->flags & TARGET_F_STOP_ON_EXEC));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t)
		return 0;
	/* signal->live drops before this tracepoint: 0 means the last thread is leaving */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!(t->flags & TARGET_F_IGNORED)) {
		__u32 status = BPF_CORE_READ(p, exit_code);

		bpf_map_update_elem(&exits, &tgid, &status, BPF_ANY);
		emit_control(EV_EXIT, tgid, status);
	}
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

static long file_of_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct file_key *key = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (f) {
		key->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		key->ino = BPF_CORE_READ(f, f_inode, i_ino);
	}
	return 0;
}

/* watch (loaded only there): the first exec through each dynamic linker tells the loader,
 * which probes that ld.so's _dl_debug_state in every process (ACT_DL_WATCH). A new
 * process starts in its ld.so: the VMA of its first instruction names the file. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec_watch, struct task_struct *p)
{
	__u64 ip = PT_REGS_IP_CORE((struct pt_regs *)bpf_task_pt_regs(p));
	struct file_key key = {};
	__u8 one = 1;

	if (bpf_find_vma(p, ip, file_of_vma, &key, 0) || !key.ino ||
	    bpf_map_update_elem(&ldso_seen, &key, &one, BPF_NOEXIST))
		return 0;	/* no file (or a static binary's), or seen before */
	emit_control(EV_NEW_LDSO, BPF_CORE_READ(p, tgid), ip);
	return 0;
}

/* watch without attach cookies: the ld.so probe in every process has a program of its own.
 * It cannot tell which ld.so it is in, so the link map's state is left to the loader. */
SEC("uprobe")
int handle_dl_watch(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	if (t && (t->flags & (TARGET_F_TRACED | TARGET_F_IGNORED)))
		return 0;
	emit_control_flags(EV_WATCH_LOAD, tgid, 0, BPF_RB_NO_WAKEUP);
	return 0;
}

/* watch without bpf_find_vma (before 5.17): the first exec of each executable file tells the
 * loader, which finds that process's dynamic linker in /proc (EV_NEW_LDSO, args[0] = 0). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec_watch_exe, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct file_key key = {
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
	};
	__u8 one = 1;

	if (!key.ino || bpf_map_update_elem(&exe_seen, &key, &one, BPF_NOEXIST))
		return 0;
	emit_control(EV_NEW_LDSO, BPF_CORE_READ(p, tgid), 0);
	return 0;
}

/*
 * Marks (issue 18): the traced processes' writes to fds 1 and 2, one event per write with a
 * bounded copy. Two ways in, measured in bench/mark_cost.sh: the raw syscall-entry
 * tracepoint, filtered here to armed traced processes and the write syscall (the default:
 * the cheapest for the traced process, and no tracefs needed), and a uprobe on the C
 * library's write() attached per traced pid (--marks uprobe). No reservation: the copy is
 * built in a per-CPU buffer and sent with bpf_ringbuf_output, as long as it is.
 */
#define NR_WRITE_X86_64 1

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct write_event);
} write_buf SEC(".maps");

static __always_inline void emit_write(__u64 fd, __u64 buf, __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, n;
	struct write_event *w;

	if ((fd != 1 && fd != 2) || !armed(tgid))
		return;
	w = bpf_map_lookup_elem(&write_buf, &zero);
	if (!w)
		return;
	n = len < CIRRON_WRITE_COPY ? (__u32)len : CIRRON_WRITE_COPY;
	w->type = EV_WRITE;
	w->pid = tgid;
	w->tid = (__u32)id;
	w->fd = (__u32)fd;
	w->ts_ns = bpf_ktime_get_ns();
	w->len = len;
	w->pad = 0;
	if (n > CIRRON_WRITE_COPY)	/* for the verifier */
		return;
	if (bpf_probe_read_user(w->data, n, (const void *)buf))
		n = 0;
	w->copied = n;
	if (bpf_ringbuf_output(&events, w, offsetof(struct write_event, data) + n,
			       wakeup_flags()))
		count(&stats, STAT_WRITE_DROPS);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_write_tp, struct pt_regs *regs, long id)
{
	if (id != NR_WRITE_X86_64)
		return 0;
	emit_write(BPF_CORE_READ(regs, di), BPF_CORE_READ(regs, si), BPF_CORE_READ(regs, dx));
	return 0;
}

SEC("uprobe")
int on_write_uprobe(struct pt_regs *ctx)
{
	emit_write(PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx));
	return 0;
}
