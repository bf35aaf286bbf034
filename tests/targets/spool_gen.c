// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A long spool made fast by the writer itself: the observer's session tree (tree/session.c)
// and spool sink (sink/spool.c) fed a synthetic training loop, with no process traced, so a
// million steps take seconds, not the hour a traced job would. Each step is what the torch
// tree makes of a plain loop (data_load, forward inferred, backward, optimizer_step,
// zero_grad, with their attributes); a batch goes out every 4096 closed spans or second of
// the loop's clock, as the observer's does, with a health block of the observer's size.
//
//   spool_gen DIR --steps N [--epoch-steps E] [--ranks R] [--straggler R] [--marks]
//             [--eval K] [--hang-at STEP] [--kill-at-batch B] [--no-final]
//
// --epoch-steps 0: one epoch for all steps (a loader that never runs out). --eval K: K
// validation batches (data_load, forward mode=eval) at each epoch's end. --hang-at STEP:
// a hang record in the batch after that step. --kill-at-batch B: dies by SIGKILL while
// writing batch B (its temporary file half written), as an observer killed mid-write.
// --no-final: stops without a final batch (an observer killed between two batches).
// Prints "batches N" (per rank) on stdout at the end.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "sink/spool.h"
#include "tree/session.h"

#define RANKS_MAX 64
#define T0 1796000000000000000ull
#define FLUSH_SPANS 4096	/* as the observer: a batch at least every 4096 closed spans */

struct opts {
	const char *dir;
	long steps, epoch_steps, ranks, straggler, eval, hang_at, kill_at_batch;
	bool marks, no_final;
};

struct rank {
	struct session *s;
	struct span *epoch;
	long epoch_index;
	uint64_t closed;	/* spans closed since the last batch */
	uint64_t batches;
	uint64_t last_flush_ns;
	cJSON *hangs;
};

static void usage(void)
{
	fprintf(stderr, "usage: spool_gen DIR --steps N [--epoch-steps E] [--ranks R] "
		"[--straggler R] [--marks] [--eval K] [--hang-at STEP] [--kill-at-batch B] "
		"[--no-final]\n");
	exit(64);
}

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		usage();
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .epoch_steps = 1000, .ranks = 1, .straggler = -1, .hang_at = -1,
			    .kill_at_batch = -1 };
	if (argc < 2)
		usage();
	o->dir = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--marks"))
			o->marks = true;
		else if (!strcmp(a, "--no-final"))
			o->no_final = true;
		else if (!v)
			usage();
		else if (!strcmp(a, "--steps"))
			o->steps = num(v), i++;
		else if (!strcmp(a, "--epoch-steps"))
			o->epoch_steps = num(v), i++;
		else if (!strcmp(a, "--ranks"))
			o->ranks = num(v), i++;
		else if (!strcmp(a, "--straggler"))
			o->straggler = num(v), i++;
		else if (!strcmp(a, "--eval"))
			o->eval = num(v), i++;
		else if (!strcmp(a, "--hang-at"))
			o->hang_at = num(v), i++;
		else if (!strcmp(a, "--kill-at-batch"))
			o->kill_at_batch = num(v), i++;
		else
			usage();
	}
	if (!o->steps || !o->ranks || o->ranks > RANKS_MAX)
		usage();
}

/* The observer's health block, its size and shape (the numbers made up). */
static cJSON *health(const struct rank *r, long steps)
{
	static const char *const probes[] = {
		"_dl_debug_state",
		"_ZN5torch8autograd6Engine7executeERKSt6vectorINS0_4EdgeESaIS3_EERKS2_IN2at6Tensor"
		"ESaIS9_EEbbbS7_",
		"_ZN5torch8autograd8profiler25record_function_enter_newERKNSt7__cxx1112basic_stringI"
		"cSt11char_traitsIcESaIcEEERKN3c108optionalIS7_EE",
		"record_function_enter (static, torch 1.13 Debian)",
		"_ZN3c108GradMode11set_enabledEb",
		"_ZN2at8autocast19set_autocast_enabledEb", "cudaLaunchKernel", "cudaMemcpy",
		"cudaMemcpyAsync", "cudaMalloc", "cudaFree", "cudaStreamSynchronize",
		"cudaDeviceSynchronize", "cudaGetDeviceCount", "write",
	};
	cJSON *h = cJSON_CreateObject(), *a = cJSON_CreateArray();

	cJSON_AddNumberToObject(h, "ringbuf_drops", 0);
	cJSON_AddNumberToObject(h, "kernel_map_full", 0);
	cJSON_AddNumberToObject(h, "events", (double)steps * 8);
	cJSON_AddNumberToObject(h, "events_lost", 0);
	cJSON_AddNumberToObject(h, "probes_attached", 15);
	cJSON_AddNumberToObject(h, "probes_failed", 0);
	cJSON_AddNumberToObject(h, "uprobe_hits", (double)steps * 8 + 56);
	cJSON_AddNumberToObject(h, "signals_sent", 0);
	cJSON_AddNumberToObject(h, "steps", (double)steps);
	cJSON_AddNumberToObject(h, "uprobe_hits_per_step", 8);
	cJSON_AddNumberToObject(h, "spool_bytes", 0);
	cJSON_AddNumberToObject(h, "spool_files", (double)r->batches);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		cJSON *p = cJSON_CreateObject();

		cJSON_AddStringToObject(p, "symbol", probes[i]);
		cJSON_AddStringToObject(p, "group", i < 6 ? "libtorch" : "cudart");
		cJSON_AddStringToObject(p, "action", i < 6 ? "emit" : "cuda_launch");
		cJSON_AddTrueToObject(p, "attached");
		cJSON_AddNullToObject(p, "error");
		cJSON_AddNumberToObject(p, "hits", i < 6 ? (double)steps : 0);
		cJSON_AddNumberToObject(p, "return_hits", 0);
		cJSON_AddItemToArray(a, p);
	}
	cJSON_AddItemToObject(h, "probes", a);
	return h;
}

