// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/demangle.h"
#include "traced/kernel_names.h"

/* Open addressing, linear probing; keys are pointers: mixed before use. */
static size_t slot_of(const struct kernel_names *k, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (k->cap - 1);
}

static struct kernel_name_slot *find(const struct kernel_names *k, uint64_t key)
{
	if (!k->cap || !key)
		return NULL;
	for (size_t i = slot_of(k, key), n = 0; n < k->cap; i = (i + 1) & (k->cap - 1), n++) {
		if (k->slots[i].key == key)
			return &k->slots[i];
		if (!k->slots[i].key)
			return NULL;
	}
	return NULL;
}

static int grow(struct kernel_names *k)
{
	size_t cap = k->cap ? k->cap * 2 : 256;
	struct kernel_names bigger = { .cap = cap, .n = k->n, .dropped = k->dropped };

	bigger.slots = calloc(cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < k->cap; i++) {
		size_t j;

		if (!k->slots[i].key)
			continue;
		for (j = slot_of(&bigger, k->slots[i].key); bigger.slots[j].key; j = (j + 1) & (cap - 1))
			;
		bigger.slots[j] = k->slots[i];
	}
	free(k->slots);
	*k = bigger;
	return 0;
}

/* key's slot, made if need be (its name and alias cleared). */
static struct kernel_name_slot *slot(struct kernel_names *k, uint64_t key)
{
	struct kernel_name_slot *s = find(k, key);
	size_t i;

	if (s) {
		free(s->name);
		s->name = NULL;
		s->alias = 0;
		return s;
	}
	if (k->n >= KERNEL_NAMES_MAX) {
		k->dropped++;
		return NULL;
	}
	if ((k->n + 1) * 2 > k->cap && grow(k))
		return NULL;
	for (i = slot_of(k, key); k->slots[i].key; i = (i + 1) & (k->cap - 1))
		;
	k->slots[i].key = key;
	k->n++;
	return &k->slots[i];
}

int kernel_names__name(struct kernel_names *k, uint64_t key, const char *mangled)
{
	char buf[1024];
	const char *name;
	struct kernel_name_slot *s;

	if (!key)
		return -EINVAL;
	s = slot(k, key);
	if (!s)
		return k->n >= KERNEL_NAMES_MAX ? -ENOSPC : -ENOMEM;
	name = demangle__full(mangled, buf, sizeof(buf));
	s->name = strdup(name ? name : mangled);
	return s->name ? 0 : -ENOMEM;
}

int kernel_names__alias(struct kernel_names *k, uint64_t key, uint64_t of)
{
	struct kernel_name_slot *s;

	if (!key || !of || key == of)
		return -EINVAL;
	s = slot(k, key);
	if (!s)
		return k->n >= KERNEL_NAMES_MAX ? -ENOSPC : -ENOMEM;
	s->alias = of;
	return 0;
}

const char *kernel_names__get(const struct kernel_names *k, uint64_t key)
{
	for (int hops = 0; hops < 4; hops++) {
		const struct kernel_name_slot *s = find(k, key);

		if (!s)
			return NULL;
		if (s->name)
			return s->name;
		key = s->alias;
	}
	return NULL;
}

uint64_t kernel_names__end(const struct kernel_names *k, uint64_t key)
{
	for (int hops = 0; hops < 4; hops++) {
		const struct kernel_name_slot *s = find(k, key);

		if (!s || !s->alias)
			return key;
		key = s->alias;
	}
	return key;
}

void kernel_names__free(struct kernel_names *k)
{
	for (size_t i = 0; i < k->cap; i++)
		free(k->slots[i].name);
	free(k->slots);
	memset(k, 0, sizeof(*k));
}
