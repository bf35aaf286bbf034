// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A tensor argument's dimensions read in BPF (issue 44): the ":tensor_last_dim" argument of
// probes/, the embedding probe that tells a prefill from a decode step, and where a libtorch
// file keeps a tensor's sizes (traced/tensor_dims.h), by the version its files name.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probedefs/probe_set.h"
#include "traced/tensor_dims.h"
#include "unit.h"

static void parses_tensor_argument(void)
{
	const char *json =
		"{\"name\": \"demo\", \"match\": {\"defines\": \"anchor\"}, \"probes\": ["
		" {\"symbol\": \"emb\", \"action\": \"emit\", \"meaning\": \"token_ids\","
		"  \"args\": {\"x86_64\": [\"reg2:tensor_last_dim\"], \"aarch64\": [\"reg1:tensor_last_dim\"]}},"
		" {\"symbol\": \"bad\", \"action\": \"emit\", \"args\": [\"reg2:tensor\"]}]}\n";
	const char *good = "{\"name\": \"demo\", \"match\": {\"defines\": \"anchor\"}, \"probes\": ["
			   " {\"symbol\": \"emb\", \"action\": \"emit\", \"meaning\": \"token_ids\","
			   "  \"args\": {\"x86_64\": [\"reg2:tensor_last_dim\"], "
			   "\"aarch64\": [\"reg1:tensor_last_dim\"]}}]}\n";
	const struct probe_def *p;
	struct probe_set s = {};

	ASSERT_NEQ(probe_set__parse(&s, json, "test"), 0, "an unknown deref is an error");
	probe_set__free(&s);
	memset(&s, 0, sizeof(s));
	if (!ASSERT_OK(probe_set__parse(&s, good, "test"), "parse"))
		return;
	p = &s.groups[0].probes[0];
	ASSERT_EQ(p->meaning, MEAN_TOKEN_IDS, "token_ids");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG2, "x86-64: after the result and weight");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][0], DEREF_TENSOR_LAST_DIM, "x86-64 deref");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][0], ARG_REG1, "aarch64: after the weight");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_AARCH64][0], DEREF_TENSOR_LAST_DIM, "aarch64 deref");
	probe_set__free(&s);
}

/* The built-in libtorch group probes at::embedding for the token ids. */
static void embedding_probe_built_in(void)
{
	struct probe_set s;
	int found = 0;

	if (!ASSERT_OK(probe_set__load_embedded(&s), "load_embedded"))
		return;
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = 0; j < s.groups[i].n; j++) {
			const struct probe_def *p = &s.groups[i].probes[j];

			if (p->meaning != MEAN_TOKEN_IDS)
				continue;
			found++;
			ASSERT_STREQ(s.groups[i].name, "libtorch", "in libtorch_cpu");
			ASSERT_TRUE(p->optional, "optional");
			ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][0], DEREF_TENSOR_LAST_DIM, "deref");
		}
	ASSERT_EQ(found, 1, "one token_ids probe");
	probe_set__free(&s);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A pip or bookworm layout (torch/lib/libtorch_cpu.so beside torch/version.py), or a Debian
 * trixie file name (libtorch_cpu.so.2.6): the table's offset, or 0 for a build it lacks. */
static void sizes_offset_by_version(void)
{
	static const struct { const char *version; uint64_t offset; } cases[] = {
		{ "1.13.0a0", 72 }, { "2.6.0+debian", 64 }, { "2.13.0+cpu", 56 },
		{ "99.0.0", 0 },
	};
	char dir[] = "/tmp/cirron-tensor-dims-XXXXXX", path[256], lib[256];

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/torch", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/torch/lib", dir);
	mkdir(path, 0700);
	snprintf(lib, sizeof(lib), "%s/torch/lib/libtorch_cpu.so", dir);
	write_file(lib, "");
	snprintf(path, sizeof(path), "%s/torch/version.py", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "__version__ = '%s'\ndebug = False\n", cases[i].version);
		write_file(path, text);
		ASSERT_EQ(tensor_dims__sizes_offset(lib), cases[i].offset, cases[i].version);
	}
	unlink(path);
	ASSERT_EQ(tensor_dims__sizes_offset(lib), 0, "no version: not read");
	unlink(lib);
	ASSERT_EQ(tensor_dims__sizes_offset("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.2.6"), 64,
		  "Debian's file name");
	snprintf(path, sizeof(path), "%s/torch/lib", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/torch", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	RUN_TEST(parses_tensor_argument);
	RUN_TEST(embedding_probe_built_in);
	RUN_TEST(sizes_offset_by_version);
	return unit__done();
}
