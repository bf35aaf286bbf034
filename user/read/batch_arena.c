// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// cJSON values of one batch in a bump allocator (batch_arena.h).
#include <stdint.h>
#include <stdlib.h>
#include "read/batch_arena.h"
#include "read/batch_json.h"

#define CHUNK_BYTES (4u << 20)
#define CHUNKS_MAX 256		/* a batch file is at most 512 MiB, its tree a few times that */
#define CHUNKS_KEPT 16		/* 64 MiB */

struct chunk {
	char *mem;
	size_t used, size;
};

static struct {
	struct chunk c[CHUNKS_MAX];
	size_t n;		/* chunks allocated */
	size_t cur;		/* the one being filled */
	bool active;		/* a parse is under way */
	bool busy;		/* a batch lives in the arena */
	bool hooked;
} A;

static bool in_arena(const void *p)
{
	for (size_t i = 0; i < A.n; i++)
		if ((const char *)p >= A.c[i].mem && (const char *)p < A.c[i].mem + A.c[i].size)
			return true;
	return false;
}

static void *arena_malloc(size_t size)
{
	size_t need = (size + 15) & ~(size_t)15;

	if (!A.active)
		return malloc(size);
	while (A.cur < A.n && A.c[A.cur].used + need > A.c[A.cur].size)
		A.cur++;
	if (A.cur == A.n) {
		size_t sz = need > CHUNK_BYTES ? need : CHUNK_BYTES;

		if (A.n == CHUNKS_MAX || !(A.c[A.n].mem = malloc(sz)))
			return malloc(size);	/* freed by free: not in any chunk */
		A.c[A.n].size = sz;
		A.c[A.n].used = 0;
		A.n++;
	}
	A.c[A.cur].used += need;
	return A.c[A.cur].mem + A.c[A.cur].used - need;
}

static void arena_free(void *p)
{
	if (p && !in_arena(p))
		free(p);
}

cJSON *batch_arena__parse(const char *text, const char **end, bool *in_arena_out)
{
	bool gave_up;
	cJSON *j;

	if (!A.hooked) {
		cJSON_Hooks h = { .malloc_fn = arena_malloc, .free_fn = arena_free };

		cJSON_InitHooks(&h);
		A.hooked = true;
	}
	*in_arena_out = !A.busy;
	if (A.busy)
		return cJSON_ParseWithOpts(text, end, 0);
	A.active = A.busy = true;
	j = batch_json__parse(text, end, arena_malloc, &gave_up);
	if (gave_up) {	/* not the writer's plain JSON: cJSON decides what it is */
		batch_arena__release(NULL);
		A.active = A.busy = true;
		j = cJSON_ParseWithOpts(text, end, 0);
	}
	A.active = false;
	if (!j)
		batch_arena__release(NULL);
	return j;
}

void batch_arena__release(cJSON *json)
{
	(void)json;	/* its memory is the arena's: nothing to walk */
	/* the chunks stay for the next batch (touched pages cost a fault each to get back), up
	 * to CHUNKS_KEPT of them: a rare huge batch's go back */
	for (size_t i = CHUNKS_KEPT; i < A.n; i++)
		free(A.c[i].mem);
	if (A.n > CHUNKS_KEPT)
		A.n = CHUNKS_KEPT;
	for (size_t i = 0; i < A.n; i++)
		A.c[i].used = 0;
	A.cur = 0;
	A.busy = false;
}
