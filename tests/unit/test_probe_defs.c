// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <fcntl.h>
#include "target/probe_defs.h"
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
			for (int k = 0; k < CIRRON_NARGS; k++)
				ASSERT_LE(g->probes[j].arg_src[k], ARG_RETADDR, "arg source");
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
			ASSERT_EQ(p->arg_src[0], ARG_REG0, "arg 0");
			ASSERT_EQ(p->arg_deref[0], DEREF_NONE, "arg 0 deref");
			ASSERT_EQ(p->arg_src[1], ARG_NONE, "no arg 1");
			ASSERT_FALSE(p->optional, "required");
		}
		p = probe(cudart, "cudaMemcpy");
		if (ASSERT_OK_PTR(p, "cudaMemcpy")) {
			ASSERT_EQ(p->action, ACT_CUDA_MEMCPY, "action");
			ASSERT_EQ(p->arg_src[0], ARG_REG2, "bytes");
			ASSERT_EQ(p->arg_src[1], ARG_REG3, "kind");
			ASSERT_TRUE(p->ret, "return probe");
		}
		p = probe(cudart, "cudaLaunchKernel_ptsz");
		if (ASSERT_OK_PTR(p, "cudaLaunchKernel_ptsz"))
			ASSERT_TRUE(p->optional, "optional");
	}
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
	ASSERT_EQ(p->arg_src[0], ARG_REG1, "reg1:stdstring source");
	ASSERT_EQ(p->arg_deref[0], DEREF_STDSTRING, "reg1:stdstring deref");
	ASSERT_EQ(p->arg_src[1], ARG_STACK2, "stack2");
	ASSERT_EQ(p->arg_deref[1], DEREF_NONE, "stack2 deref");
	ASSERT_EQ(p->arg_src[2], ARG_RET, "ret");
	ASSERT_EQ(p->arg_src[3], ARG_REG0, "reg0:cstring source");
	ASSERT_EQ(p->arg_deref[3], DEREF_CSTRING, "reg0:cstring deref");
	ASSERT_TRUE(p->ret, "return");
	ASSERT_FALSE(p->optional, "not optional");
	ASSERT_EQ(p->meaning, MEAN_SCOPE, "meaning");
	ASSERT_NULL(p->aux_symbol, "no aux");
	p = &s.groups[0].probes[1];
	ASSERT_STREQ(p->symbol, "b*", "prefix symbol");
	ASSERT_EQ(p->action, ACT_CUDA_SYNC, "cuda_sync");
	ASSERT_EQ(p->arg_src[0], ARG_NONE, "no args");
	ASSERT_TRUE(p->optional, "optional");
	ASSERT_FALSE(p->ret, "no return");
	ASSERT_EQ(p->meaning, MEAN_NONE, "no meaning");
	p = &s.groups[0].probes[2];
	ASSERT_EQ(p->arg_src[0], ARG_REG5, "reg5");
	ASSERT_EQ(p->arg_src[1], ARG_STACK1, "stack1");
	ASSERT_EQ(p->arg_src[2], ARG_STACK4, "stack4");
	ASSERT_EQ(p->arg_src[3], ARG_RETADDR, "retaddr");
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

int main(void)
{
	RUN_TEST(load_embedded);
	RUN_TEST(action_names);
	RUN_TEST(rejects);
	RUN_TEST(accepts);
	return unit__done();
}
