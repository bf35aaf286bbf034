// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// watch: which files and processes the node agent wants, the /proc scan at start, the
// session id a process traced again into the same spool gets, and the one of an exec'd image.
#include <limits.h>
#include "sink/spool.h"
#include "agent/watch.h"
#include "tree/session.h"
#include "unit.h"

static struct probe_set probes;

static void hints_come_from_probes(void)
{
	struct watch w;

	if (!ASSERT_OK(watch__init(&w, &probes, NULL), "watch__init"))
		return;
	ASSERT_TRUE(watch__file_wanted(&w, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"),
		    "libtorch_cpu");
	ASSERT_TRUE(watch__file_wanted(&w, "/opt/venv/nvidia/cuda_runtime/lib/libcudart.so.12"),
		    "libcudart");
	ASSERT_TRUE(watch__file_wanted(&w, "libc10.so"), "no directory");
	/* CPython and ld.so only assist: every process maps them */
	ASSERT_FALSE(watch__file_wanted(&w, "/usr/bin/python3.11"), "python");
	ASSERT_FALSE(watch__file_wanted(&w, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
		     "ld.so");
	/* the name counts, not the directory */
	ASSERT_FALSE(watch__file_wanted(&w, "/opt/libtorch_cpu/lib/libm.so.6"), "directory");
	ASSERT_STREQ(w.ldso_hint, "ld-linux", "ld.so hint");
	ASSERT_TRUE(watch__is_ldso(&w, &(struct proc_map){ .exec = true,
			.path = "/lib64/ld-linux-x86-64.so.2" }), "ld.so mapping");
	ASSERT_FALSE(watch__is_ldso(&w, &(struct proc_map){ .exec = false,
			.path = "/lib64/ld-linux-x86-64.so.2" }), "not executable");
	watch__free(&w);
}

static void match_on_command_line(void)
{
	struct watch w;

	/* this process's command line is ".../test_watch" */
	if (ASSERT_OK(watch__init(&w, &probes, "test_wat(ch|ed)$"), "init matching")) {
		ASSERT_TRUE(watch__process_wanted(&w, getpid()), "self matches");
		ASSERT_FALSE(watch__process_wanted(&w, 0x3fffffff), "no such process");
		watch__free(&w);
	}
	if (ASSERT_OK(watch__init(&w, &probes, "^torchrun "), "init other")) {
		ASSERT_FALSE(watch__process_wanted(&w, getpid()), "self does not match");
		watch__free(&w);
	}
	ASSERT_EQ(watch__init(&w, &probes, "(unclosed"), -EINVAL, "bad regex");
}

struct seen {
	int processes, ldsos, self_ldso;
};

static void on_process(void *ctx, int pid)
{
	((struct seen *)ctx)->processes += pid == getpid() ? 1000 : 1;
}

static void on_ldso(void *ctx, int pid, const struct proc_map *m)
{
	struct seen *s = ctx;

	s->ldsos++;
	s->self_ldso += pid == getpid() && strstr(m->path, "ld-linux") != NULL;
}

static void scan_finds_linkers_not_self(void)
{
	struct seen s = {};
	struct watch_scan_ops ops = { .on_process = on_process, .on_ldso = on_ldso, .ctx = &s };
	struct watch w;
	int n;

	if (!ASSERT_OK(watch__init(&w, &probes, NULL), "watch__init"))
		return;
	n = watch__scan(&w, getpid(), &ops);
	ASSERT_GE(n, 0, "scan");
	ASSERT_EQ(s.processes, n, "on_process per wanted process, never self");
	ASSERT_EQ(s.self_ldso, 1, "own ld.so seen once");
	ASSERT_GE(s.ldsos, 1, "ld.so mappings");
	watch__free(&w);
}

static void write_batch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/spool/%s", dir, name);
	f = fopen(path, "w");
	if (ASSERT_OK_PTR(f, path))
		fclose(f);
}

static void observation_numbers(void)
{
	struct session_ids ids = { .pid = 42, .start_ticks = 777, .host = "node-1.example" };
	char tmp[PATH_MAX], id[160];
	struct spool sp;

	session__format_id(&ids, id, sizeof(id));
	ASSERT_STREQ(id, "node-1.example-42-777", "first observation: plain id");
	ids.observation = 3;
	session__format_id(&ids, id, sizeof(id));
	ASSERT_STREQ(id, "node-1.example-42-777.3", "third");
	if (!unit__mkdtemp(tmp, sizeof(tmp)) || !ASSERT_OK(spool__open(&sp, tmp, 0), "open"))
		return;
	ASSERT_EQ(spool__sessions_like(&sp, "node-1.example-42-777"), 0, "empty spool");
	write_batch(tmp, "node-1.example-42-777.00000000.json");
	write_batch(tmp, "node-1.example-42-7770.00000000.json");	/* another process */
	write_batch(tmp, "node-1.example-42-777.x.00000000.json");	/* not ours */
	ASSERT_EQ(spool__sessions_like(&sp, "node-1.example-42-777"), 1, "one before");
	write_batch(tmp, "node-1.example-42-777.2.00000003.json");
	write_batch(tmp, "node-1.example-42-777.12.00000000.json");
	ASSERT_EQ(spool__sessions_like(&sp, "node-1.example-42-777"), 12, "highest number");
	ASSERT_EQ(spool__sessions_like(&sp, "node-1.example-42-77"), 0, "a prefix is no match");
	spool__close(&sp);
	unit__rm_rf(tmp);
}

/* A traced process exec'd: its new image, found later, gets the id ticks noted for it;
 * a different process with that pid (start time) does not; each is taken once. */
static void exec_ticks_noted_once(void)
{
	struct watch w = {};

	watch__note_exec(&w, 100, 5000, 7000);
	watch__note_exec(&w, 200, 6000, 7100);
	watch__note_exec(&w, 100, 5000, 7200);	/* exec'd again before it was found */
	ASSERT_EQ(watch__take_exec(&w, 100, 5000), 7200, "the newest exec of pid 100");
	ASSERT_EQ(watch__take_exec(&w, 100, 5000), 0, "taken once");
	ASSERT_EQ(watch__take_exec(&w, 200, 6001), 0, "pid 200 reused by another process");
	ASSERT_EQ(watch__take_exec(&w, 200, 6000), 0, "forgotten by the look above");
	/* the ring keeps the newest WATCH_EXECS */
	for (int i = 0; i < WATCH_EXECS + 1; i++)
		watch__note_exec(&w, 1000 + i, 1, 10 + i);
	ASSERT_EQ(watch__take_exec(&w, 1000, 1), 0, "the oldest went");
	ASSERT_EQ(watch__take_exec(&w, 1000 + WATCH_EXECS, 1), 10 + WATCH_EXECS, "the newest");
}

int main(void)
{
	if (!ASSERT_OK(probe_set__load_embedded(&probes), "load_embedded"))
		return unit__done();
	RUN_TEST(hints_come_from_probes);
	RUN_TEST(match_on_command_line);
	RUN_TEST(scan_finds_linkers_not_self);
	RUN_TEST(observation_numbers);
	RUN_TEST(exec_ticks_noted_once);
	probe_set__free(&probes);
	return unit__done();
}