/* Dies in the middle of writing a batch, as spool__write would leave it: a temporary file
 * half written under the name it makes, nothing renamed. */
static void die_mid_write(struct spool *sp, const struct rank *r, cJSON *batch)
{
	char prefix[256], tmp[256], *text = cJSON_PrintUnformatted(batch);
	int fd;

	snprintf(prefix, sizeof(prefix), "%s.%08" PRIu64, r->s->id, r->s->seq - 1);
	fd = fs__create_temp_at(sp->dirfd, prefix, 0640, tmp, sizeof(tmp));
	if (fd >= 0 && text && write(fd, text, strlen(text) / 2) < 0)
		perror("write");
	fflush(stdout);
	raise(SIGKILL);
}

static void flush(struct spool *sp, const struct opts *o, struct rank *r, uint64_t now,
		  long steps, bool final)
{
	uint64_t seq = r->s->seq;
	cJSON *b = session__take_batch(r->s, health(r, steps), now, final);

	if (r->hangs) {
		cJSON_AddItemToObject(b, "hangs", r->hangs);
		r->hangs = NULL;
	}
	if (o->kill_at_batch >= 0 && (long)r->batches == o->kill_at_batch)
		die_mid_write(sp, r, b);
	if (spool__write(sp, r->s->id, seq, b)) {
		fprintf(stderr, "spool_gen: cannot write a batch to %s\n", sp->dir);
		exit(1);
	}
	cJSON_Delete(b);
	r->batches++;
	r->closed = 0;
	r->last_flush_ns = now;
}

static void close_span(struct rank *r, struct span *sp, uint64_t end)
{
	session__close(r->s, sp, end, SPAN_OK);
	r->closed++;
}

static struct span *phase(struct rank *r, struct span *parent, const char *name, uint64_t *t,
			  uint64_t ns)
{
	struct span *sp = session__open(r->s, parent, name, -1, *t);

	*t += ns;
	return sp;
}

static void mark(struct span *sp, const char *name, double v, uint64_t ts)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "name", name);
	json__add_double(m, "value", v);
	cJSON_AddStringToObject(m, "kind", "point");
	json__add_u64(m, "ts_ns", ts);
	cJSON_AddStringToObject(m, "source", "stdout");
	span__add_mark(sp, m);
}

/* One step of rank r from *t on: times in ns that vary a little from step to step. */
static void step(struct rank *r, const struct opts *o, long i, uint64_t *t, bool straggler)
{
	uint64_t jitter = (uint64_t)((i * 2654435761u) % 9000);
	struct span *st = session__open(r->s, r->epoch, "step", i, *t), *sp;

	cJSON_AddStringToObject(st->attrs, "boundary", "optimizer_step");
	sp = phase(r, st, "data_load", t, 12000 + jitter);
	cJSON_AddNumberToObject(sp->attrs, "data_load_ns", (double)(*t - sp->start_ns));
	close_span(r, sp, *t);
	sp = phase(r, st, "forward", t, (straggler ? 60000 : 30000) + jitter);
	cJSON_AddStringToObject(sp->attrs, "mode", "train");
	cJSON_AddStringToObject(sp->attrs, "mode_source", "inferred_from_backward");
	cJSON_AddStringToObject(sp->attrs, "timing", "inferred");
	close_span(r, sp, *t);
	sp = phase(r, st, "backward", t, 40000 + jitter);
	if (o->ranks > 1) {
		struct span *w = phase(r, sp, "collective_wait", t, straggler ? 2000 : 32000);

		close_span(r, w, *t);
	}
	close_span(r, sp, *t);
	sp = phase(r, st, "optimizer_step", t, 11000);
	cJSON_AddStringToObject(sp->attrs, "scope", "Optimizer.step#SGD.step");
	cJSON_AddStringToObject(sp->attrs, "optimizer", "SGD.step");
	close_span(r, sp, *t);
	sp = phase(r, st, "zero_grad", t, 4000);
	close_span(r, sp, *t);
	if (o->marks)
		mark(st, "loss", 2.5 / (1.0 + (double)i / 1000.0), *t);
	close_span(r, st, *t);
}

