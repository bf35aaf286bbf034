// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <elf.h>
#include <fcntl.h>
#include "probedefs/probe_set.h"
#include "unit.h"

static const struct probe_group *group(const struct probe_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->groups[i].name, name))
			return &s->groups[i];
	return NULL;
}

static const struct probe_def *probe(const struct probe_group *g, const char *symbol)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (!strcmp(g->probes[i].symbol, symbol))
			return &g->probes[i];
	return NULL;
}

/* probe_set__parse with its error messages (expected here) sent to /dev/null. */
static int parse_quiet(struct probe_set *s, const char *json)
{
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY), err;

	if (saved >= 0 && null >= 0)
		dup2(null, STDERR_FILENO);
	err = probe_set__parse(s, json, "test");
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (null >= 0)
		close(null);
	return err;
}

static void load_embedded(void)
{
	const struct probe_group *cudart, *ldso;
	const struct probe_def *p;
	struct probe_set s;

	if (!ASSERT_OK(probe_set__load_embedded(&s), "load_embedded"))
		return;
	ASSERT_GE(s.n, 2, "groups");
	/* every group and probe is complete */
	for (size_t i = 0; i < s.n; i++) {
		const struct probe_group *g = &s.groups[i];

		ASSERT_TRUE(g->name && *g->name, "group name");
		ASSERT_TRUE(g->match_defines && *g->match_defines, "match.defines");
		ASSERT_GT(g->n, 0, g->name);
		for (size_t j = 0; j < g->n; j++) {
			ASSERT_TRUE(g->probes[j].symbol && *g->probes[j].symbol, "symbol");
			ASSERT_TRUE(g->probes[j].action > ACT_NONE &&
				    g->probes[j].action < ACT__COUNT, g->probes[j].symbol);
			for (int a = 0; a < PROBE_ARCH__COUNT; a++)
				for (int k = 0; k < CIRRON_NARGS; k++)
					ASSERT_LT(g->probes[j].arg_src[a][k], ARG__COUNT,
						  "arg source");
			/* an offset or an instruction is one architecture's */
			if (g->probes[j].build_id)
				ASSERT_EQ(__builtin_popcount(g->probes[j].arches), 1,
					  g->probes[j].symbol);
			ASSERT_TRUE(g->probes[j].arches, g->probes[j].symbol);
		}
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(g->name, s.groups[j].name), "group names unique");
		/* C++ (mangled) functions may be left by an exception: a uretprobe's return
		 * address has no unwind info there, and the exception ends the job in
		 * std::terminate. Their exits are probed where they return to. */
		for (size_t j = 0; j < g->n; j++)
			if (!strncmp(g->probes[j].symbol, "_Z", 2))
				ASSERT_FALSE(g->probes[j].ret, g->probes[j].symbol);
	}

	cudart = group(&s, "cudart");
	if (ASSERT_OK_PTR(cudart, "cudart group")) {
		ASSERT_STREQ(cudart->match_defines, "cudaLaunchKernel", "cudart match");
		ASSERT_STREQ(cudart->file_hint, "cudart", "cudart file hint");
		p = probe(cudart, "cudaLaunchKernel");
		if (ASSERT_OK_PTR(p, "cudaLaunchKernel")) {
			ASSERT_EQ(p->action, ACT_CUDA_LAUNCH, "action");
			ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG0, "arg 0");
			ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][0], DEREF_NONE, "arg 0 deref");
			ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][1], ARG_NONE, "no arg 1");
			ASSERT_FALSE(p->optional, "required");
		}
		p = probe(cudart, "cudaMemcpy");
		if (ASSERT_OK_PTR(p, "cudaMemcpy")) {
			ASSERT_EQ(p->action, ACT_CUDA_MEMCPY, "action");
			ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG2, "bytes");
			ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][1], ARG_REG3, "kind");
			ASSERT_TRUE(p->ret, "return probe");
		}
		p = probe(cudart, "cudaLaunchKernel_ptsz");
		if (ASSERT_OK_PTR(p, "cudaLaunchKernel_ptsz"))
			ASSERT_TRUE(p->optional, "optional");
	}
	/* where the ABIs differ: record_function_enter_new returns an object, whose memory
	 * comes as argument 0 on x86-64 (RDI) and in X8 on aarch64, so the name moves */
	p = probe(group(&s, "libtorch"), "_ZN5torch8autograd8profiler25record_function_enter_new*");
	if (ASSERT_OK_PTR(p, "record_function_enter_new")) {
		ASSERT_EQ(p->arches, PROBE_ARCH_ALL, "every architecture");
		ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG1, "x86-64: RSI");
		ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][0], ARG_REG0, "aarch64: X0");
		ASSERT_EQ(p->arg_deref[PROBE_ARCH_AARCH64][0], DEREF_STDSTRING, "aarch64 deref");
	}
	p = probe(group(&s, "libtorch"), "record_function_enter (static, torch 1.13 Debian)");
	if (ASSERT_OK_PTR(p, "torch 1.13 record_function_enter")) {
		ASSERT_TRUE(probe_def__applies(p, PROBE_ARCH_X86_64), "an x86-64 build's offset");
		ASSERT_FALSE(probe_def__applies(p, PROBE_ARCH_AARCH64), "not aarch64's");
	}
	/* the CUDA runtime's probes read arguments that are in the same registers on both */
	for (size_t j = 0; cudart && j < cudart->n; j++)
		ASSERT_EQ(memcmp(cudart->probes[j].arg_src[PROBE_ARCH_X86_64],
				 cudart->probes[j].arg_src[PROBE_ARCH_AARCH64], CIRRON_NARGS), 0,
			  cudart->probes[j].symbol);
	ldso = group(&s, "ldso");
	if (ASSERT_OK_PTR(ldso, "ldso group")) {
		ASSERT_STREQ(ldso->match_defines, "_dl_debug_state", "ldso match");
		p = probe(ldso, "_dl_debug_state");
		if (ASSERT_OK_PTR(p, "_dl_debug_state")) {
			ASSERT_EQ(p->action, ACT_DL_STATE, "action");
			ASSERT_STREQ(p->aux_symbol, "_r_debug", "aux symbol");
			ASSERT_EQ(p->aux_offset, 24, "aux offset");
		}
	}
	/* every known CPython build, and every minor version from 3.11 on, says where module
	 * attributes live (3.10 lays instance dicts out differently: no object_layout); each
	 * minor version 3.10-3.13 has its entry */
	const struct probe_group *cpython = group(&s, "cpython");
	unsigned int versions = 0;

	if (ASSERT_OK_PTR(cpython, "cpython group"))
		for (size_t j = 0; j < cpython->n; j++) {
			const struct probe_def *d = &cpython->probes[j];

			if (d->meaning != MEAN_PY_CALL)
				continue;
			if (d->py_version) {
				ASSERT_TRUE(!d->build_id, "by version, not by build");
				versions |= 1u << (d->py_version >> 16 & 0xff);
			}
			if (d->py_version != 0x030a0000)
				ASSERT_TRUE(d->py_layout.known, "object_layout");
		}
	ASSERT_EQ(versions, (1u << 10) | (1u << 11) | (1u << 12) | (1u << 13), "3.10-3.13");
	probe_set__free(&s);
	ASSERT_EQ(s.n, 0, "freed");
	ASSERT_NULL(s.groups, "freed groups");
}

