// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <limits.h>
#include <sys/stat.h>
#include "common/fsutil.h"
#include "proc/gpus.h"
#include "unit.h"

/* A /proc and a /proc/driver/nvidia of our own: pid 42 holds /dev/nvidiactl, GPUs 3 and 1
 * (twice), a file that only looks like one, and a socket; the driver knows GPUs 1 and 3. */
static void make_tree(const char *root, bool environ_set)
{
	static const char *const links[][2] = {
		{ "3", "/dev/nvidiactl" }, { "4", "/dev/nvidia3" }, { "5", "/dev/nvidia1" },
		{ "6", "/dev/nvidia1" }, { "7", "/dev/nvidia-uvm" }, { "8", "/dev/nvidia2x" },
		{ "9", "socket:[1234]" },
	};
	static const char info1[] = "Model: \t\t NVIDIA H200\nIRQ:   \t\t 41\n"
		"GPU UUID: \t GPU-1966a272-b6b0-03ef-ea5d-c13e503cacb9\n"
		"Bus Location: \t 0000:00:06.0\nDevice Minor: \t 1\n";
	static const char info3[] = "Model: \t\t NVIDIA H100 80GB HBM3\n"
		"GPU UUID: \t GPU-00000000-1111-2222-3333-444444444444\nDevice Minor: \t 3\n";
	static const char env[] = "PATH=/bin\0CUDA_VISIBLE_DEVICES=1,3\0RANK=0\0";
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/proc/42/fd", root);
	fs__mkdir_p(p, 0755);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s/proc/42/fd/%s", root, links[i][0]);
		ASSERT_OK(symlink(links[i][1], p), "symlink");
	}
	snprintf(p, sizeof(p), "%s/proc/42/environ", root);
	ASSERT_OK(unit__write_file(p, env, environ_set ? sizeof(env) - 1 : 0), "environ");
	snprintf(p, sizeof(p), "%s/nvidia/gpus/0000:00:06.0", root);
	fs__mkdir_p(p, 0755);
	snprintf(p, sizeof(p), "%s/nvidia/gpus/0000:00:06.0/information", root);
	ASSERT_OK(unit__write_file(p, info1, sizeof(info1) - 1), "information 1");
	snprintf(p, sizeof(p), "%s/nvidia/gpus/0000:00:07.0", root);
	fs__mkdir_p(p, 0755);
	snprintf(p, sizeof(p), "%s/nvidia/gpus/0000:00:07.0/information", root);
	ASSERT_OK(unit__write_file(p, info3, sizeof(info3) - 1), "information 3");
}

/* The tree in a new directory (root), read for pid 42; false if that failed. */
static bool read_tree(char *root, size_t size, bool environ_set, struct gpus *g)
{
	char proc[PATH_MAX + 8], drv[PATH_MAX + 8];

	if (!unit__mkdtemp(root, size))
		return false;
	make_tree(root, environ_set);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(drv, sizeof(drv), "%s/nvidia", root);
	if (!ASSERT_OK(gpus__of_pid(proc, 42, drv, g), "gpus__of_pid"))
		return false;
	/* a pid that is not there; no driver directory (GPUs counted, not described) */
	ASSERT_EQ(gpus__of_pid(proc, 43, drv, &(struct gpus){}), -ENOENT, "no such pid");
	return true;
}

static void gpus_held_open(void)
{
	char root[PATH_MAX], proc[PATH_MAX + 8];
	struct gpus g;

	if (!read_tree(root, sizeof(root), true, &g))
		goto out;
	ASSERT_TRUE(g.ctl, "nvidiactl");
	if (!ASSERT_EQ(g.n, 2, "GPUs open (uvm, lookalikes and a second fd not counted)"))
		goto out;
	ASSERT_EQ(g.g[0].minor, 1, "minor order");
	ASSERT_STREQ(g.g[0].model, "NVIDIA H200", "model");
	ASSERT_STREQ(g.g[0].uuid, "GPU-1966a272-b6b0-03ef-ea5d-c13e503cacb9", "uuid");
	ASSERT_STREQ(g.g[0].bus, "0000:00:06.0", "bus");
	ASSERT_EQ(g.g[1].minor, 3, "second");
	ASSERT_STREQ(g.g[1].model, "NVIDIA H100 80GB HBM3", "model with spaces");
	ASSERT_STREQ(g.g[1].bus, "0000:00:07.0", "bus from the directory's name");
	ASSERT_TRUE(g.visible_set, "CUDA_VISIBLE_DEVICES set");
	ASSERT_STREQ(g.visible, "1,3", "CUDA_VISIBLE_DEVICES");
	snprintf(proc, sizeof(proc), "%s/proc", root);
	ASSERT_OK(gpus__of_pid(proc, 42, "/nonexistent", &g), "no driver dir");
	ASSERT_EQ(g.n, 2, "counted");
	ASSERT_STREQ(g.g[0].model, "", "not described");
out:
	unit__rm_rf(root);
}

static void no_visible_devices(void)
{
	char root[PATH_MAX];
	struct gpus g;

	if (read_tree(root, sizeof(root), false, &g))
		ASSERT_FALSE(g.visible_set, "unset");
	unit__rm_rf(root);
}

int main(void)
{
	RUN_TEST(gpus_held_open);
	RUN_TEST(no_visible_devices);
	return unit__done();
}
