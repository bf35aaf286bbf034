// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gputime/gpu_join.h"

#define EARLY_ROUNDS 2	/* rounds an activity record waits for its call's record */

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* The call with correlation id corr, or NULL. calls[] is sorted by corr (CUPTI gives them
 * in increasing order per process; two threads may hand them over a little out of order). */
static struct gpu_api *find_call(struct gpu_join *j, uint32_t corr)
{
	size_t lo = 0, hi = j->ncalls;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (j->calls[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->ncalls && j->calls[lo].corr == corr ? &j->calls[lo] : NULL;
}

static void add_call(struct gpu_join *j, const struct cirron_gpu_rec *r)
{
	struct gpu_api c = { .launch = r->a, .corr = r->corr, .tid = (uint32_t)(r->b >> 32),
			     .kind = (uint8_t)r->b, .last_round = j->round };
	size_t i = j->ncalls;

	if (grow((void **)&j->calls, &j->capcalls, j->ncalls + 1, sizeof(c)))
		return;
	while (i > 0 && j->calls[i - 1].corr > c.corr)
		i--;
	memmove(j->calls + i + 1, j->calls + i, (j->ncalls - i) * sizeof(c));
	j->calls[i] = c;
	j->ncalls++;
}

static void push(struct gpu_item **v, size_t *n, size_t *cap, const struct gpu_item *it)
{
	if (!grow((void **)v, cap, *n + 1, sizeof(**v)))
		(*v)[(*n)++] = *it;
}

/* An activity record with its call: held until the clock has a sample after its end. */
static void join(struct gpu_join *j, struct gpu_api *c, const struct cirron_gpu_rec *r)
{
	struct gpu_item it = { .launch = c->launch, .start = r->a, .end = r->b, .corr = c->corr,
			       .tid = c->tid, .api = c->kind, .first = !c->items };

	it.kind = r->type == GPU_REC_KERNEL ? GPU_ITEM_KERNEL :
		  r->type == GPU_REC_MEMCPY ? GPU_ITEM_MEMCPY : GPU_ITEM_MEMSET;
	if (r->type == GPU_REC_KERNEL)
		it.name_id = (uint32_t)r->c;
	if (c->items < 255)
		c->items++;
	c->last_round = j->round;
	c->done = c->kind != GPU_API_GRAPH;
	push(&j->held, &j->nheld, &j->capheld, &it);
}

static void activity(struct gpu_join *j, const struct cirron_gpu_rec *r)
{
	struct gpu_api *c = find_call(j, r->corr);

	j->activity_records++;
	if (c) {
		join(j, c, r);
		return;
	}
	if (grow((void **)&j->early, &j->capearly, j->nearly + 1, sizeof(*j->early)))
		return;
	j->early[j->nearly].r = *r;
	j->early[j->nearly++].round = j->round;
}

static void name_part(struct gpu_join *j, const struct cirron_gpu_rec *r)
{
	size_t n = r->sub > CIRRON_GPU_NAME_CHUNK ? CIRRON_GPU_NAME_CHUNK : r->sub;

	if (r->corr != j->name_id) {
		j->name_id = r->corr;
		j->name_len = 0;
	}
	if (j->name_len + n <= CIRRON_GPU_NAME_MAX) {
		memcpy(j->name_buf + j->name_len, &r->a, n);
		j->name_len += n;
	}
	if (r->sub >= CIRRON_GPU_NAME_CHUNK || !r->corr || r->corr > (1u << 20))
		return;	/* more to come (or an id no table should hold) */
	j->name_buf[j->name_len] = 0;
	if (r->corr >= j->capnames) {
		size_t old = j->capnames;

		if (grow((void **)&j->names, &j->capnames, (size_t)r->corr + 1, sizeof(char *)))
			goto out;
		memset(j->names + old, 0, (j->capnames - old) * sizeof(char *));
	}
	free(j->names[r->corr]);
	j->names[r->corr] = strdup(j->name_buf);
out:
	j->name_id = 0;
	j->name_len = 0;
}

/* Activity records still without their call: placed now, or given up after EARLY_ROUNDS
 * (their call was made before the companion was on). */
static void settle_early(struct gpu_join *j)
{
	size_t k = 0;

	for (size_t i = 0; i < j->nearly; i++) {
		struct gpu_api *c = find_call(j, j->early[i].r.corr);

		if (c)
			join(j, c, &j->early[i].r);
		else if (j->round - j->early[i].round >= EARLY_ROUNDS)
			j->unplaced++;
		else
			j->early[k++] = j->early[i];
	}
	j->nearly = k;
}

/* Calls given up, graphs done, and the old calls nothing can still refer to dropped. */
static void settle_calls(struct gpu_join *j, bool final)
{
	size_t drop = 0;

	for (size_t i = 0; i < j->ncalls; i++) {
		struct gpu_api *c = &j->calls[i];

		if (!c->done && c->kind == GPU_API_GRAPH && c->items && c->last_round < j->round)
			c->done = true;	/* a round brought none of its kernels after some */
		if (!c->done && (final || j->api_upto > c->launch + GPU_JOIN_GIVE_UP_NS)) {
			struct gpu_item it = { .launch = c->launch, .corr = c->corr, .tid = c->tid,
					       .api = c->kind, .kind = GPU_ITEM_NONE,
					       .first = !c->items };

			c->done = true;
			if (!c->items) {
				j->given_up++;
				push(&j->out, &j->nout, &j->capout, &it);
			}
		}
	}
	/* a graph's id may still come back a round later: the done ones go after that */
	while (drop < j->ncalls && j->calls[drop].done &&
	       j->round - j->calls[drop].last_round >= 2)
		drop++;
	if (!drop)
		return;
	memmove(j->calls, j->calls + drop, (j->ncalls - drop) * sizeof(j->calls[0]));
	j->ncalls -= drop;
}

void gpu_join__record(struct gpu_join *j, const struct cirron_gpu_rec *r)
{
	j->records++;
	switch (r->type) {
	case GPU_REC_API:
		j->api_records++;
		add_call(j, r);
		break;
	case GPU_REC_KERNEL:
	case GPU_REC_MEMCPY:
	case GPU_REC_MEMSET:
		activity(j, r);
		break;
	case GPU_REC_NAME:
		name_part(j, r);
		break;
	case GPU_REC_CLOCK:
		gpu_clock__add(&j->clock, r->a, r->b, r->c);
		break;
	case GPU_REC_STATE:
		j->state = r->sub;
		j->state_result = r->corr;
		j->cupti_version = r->b;
		j->cupti_dropped = r->c;
		if (r->sub == GPU_STATE_ACTIVE)
			j->active_since = r->a;
		break;
	case GPU_REC_WATERMARK:
		if (r->a > j->api_upto)
			j->api_upto = r->a;
		j->companion_dropped = r->c;
		j->round++;
		settle_early(j);
		settle_calls(j, false);
		break;
	default:
		j->bad++;
	}
}

/* A held item to CLOCK_MONOTONIC, into out. */
static void map_out(struct gpu_join *j, struct gpu_item *it)
{
	uint64_t s = it->start, e = it->end, err = 0, err2 = 0;

	gpu_clock__to_mono(&j->clock, s, &it->start, &err);
	gpu_clock__to_mono(&j->clock, e, &it->end, &err2);
	if (it->end < it->start)
		it->end = it->start;
	if (err2 > err)
		err = err2;
	if (err > j->max_clock_err)
		j->max_clock_err = err;
	push(&j->out, &j->nout, &j->capout, it);
}

long gpu_join__take(struct gpu_join *j, struct gpu_item **out, bool final)
{
	uint64_t latest = gpu_clock__latest_gpu(&j->clock);
	size_t k = 0;
	long n;

	if (final) {
		settle_early(j);
		j->unplaced += j->nearly;
		j->nearly = 0;
		settle_calls(j, true);
	}
	for (size_t i = 0; i < j->nheld; i++) {
		if (j->clock.n && (final || j->held[i].end <= latest))
			map_out(j, &j->held[i]);
		else
			j->held[k++] = j->held[i];
	}
	j->nheld = k;
	*out = j->out;
	n = (long)j->nout;
	j->out = NULL;
	j->nout = j->capout = 0;
	return n;
}

uint64_t gpu_join__watermark(const struct gpu_join *j)
{
	uint64_t w = j->api_upto;

	for (size_t i = 0; i < j->ncalls; i++)
		if (!j->calls[i].done && j->calls[i].launch < w)
			w = j->calls[i].launch;
	for (size_t i = 0; i < j->nheld; i++)
		if (j->held[i].launch < w)
			w = j->held[i].launch;
	return w;
}

const char *gpu_join__name(const struct gpu_join *j, uint32_t id)
{
	return id && id < j->capnames ? j->names[id] : NULL;
}

void gpu_join__free(struct gpu_join *j)
{
	for (size_t i = 0; i < j->capnames; i++)
		free(j->names[i]);
	free(j->names);
	free(j->calls);
	free(j->early);
	free(j->held);
	free(j->out);
	memset(j, 0, sizeof(*j));
}