static void action_names(void)
{
	ASSERT_STREQ(probe_action__name(ACT_CUDA_LAUNCH), "cuda_launch", "cuda_launch");
	ASSERT_STREQ(probe_action__name(ACT_DL_STATE), "dl_state", "dl_state");
	ASSERT_STREQ(probe_action__name(ACT__COUNT), "?", "out of range");
	ASSERT_STREQ(probe_meaning__name(MEAN_BACKWARD), "backward", "backward");
	ASSERT_STREQ(probe_meaning__name(MEAN__COUNT), "?", "meaning out of range");
}

#define GROUP(probes) "{\"name\": \"g\", \"match\": {\"defines\": \"f\"}, \"probes\": [" probes "]}"
#define PROBE(args) "{\"symbol\": \"f\", \"action\": \"emit\", \"args\": [" args "]}"

static void rejects(void)
{
	static const struct {
		const char *what, *json;
	} bad[] = {
		{ "empty", "" },
		{ "not JSON", "name: g" },
		{ "truncated", "{\"name\": \"g\", \"match\": {\"defines\": \"f\"}, \"probes\": [" },
		{ "trailing garbage", GROUP(PROBE("\"reg0\"")) " x" },
		{ "two objects", GROUP(PROBE("\"reg0\"")) GROUP(PROBE("\"reg0\"")) },
		{ "not an object", "[1, 2]" },
		{ "missing name", "{\"match\": {\"defines\": \"f\"}, \"probes\": []}" },
		{ "name not a string", "{\"name\": 3, \"match\": {\"defines\": \"f\"}, "
				       "\"probes\": []}" },
		{ "missing match", "{\"name\": \"g\", \"probes\": []}" },
		{ "match without defines", "{\"name\": \"g\", \"match\": {}, \"probes\": []}" },
		{ "missing probes", "{\"name\": \"g\", \"match\": {\"defines\": \"f\"}}" },
		{ "probes not an array", "{\"name\": \"g\", \"match\": {\"defines\": \"f\"}, "
					 "\"probes\": {}}" },
		{ "probe without symbol", GROUP("{\"action\": \"emit\"}") },
		{ "probe without action", GROUP("{\"symbol\": \"f\"}") },
		{ "probe not an object", GROUP("\"f\"") },
		{ "unknown action", GROUP("{\"symbol\": \"f\", \"action\": \"explode\"}") },
		/* found by tests/fuzz/fuzz_probe_defs.c: converting these doubles was undefined */
		{ "layout field out of int64 range", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"object_layout\": {\"managed_dict\": 3.2e38}}") },
		{ "aux_offset negative", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					       "\"aux_offset\": -1}") },
		{ "aux_offset huge", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					   "\"aux_offset\": 1e300}") },
		{ "aux_offset not a number", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
						   "\"aux_offset\": \"24\"}") },
		{ "action none", GROUP("{\"symbol\": \"f\", \"action\": \"none\"}") },
		{ "action not a string", GROUP("{\"symbol\": \"f\", \"action\": 1}") },
		{ "return neither bool nor exits", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"return\": \"site\"}") },
		{ "return a number", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					   "\"return\": 1}") },
		{ "unknown meaning", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					   "\"meaning\": \"vibes\"}") },
		{ "reg9", GROUP(PROBE("\"reg9\"")) },
		{ "reg6", GROUP(PROBE("\"reg6\"")) },
		{ "reg10", GROUP(PROBE("\"reg10\"")) },
		{ "stack0", GROUP(PROBE("\"stack0\"")) },
		{ "stack5", GROUP(PROBE("\"stack5\"")) },
		{ "reg1:weird", GROUP(PROBE("\"reg1:weird\"")) },
		{ "reg1:", GROUP(PROBE("\"reg1:\"")) },
		{ "rax", GROUP(PROBE("\"rax\"")) },
		{ "arg not a string", GROUP(PROBE("0")) },
		{ "args not an array", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					     "\"args\": \"reg0\"}") },
		{ "5 args", GROUP(PROBE("\"reg0\", \"reg1\", \"reg2\", \"reg3\", \"reg4\"")) },
		{ "bad second probe", GROUP(PROBE("\"reg0\"") ", " PROBE("\"reg7\"")) },
		{ "arch unknown", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
				      "\"arch\": \"mips\"}") },
		{ "arch not a string", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
					   "\"arch\": 62}") },
		{ "arch a list", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
				     "\"arch\": [\"x86_64\"]}") },
		{ "build_id without arch", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
			"\"build_id\": \"ab\", \"offset\": \"0x10\"}") },
		{ "reg6 on x86_64", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
			"\"args\": {\"x86_64\": [\"reg6\"], \"aarch64\": [\"reg6\"]}}") },
		{ "reg8 on aarch64", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
			"\"args\": {\"x86_64\": [\"reg0\"], \"aarch64\": [\"reg8\"]}}") },
		{ "args for one architecture of two", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"args\": {\"aarch64\": [\"reg0\"]}}") },
		{ "args for an architecture arch leaves out", GROUP("{\"symbol\": \"f\", "
			"\"action\": \"emit\", \"arch\": \"x86_64\", \"args\": "
			"{\"x86_64\": [\"reg0\"], \"aarch64\": [\"reg0\"]}}") },
		{ "args for an unknown architecture", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"args\": {\"x86_64\": [\"reg0\"], \"aarch64\": [\"reg0\"], "
			"\"riscv64\": [\"reg0\"]}}") },
		{ "args by architecture not a list", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"args\": {\"x86_64\": \"reg0\", \"aarch64\": [\"reg0\"]}}") },
		{ "bad argument in one architecture", GROUP("{\"symbol\": \"f\", \"action\": "
			"\"emit\", \"args\": {\"x86_64\": [\"reg0\"], \"aarch64\": [\"x0\"]}}") },
		{ "object_layout missing fields", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
						      "\"object_layout\": {\"managed_dict\": -24}}") },
		{ "object_layout not numbers", GROUP("{\"symbol\": \"f\", \"action\": \"emit\", "
			"\"object_layout\": {\"managed_dict\": \"x\", \"ma_keys\": 32, "
			"\"ma_values\": 40, \"values_header\": 0, \"dk_log2_index_bytes\": 9, "
			"\"dk_nentries\": 24, \"dk_indices\": 32, \"ascii_data\": 48}}") },
	};
	struct probe_set s = {};

	/* one good group first: a rejected file must leave the set as it was */
	if (!ASSERT_OK(probe_set__parse(&s, GROUP(PROBE("\"reg0\"")), "good"), "good group"))
		return;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = s.n;

		ASSERT_EQ(parse_quiet(&s, bad[i].json), -EINVAL, bad[i].what);
		ASSERT_EQ(s.n, n, "set unchanged");
	}
	probe_set__free(&s);
}

