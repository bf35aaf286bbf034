// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// py_types__classify reads a class chain with process_vm_readv; here the "target" is this
// process, holding objects laid out like CPython's (ob_type +8, tp_name +24, tp_base +256).
#include <stddef.h>
#include <unistd.h>
#include "unit.h"
#include "pytypes.h"

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

int main(void)
{
	RUN_TEST(classifies_by_class_chain);
	RUN_TEST(unreadable_is_null);
	return unit__done();
}