static void hang(struct rank *r, uint64_t now, long i)
{
	cJSON *h = cJSON_CreateObject(), *path = cJSON_CreateArray(), *p;
	const char *names[] = { "cirron.session", "epoch", "step", "data_load" };
	long idx[] = { -1, r->epoch_index, i, -1 };

	json__add_u64(h, "detected_ns", now);
	cJSON_AddStringToObject(h, "name", "data_load");
	json__add_u64(h, "open_ns", 5020000000ull);
	json__add_u64(h, "no_progress_ns", 5020000000ull);
	json__add_u64(h, "median_ns", 120000);
	json__add_u64(h, "threshold_ns", 5000000000ull);
	cJSON_AddNumberToObject(h, "rank", (double)r->s->rank);
	for (int k = 0; k < 4; k++) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", names[k]);
		if (idx[k] >= 0)
			cJSON_AddNumberToObject(p, "index", (double)idx[k]);
		cJSON_AddItemToArray(path, p);
	}
	cJSON_AddItemToObject(h, "open_path", path);
	if (!r->hangs)
		r->hangs = cJSON_CreateArray();
	cJSON_AddItemToArray(r->hangs, h);
}

int main(int argc, char **argv)
{
	struct rank rk[RANKS_MAX] = {};
	struct spool sp;
	struct opts o;
	uint64_t t[RANKS_MAX];
	int err;

	parse(argc, argv, &o);
	err = spool__open(&sp, o.dir, 0);
	if (err) {
		fprintf(stderr, "spool_gen: %s: %s\n", o.dir, strerror(-err));
		return 1;
	}
	for (long r = 0; r < o.ranks; r++) {
		struct session_ids ids = { .pid = 10000 + (int)r, .start_ticks = 777,
					   .rank = r, .local_rank = r, .world_size = o.ranks,
					   .host = "gen" };
		cJSON *a;

		rk[r].s = session__new(&ids, T0);
		if (!rk[r].s)
			return 1;
		rk[r].s->resend_open = true;	/* as the observer's sessions */
		a = rk[r].s->root->attrs;
		cJSON_AddNumberToObject(a, "pid", ids.pid);
		cJSON_AddNumberToObject(a, "rank", (double)r);
		cJSON_AddStringToObject(a, "role", o.ranks > 1 ? "rank" : "process");
		cJSON_AddStringToObject(a, "host", "gen");
		cJSON_AddStringToObject(a, "comm", "python3");
		cJSON_AddStringToObject(a, "framework", "torch");
		cJSON_AddStringToObject(a, "device", "cpu");
		t[r] = T0 + 1000000;
		rk[r].last_flush_ns = T0;
	}
	for (long i = 0; i < o.steps; i++) {
		bool new_epoch = !i || (o.epoch_steps && i % o.epoch_steps == 0);

		for (long r = 0; r < o.ranks; r++) {
			struct rank *x = &rk[r];

			if (new_epoch) {
				if (x->epoch) {
					for (long k = 0; k < o.eval; k++) {
						struct span *d = phase(x, x->epoch, "data_load", &t[r], 9000);

						close_span(x, d, t[r]);
						d = phase(x, x->epoch, "forward", &t[r], 20000);
						cJSON_AddStringToObject(d->attrs, "mode", "eval");
						close_span(x, d, t[r]);
					}
					close_span(x, x->epoch, t[r]);
				}
				x->epoch = session__open(x->s, NULL, "epoch", x->epoch_index++, t[r]);
			}
			step(x, &o, i, &t[r], r == o.straggler);
			if (i == o.hang_at)
				hang(x, t[r], i);
			if (x->closed >= FLUSH_SPANS || t[r] - x->last_flush_ns >= 1000000000ull ||
			    x->hangs)
				flush(&sp, &o, x, t[r], i + 1, false);
		}
	}
	for (long r = 0; r < o.ranks; r++) {
		if (o.no_final) {
			flush(&sp, &o, &rk[r], t[r], o.steps, false);
		} else {
			close_span(&rk[r], rk[r].epoch, t[r]);
			session__end(rk[r].s, t[r], true, "exit");
			flush(&sp, &o, &rk[r], t[r], o.steps, true);
		}
		printf("batches %" PRIu64 "\n", rk[r].batches);
		session__free(rk[r].s);
	}
	spool__close(&sp);
	return 0;
}