static void accepts(void)
{
	const char *json =
		"{\"name\": \"demo\","
		" \"match\": {\"defines\": \"anchor\", \"file_hint\": \"demo\"},"
		" \"probes\": ["
		"  {\"symbol\": \"a\", \"action\": \"emit\","
		"   \"args\": [\"reg1:stdstring\", \"stack2\", \"ret\", \"reg0:cstring\"],"
		"   \"return\": true, \"meaning\": \"scope\"},"
		"  {\"symbol\": \"b*\", \"action\": \"cuda_sync\", \"optional\": true},"
		"  {\"symbol\": \"c\", \"action\": \"emit\", \"args\": [\"reg5\", \"stack1\","
		"   \"stack4\", \"retaddr\"], \"aux_symbol\": \"d\", \"aux_offset\": 16},"
		"  {\"symbol\": \"e\", \"action\": \"emit\", \"return\": \"exits\"}"
		" ]}\n";
	const struct probe_def *p;
	struct probe_set s = {};

	if (!ASSERT_OK(probe_set__parse(&s, json, "test"), "parse"))
		return;
	if (!ASSERT_EQ(s.n, 1, "one group") || !ASSERT_EQ(s.groups[0].n, 4, "four probes"))
		goto out;
	ASSERT_STREQ(s.groups[0].name, "demo", "name");
	ASSERT_STREQ(s.groups[0].match_defines, "anchor", "defines");
	ASSERT_STREQ(s.groups[0].file_hint, "demo", "file_hint");
	p = &s.groups[0].probes[0];
	ASSERT_STREQ(p->symbol, "a", "symbol");
	ASSERT_EQ(p->action, ACT_EMIT, "emit");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG1, "reg1:stdstring source");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][0], DEREF_STDSTRING, "reg1:stdstring deref");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][1], ARG_STACK2, "stack2");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][1], DEREF_NONE, "stack2 deref");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][2], ARG_RET, "ret");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][3], ARG_REG0, "reg0:cstring source");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_X86_64][3], DEREF_CSTRING, "reg0:cstring deref");
	ASSERT_TRUE(p->ret, "return");
	ASSERT_FALSE(p->optional, "not optional");
	ASSERT_EQ(p->meaning, MEAN_SCOPE, "meaning");
	ASSERT_NULL(p->aux_symbol, "no aux");
	p = &s.groups[0].probes[1];
	ASSERT_STREQ(p->symbol, "b*", "prefix symbol");
	ASSERT_EQ(p->action, ACT_CUDA_SYNC, "cuda_sync");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_NONE, "no args");
	ASSERT_TRUE(p->optional, "optional");
	ASSERT_FALSE(p->ret, "no return");
	ASSERT_EQ(p->meaning, MEAN_NONE, "no meaning");
	p = &s.groups[0].probes[2];
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG5, "reg5");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][1], ARG_STACK1, "stack1");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][2], ARG_STACK4, "stack4");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][3], ARG_RETADDR, "retaddr");
	ASSERT_STREQ(p->aux_symbol, "d", "aux symbol");
	ASSERT_EQ(p->aux_offset, 16, "aux offset");
	ASSERT_FALSE(p->exits, "no exit probes");
	p = &s.groups[0].probes[3];
	ASSERT_TRUE(p->exits, "exits at its own exit instructions");
	ASSERT_FALSE(p->ret, "no uretprobe");

	/* groups append */
	if (ASSERT_OK(probe_set__parse(&s, GROUP(PROBE("")), "second"), "second group")) {
		ASSERT_EQ(s.n, 2, "two groups");
		ASSERT_STREQ(s.groups[0].name, "demo", "first kept");
		ASSERT_STREQ(s.groups[1].name, "g", "second appended");
	}
