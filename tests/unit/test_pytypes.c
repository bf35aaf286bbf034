// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// py_types__classify reads a class chain with process_vm_readv; here the "target" is this
// process, holding objects laid out like CPython's (ob_type +8, tp_name +24, tp_base +256).
#include <stddef.h>
#include <unistd.h>
#include "pyobj/pytypes.h"
#include "unit.h"

struct fake_type {
	char head[24];
	const char *tp_name;		/* +24 */
	char middle[256 - 32];
	struct fake_type *tp_base;	/* +256 */
};

struct fake_object {
	long refcnt;
	struct fake_type *ob_type;	/* +8 */
};

_Static_assert(offsetof(struct fake_type, tp_name) == 24, "tp_name");
_Static_assert(offsetof(struct fake_type, tp_base) == 256, "tp_base");

static struct fake_type object_t = { .tp_name = "object" };
static struct fake_type module_t = { .tp_name = "Module", .tp_base = &object_t };
static struct fake_type seq_t = { .tp_name = "Sequential", .tp_base = &module_t };
static struct fake_type mynet_t = { .tp_name = "MyNet", .tp_base = &seq_t };
static struct fake_type loss_t = { .tp_name = "_Loss", .tp_base = &module_t };
static struct fake_type wloss_t = { .tp_name = "_WeightedLoss", .tp_base = &loss_t };
static struct fake_type ce_t = { .tp_name = "CrossEntropyLoss", .tp_base = &wloss_t };
static struct fake_type packet_t = { .tp_name = "OpOverloadPacket", .tp_base = &object_t };

static void classifies_by_class_chain(void)
{
	static struct py_types c;
	struct fake_object net = { 1, &mynet_t }, net2 = { 1, &mynet_t };
	struct fake_object ce = { 1, &ce_t }, packet = { 1, &packet_t };
	const struct py_type *t;

	t = py_types__classify(&c, getpid(), (uint64_t)(uintptr_t)&net);
	if (ASSERT_OK_PTR(t, "net")) {
		ASSERT_EQ(t->kind, PYK_MODULE, "a Module subclass two levels down");
		ASSERT_STREQ(t->name, "MyNet", "class name");
	}
	ASSERT_EQ(py_types__classify(&c, getpid(), (uint64_t)(uintptr_t)&net2), t, "cached by type");
	t = py_types__classify(&c, getpid(), (uint64_t)(uintptr_t)&ce);
	if (ASSERT_OK_PTR(t, "loss"))
		ASSERT_EQ(t->kind, PYK_LOSS, "a loss is a Module but not the forward");
	t = py_types__classify(&c, getpid(), (uint64_t)(uintptr_t)&packet);
	if (ASSERT_OK_PTR(t, "packet"))
		ASSERT_EQ(t->kind, PYK_OTHER, "not a Module");
	ASSERT_EQ(c.n, 3, "three classes read");
}

static void unreadable_is_null(void)
{
	static struct py_types c;

	ASSERT_NULL(py_types__classify(&c, getpid(), 0), "NULL object");
	ASSERT_NULL(py_types__classify(&c, getpid(), 8), "unmapped address");
	ASSERT_EQ(c.n, 0, "nothing cached");
}

/* A module instance as CPython 3.13 lays it out (the layout probes/cpython.json gives):
 * managed __dict__ at obj-24, split dict (ma_keys +32, ma_values +40), keys with 8 index
 * bytes then {key, value} entries, values after an 8-byte header, ASCII str data at +40. */
static const struct py_layout layout313 = {
	.known = true, .managed_dict = -24, .ma_keys = 32, .ma_values = 40, .values_header = 8,
	.dk_log2_index_bytes = 9, .dk_nentries = 24, .dk_indices = 32, .ascii_data = 40,
};

struct fake_str {
	char head[40];
	char data[16];
};

struct fake_keys {
	char head[9];
	unsigned char log2_index_bytes;	/* +9 */
	char pad[14];
	long nentries;			/* +24 */
	char indices[8];		/* +32, 1 << 3 bytes */
	struct { struct fake_str *key; void *value; } entries[3];
};

struct fake_dict {
	char head[32];
	struct fake_keys *keys;		/* +32 */
	void **values;			/* +40 */
};

struct fake_bool {
	long refcnt;
	struct fake_type *ob_type;
	long tag;
	unsigned int digit;		/* +24 */
};

static struct fake_type bool_t = { .tp_name = "bool", .tp_base = &object_t };