out:
	probe_set__free(&s);
}

/* "arch" and per-architecture "args": what differs between the ABIs, e.g. cudaLaunchKernel's
 * sharedMem and stream (after two dim3 by value: stack slots on x86-64, x6 and x7 on aarch64). */
static void architectures(void)
{
	const char *json = GROUP(
		"{\"symbol\": \"launch\", \"action\": \"emit\", \"args\": "
		" {\"x86_64\": [\"reg0\", \"stack1\", \"stack2\"],"
		"  \"aarch64\": [\"reg0\", \"reg6\", \"reg7\", \"stack1\"]}},"
		"{\"symbol\": \"x86 only\", \"action\": \"emit\", \"arch\": \"x86_64\", "
		" \"build_id\": \"ab\", \"offset\": \"0x10\", \"args\": [\"reg5\"]},"
		"{\"symbol\": \"arm only\", \"action\": \"emit\", \"arch\": \"aarch64\", "
		" \"args\": {\"aarch64\": [\"reg7:cstring\"]}},"
		"{\"symbol\": \"both\", \"action\": \"emit\", \"args\": [\"reg2\"]}");
	const struct probe_def *p;
	struct probe_set s = {};

	ASSERT_EQ(probe_arch__of_machine(EM_X86_64), PROBE_ARCH_X86_64, "EM_X86_64");
	ASSERT_EQ(probe_arch__of_machine(EM_AARCH64), PROBE_ARCH_AARCH64, "EM_AARCH64");
	ASSERT_EQ(probe_arch__of_machine(EM_386), -1, "EM_386: not probed");
	ASSERT_EQ(probe_arch__of_machine(EM_RISCV), -1, "EM_RISCV: not probed");
	ASSERT_STREQ(probe_arch__name(PROBE_ARCH_AARCH64), "aarch64", "aarch64 name");
	ASSERT_STREQ(probe_arch__name(-1), "?", "no name");
#if defined(__x86_64__)
	ASSERT_EQ(probe_arch__own(), PROBE_ARCH_X86_64, "built for x86-64");
#elif defined(__aarch64__)
	ASSERT_EQ(probe_arch__own(), PROBE_ARCH_AARCH64, "built for aarch64");
#endif
	if (!ASSERT_OK(probe_set__parse(&s, json, "test"), "parse") ||
	    !ASSERT_EQ(s.groups[0].n, 4, "four probes"))
		goto out;
	p = &s.groups[0].probes[0];
	ASSERT_EQ(p->arches, PROBE_ARCH_ALL, "launch: both");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG0, "x86 func");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][1], ARG_STACK1, "x86 sharedMem");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][2], ARG_STACK2, "x86 stream");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][3], ARG_NONE, "x86: three");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][0], ARG_REG0, "arm func");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][1], ARG_REG6, "arm sharedMem: x6");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][2], ARG_REG7, "arm stream: x7");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][3], ARG_STACK1, "arm stack1");
	p = &s.groups[0].probes[1];
	ASSERT_TRUE(probe_def__applies(p, PROBE_ARCH_X86_64), "x86 only: x86");
	ASSERT_FALSE(probe_def__applies(p, PROBE_ARCH_AARCH64), "x86 only: not arm");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_REG5, "x86 only: reg5");
	p = &s.groups[0].probes[2];
	ASSERT_FALSE(probe_def__applies(p, PROBE_ARCH_X86_64), "arm only: not x86");
	ASSERT_TRUE(probe_def__applies(p, PROBE_ARCH_AARCH64), "arm only: arm");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_AARCH64][0], ARG_REG7, "arm only: x7");
	ASSERT_EQ(p->arg_deref[PROBE_ARCH_AARCH64][0], DEREF_CSTRING, "arm only: cstring");
	ASSERT_EQ(p->arg_src[PROBE_ARCH_X86_64][0], ARG_NONE, "arm only: nothing for x86");
	p = &s.groups[0].probes[3];
	ASSERT_FALSE(probe_def__applies(p, -1), "no architecture");
	ASSERT_FALSE(probe_def__applies(p, PROBE_ARCH__COUNT), "out of range");
	for (int a = 0; a < PROBE_ARCH__COUNT; a++) {
		ASSERT_TRUE(probe_def__applies(p, a), "both: applies");
		ASSERT_EQ(p->arg_src[a][0], ARG_REG2, "both: the same register");
	}
out:
	probe_set__free(&s);
}

int main(void)
{
	RUN_TEST(load_embedded);
	RUN_TEST(action_names);
	RUN_TEST(rejects);
	RUN_TEST(accepts);
	RUN_TEST(architectures);
	return unit__done();
}