static void finds_training_in_a_split_dict(void)
{
	static struct py_types c;
	static struct fake_str k_params = { .data = "_parameters" }, k_training = { .data = "training" };
	static struct fake_keys keys = { .log2_index_bytes = 3, .nentries = 2,
		.entries = { { &k_params, NULL }, { &k_training, NULL } } };
	static struct fake_bool py_true = { 1, &bool_t, 0, 1 }, py_false = { 1, &bool_t, 0, 0 };
	static void *values[1 + 2] = { NULL, NULL, &py_true };	/* 8-byte header first */
	static struct fake_dict dict = { .keys = &keys, .values = values };
	static struct { struct fake_dict *dict; long pad[2]; struct fake_object o; } inst = {
		.dict = &dict, .o = { 1, &seq_t } };
	uint64_t obj = (uint64_t)(uintptr_t)&inst.o, p = obj;
	struct py_type *t;

	_Static_assert(offsetof(struct fake_keys, entries) == 32 + 8, "entries after indices");
	ASSERT_EQ((long)(obj - (uint64_t)(uintptr_t)&inst.dict), 24L, "dict at obj-24");
	t = py_types__classify(&c, getpid(), obj);
	if (!ASSERT_OK_PTR(t, "classify"))
		return;
	py_types__find_training(t, getpid(), obj, &layout313);
	ASSERT_EQ(t->nderef, 3, "dict -> values -> values[1]");
	/* what BPF does with the chain */
	for (int i = 0; i < t->nderef; i++)
		p = *(uint64_t *)(uintptr_t)(p + (uint64_t)(int64_t)t->chain[i]);
	ASSERT_EQ(p, (uint64_t)(uintptr_t)&py_true, "the chain ends at training's value");
	ASSERT_EQ(py_types__read_bool(getpid(), p), 1, "True");
	ASSERT_EQ(py_types__read_bool(getpid(), (uint64_t)(uintptr_t)&py_false), 0, "False");
	ASSERT_EQ(py_types__read_bool(getpid(), obj), -1, "a module is not a bool");

	struct py_layout unknown = layout313;

	unknown.known = false;
	py_types__find_training(t, getpid(), obj, &unknown);
	ASSERT_EQ(t->nderef, 0, "no layout, no chain");
}

struct fake_keys_general {
	char head[9];
	unsigned char log2_index_bytes;	/* +9 */
	unsigned char kind;		/* +10: 0 DICT_KEYS_GENERAL */
	char pad[13];
	long nentries;			/* +24 */
	char indices[16];		/* +32, 1 << 4 bytes */
	struct { long hash; struct fake_str *key; void *value; } entries[2];
};

/* HF and Lightning models have more attributes than a split dict shares: their __dict__ is
 * combined, the values sit in the keys object's entries ({key, value}, or {hash, key, value}
 * for a general dict). */
static void finds_training_in_a_combined_dict(void)
{
	static struct py_types c;
	static struct fake_str k_params = { .data = "_parameters" }, k_training = { .data = "training" };
	static struct fake_bool py_false = { 1, &bool_t, 0, 0 };
	static struct fake_keys keys = { .log2_index_bytes = 3, .nentries = 2,
		.entries = { { &k_params, NULL }, { &k_training, &py_false } } };
	static struct fake_keys_general gkeys = { .log2_index_bytes = 4, .kind = 0, .nentries = 2,
		.entries = { { 1, &k_training, &py_false }, { 2, &k_params, NULL } } };
	static struct fake_dict dict = { .keys = &keys, .values = NULL };
	static struct { struct fake_dict *dict; long pad[2]; struct fake_object o; } inst = {
		.dict = &dict, .o = { 1, &seq_t } };
	uint64_t obj = (uint64_t)(uintptr_t)&inst.o, p = obj;
	struct py_type *t;

	keys.pad[0] = 1;	/* +10, dk_kind: DICT_KEYS_UNICODE */
	t = py_types__classify(&c, getpid(), obj);
	if (!ASSERT_OK_PTR(t, "classify"))
		return;
	py_types__find_training(t, getpid(), obj, &layout313);
	ASSERT_EQ(t->nderef, 3, "dict -> keys -> entries[1].value");
	for (int i = 0; i < t->nderef; i++)
		p = *(uint64_t *)(uintptr_t)(p + (uint64_t)(int64_t)t->chain[i]);
	ASSERT_EQ(p, (uint64_t)(uintptr_t)&py_false, "unicode entries: training's value");

	dict.keys = (struct fake_keys *)&gkeys;
	p = obj;
	py_types__find_training(t, getpid(), obj, &layout313);
	ASSERT_EQ(t->nderef, 3, "general dict");
	for (int i = 0; i < t->nderef; i++)
		p = *(uint64_t *)(uintptr_t)(p + (uint64_t)(int64_t)t->chain[i]);
	ASSERT_EQ(p, (uint64_t)(uintptr_t)&py_false, "general entries: training's value");

	k_training.data[0] = 'x';	/* no `training` key */
	py_types__find_training(t, getpid(), obj, &layout313);
	ASSERT_EQ(t->nderef, 0, "not found");
	k_training.data[0] = 't';
}

int main(void)
{
	RUN_TEST(classifies_by_class_chain);
	RUN_TEST(finds_training_in_a_split_dict);
	RUN_TEST(finds_training_in_a_combined_dict);
	RUN_TEST(unreadable_is_null);
	return unit__done();
}
