// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The training-structure rules, fed with event sequences as the torch anchors produce them.
#include "tree/torch_tree.h"
#include "unit.h"

#define MAX_SPANS 512

struct rec {
	long long id, parent, index;
	char name[96];
	unsigned long long start, end;
	cJSON *attrs;
};

struct world {
	struct session *s;
	struct torch_tree t;
	uint64_t ts;
	struct rec spans[MAX_SPANS];
	int n;
	cJSON *batches[16];
	int nbatches;
};

static void world_init(struct world *w, long epoch_steps)
{
	struct session_ids ids = { .pid = 42, .start_ticks = 7, .world_size = 1, .host = "h" };

	memset(w, 0, sizeof(*w));
	w->ts = 1000000;
	w->s = session__new(&ids, w->ts);
	torch_tree__init(&w->t, w->s, epoch_steps);
}

static void feed(struct world *w, enum tree_input kind, const char *name, uint64_t obj, int value)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (w->ts += 1000), .tid = 1, .name = name,
				 .obj = obj, .value = value };

	torch_tree__feed(&w->t, &ev);
}

static void feed_tid(struct world *w, uint32_t tid, enum tree_input kind, const char *name)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (w->ts += 1000), .tid = tid, .name = name };

	torch_tree__feed(&w->t, &ev);
}

#define DATA "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
#define OPT "Optimizer.step#SGD.step"
#define ZERO "Optimizer.zero_grad#SGD.zero_grad"

static void data(struct world *w, uint64_t iter)
{
	feed(w, TI_SCOPE_ENTER, DATA, iter, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

static void backward(struct world *w)
{
	w->ts += 5000;	/* the forward runs meanwhile */
	feed(w, TI_BACKWARD_ENTER, NULL, 0, 0);
	feed(w, TI_BACKWARD_EXIT, NULL, 0, 0);
}

static void optimizer(struct world *w)
{
	feed(w, TI_SCOPE_ENTER, OPT, 0, 0);
	feed(w, TI_GRAD_MODE, NULL, 0, 0);	/* the step runs under no_grad */
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(w, TI_SCOPE_ENTER, ZERO, 0, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

static void train_epoch(struct world *w, uint64_t iter, int batches)
{
	for (int i = 0; i < batches; i++) {
		data(w, iter);
		backward(w);
		optimizer(w);
	}
	data(w, iter);	/* the __next__ that raises StopIteration */
}

static void validate(struct world *w, uint64_t iter, int batches)
{
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	for (int i = 0; i < batches; i++) {
		data(w, iter);
		w->ts += 3000;	/* eval forward */
	}
	data(w, iter);
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
}

static unsigned long long num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? (unsigned long long)v->valuedouble : 0;
}

/* Ends the session as a clean exit and reads back every span from the batches. */
static void collect(struct world *w, bool exit_ok)
{
	const cJSON *sp;

	w->ts += 1000;
	torch_tree__finish(&w->t, exit_ok);
	session__end(w->s, w->ts, exit_ok, "exit");
	cJSON *built = session__take_batch(w->s, NULL, w->ts, true);
	char *text = cJSON_PrintUnformatted(built);

	/* Read back as a reader would: exact integers are raw text until parsed. */
	w->batches[w->nbatches] = cJSON_Parse(text);
	cJSON_free(text);
	cJSON_Delete(built);
	cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(w->batches[w->nbatches], "spans")) {
		struct rec *r = &w->spans[w->n++];
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(sp, "index");

		r->id = (long long)num(sp, "span_id");
		r->parent = (long long)num(sp, "parent_id");
		r->index = cJSON_IsNumber(idx) ? (long long)idx->valuedouble : -1;
		snprintf(r->name, sizeof(r->name), "%s",
			 cJSON_GetObjectItemCaseSensitive(sp, "name")->valuestring);
		r->start = num(sp, "start_ns");
		r->end = num(sp, "end_ns");
		r->attrs = cJSON_GetObjectItemCaseSensitive(sp, "attrs");
	}
	w->nbatches++;
}

static void world_free(struct world *w)
{
	for (int i = 0; i < w->nbatches; i++)
		cJSON_Delete(w->batches[i]);
	session__free(w->s);
}

static const struct rec *by_id(const struct world *w, long long id)
{
	for (int i = 0; i < w->n; i++)
		if (w->spans[i].id == id)
			return &w->spans[i];
	return NULL;
}

static int count(const struct world *w, const char *name, const char *parent_name)
{
	int c = 0;

	for (int i = 0; i < w->n; i++) {
		const struct rec *p = by_id(w, w->spans[i].parent);

		if (strcmp(w->spans[i].name, name) != 0)
			continue;
		if (!parent_name || (p && !strcmp(p->name, parent_name)))
			c++;
	}
	return c;
}

static const char *attr_str(const struct rec *r, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int count_mode(const struct world *w, const char *mode, const char *parent_name)
{
	int c = 0;

	for (int i = 0; i < w->n; i++) {
		const struct rec *p = by_id(w, w->spans[i].parent);

		if (!strcmp(w->spans[i].name, "forward") && attr_str(&w->spans[i], "mode") &&
		    !strcmp(attr_str(&w->spans[i], "mode"), mode) && p && !strcmp(p->name, parent_name))
			c++;
	}
	return c;
}

/* Every span ended, each lies within its parent, ids unique. */
static void check_well_formed(const struct world *w)
{
	for (int i = 0; i < w->n; i++) {
		const struct rec *r = &w->spans[i], *p = by_id(w, r->parent);

		ASSERT_GT(r->end, 0, r->name);
		ASSERT_LE(r->start, r->end, r->name);
		for (int j = i + 1; j < w->n; j++)
			ASSERT_NEQ(r->id, w->spans[j].id, "unique span ids");
		if (!r->parent)
			continue;
		if (!ASSERT_OK_PTR(p, "parent exists"))
			continue;
		if (!ASSERT_LE(p->start, r->start, "child starts within parent") ||
		    !ASSERT_LE(r->end, p->end, "child ends within parent"))
			fprintf(stderr, "  %s [%llu,%llu] under %s [%llu,%llu]\n", r->name, r->start,
				r->end, p->name, p->start, p->end);
	}
}

static void test_plain_loop_with_validation(void)
{
	struct world w;

	world_init(&w, 1000);
	train_epoch(&w, 0x1000, 3);
	validate(&w, 0x2000, 2);
	train_epoch(&w, 0x3000, 3);
	validate(&w, 0x4000, 2);
	collect(&w, true);

	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "training data_loads in steps");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "backwards in steps");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 6, "optimizer steps in steps");
	ASSERT_EQ(count(&w, "zero_grad", "step"), 6, "zero_grad inside steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "train forwards in steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "eval forwards under epochs");
	ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "no eval forward in a step");
	/* per epoch: 2 validation batches + 1 exhausted validation __next__ + 1 exhausted train */
	ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "data_loads under epochs");
	for (int i = 0; i < w.n; i++) {
		if (!strcmp(w.spans[i].name, "step"))
			ASSERT_LT(w.spans[i].index, 6, "step index counts from 0");
		if (!strcmp(w.spans[i].name, "epoch"))
			ASSERT_LT(w.spans[i].index, 2, "epoch index counts from 0");
	}
	check_well_formed(&w);
	world_free(&w);
}

static void test_gradient_accumulation(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 3; k++) {
			data(&w, 0x10);
			backward(&w);
		}
		optimizer(&w);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 2, "one step per optimizer step");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "all backwards inside steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "all data_loads inside steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "one forward per micro-batch");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 2, "optimizer steps");
	check_well_formed(&w);
	world_free(&w);
}

static void test_loop_without_dataloader(void)
{
	struct world w;

	world_init(&w, 2);
	for (int s = 0; s < 5; s++) {
		backward(&w);
		optimizer(&w);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 3, "an epoch every 2 optimizer steps");
	ASSERT_EQ(count(&w, "step", "epoch"), 5, "steps");
	ASSERT_EQ(count(&w, "backward", "step"), 5, "backwards");
	ASSERT_EQ(count(&w, "data_load", NULL), 0, "no data_load without a DataLoader");
	/* the first step has nothing before its backward; later ones infer their forward */
	ASSERT_EQ(count_mode(&w, "train", "step"), 4, "inferred forwards");
	check_well_formed(&w);
	world_free(&w);
}

static void test_epochs_without_iterator_identity(void)
{
	struct world w;

	world_init(&w, 1000);
	train_epoch(&w, 0, 2);
	validate(&w, 0, 1);
	train_epoch(&w, 0, 2);
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "validation phase separates epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "steps");
	check_well_formed(&w);
	world_free(&w);
}

static void test_nested_user_regions(void)
{
	struct world w;
	const struct rec *outer = NULL, *inner = NULL;

	world_init(&w, 1000);
	data(&w, 1);
	feed(&w, TI_SCOPE_ENTER, "outer", 0, 0);
	feed(&w, TI_SCOPE_ENTER, "inner", 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	backward(&w);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	optimizer(&w);
	collect(&w, true);
	for (int i = 0; i < w.n; i++) {
		if (!strcmp(w.spans[i].name, "outer"))
			outer = &w.spans[i];
		if (!strcmp(w.spans[i].name, "inner"))
			inner = &w.spans[i];
	}
	if (ASSERT_OK_PTR(outer, "outer") && ASSERT_OK_PTR(inner, "inner")) {
		ASSERT_EQ(inner->parent, outer->id, "inner nests in outer");
		ASSERT_STREQ(by_id(&w, outer->parent)->name, "step", "outer's parent");
	}
	ASSERT_EQ(count(&w, "backward", "outer"), 1, "backward ran inside outer");
	check_well_formed(&w);
	world_free(&w);
}

static void test_attach_mid_run(void)
{
	struct world w;

	world_init(&w, 1000);
	/* We attach while a step is in its backward: the exits have no entries. */
	feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(&w, TI_SCOPE_ENTER, OPT, 0, 0);	/* half a step: opens one, counted */
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	train_epoch(&w, 0x77, 2);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 3, "the partial step and two full ones");
	ASSERT_EQ(count(&w, "backward", NULL), 2, "unpaired exits are ignored");
	check_well_formed(&w);
	world_free(&w);
}

static void test_other_threads_ignored(void)
{
	struct world w;

	world_init(&w, 1000);
	data(&w, 1);
	feed_tid(&w, 9, TI_SCOPE_ENTER, DATA);
	feed_tid(&w, 9, TI_BACKWARD_ENTER, NULL);
	backward(&w);
	optimizer(&w);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", NULL), 1, "steps");
	ASSERT_EQ(count(&w, "backward", NULL), 1, "the other thread's backward is not ours");
	ASSERT_EQ(count(&w, "data_load", NULL), 1, "data_loads");
	world_free(&w);
}

static void test_crash_leaves_incomplete(void)
{
	struct world w;
	int incomplete = 0;

	world_init(&w, 1000);
	data(&w, 1);
	feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);	/* dies inside backward */
	collect(&w, false);
	for (int i = 0; i < w.n; i++) {
		const cJSON *sp;

		(void)sp;
		if (!strcmp(w.spans[i].name, "backward") || !strcmp(w.spans[i].name, "step") ||
		    !strcmp(w.spans[i].name, "epoch"))
			incomplete++;
	}
	ASSERT_EQ(incomplete, 3, "backward, step and epoch present");
	ASSERT_EQ(count(&w, "backward", "step"), 1, "backward in the step");
	world_free(&w);
}

/* A fake CUDA runtime: 10 launches and 100 bytes copied between two reads. */
static bool fake_counters(void *ctx, uint64_t out[SESSION_NCOUNTERS])
{
	uint64_t *calls = ctx;

	(*calls)++;
	memset(out, 0, SESSION_NCOUNTERS * sizeof(out[0]));
	out[0] = *calls * 10;
	out[1] = *calls * 100;
	return true;
}

static void test_cuda_counters_land_on_spans(void)
{
	struct world w;
	uint64_t calls = 0;
	int backwards = 0;

	world_init(&w, 1000);
	w.s->counters = fake_counters;
	w.s->counters_ctx = &calls;
	data(&w, 1);
	backward(&w);
	optimizer(&w);
	collect(&w, true);
	for (int i = 0; i < w.n; i++) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(w.spans[i].attrs, "cuda.launches");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(w.spans[i].attrs,
								  "cuda.memcpy_bytes");

		if (!w.spans[i].parent)
			continue;
		if (!ASSERT_TRUE(cJSON_IsNumber(l) && cJSON_IsNumber(b), w.spans[i].name))
			continue;
		/* each span saw the counters move between its open and its close */
		ASSERT_EQ((long long)l->valuedouble % 10, 0, "launch delta");
		ASSERT_EQ((long long)b->valuedouble, (long long)l->valuedouble * 10, "bytes delta");
		backwards += !strcmp(w.spans[i].name, "backward");
	}
	ASSERT_EQ(backwards, 1, "backward carries its CUDA delta");
	world_free(&w);
}

/* Spans named name whose attribute key is the string value. */
static int count_attr(const struct world *w, const char *name, const char *key, const char *value)
{
	int c = 0;

	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && attr_str(&w->spans[i], key) &&
		    !strcmp(attr_str(&w->spans[i], key), value))
			c++;
	return c;
}

static int count_bool(const struct world *w, const char *name, const char *key)
{
	int c = 0;

	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) &&
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w->spans[i].attrs, key)))
			c++;
	return c;
}

static void scope(struct world *w, const char *name)
{
	feed(w, TI_SCOPE_ENTER, name, 0, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

/* LBFGS: optimizer.step(closure) runs zero_grad, forward and backward inside the step, under
 * enable_grad within the step's no_grad. */
static void test_closure_optimizer(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int s = 0; s < 3; s++) {
		feed(&w, TI_SCOPE_ENTER, "Optimizer.step#LBFGS.step", 0, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		for (int k = 0; k < 3; k++) {
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			scope(&w, "Optimizer.zero_grad#LBFGS.zero_grad");
			backward(&w);
			feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		}
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 3, "one step per optimizer.step(closure)");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 3, "optimizer steps");
	ASSERT_EQ(count(&w, "backward", "optimizer_step"), 9, "closure backwards nest");
	ASSERT_EQ(count(&w, "zero_grad", "optimizer_step"), 9, "closure zero_grads nest");
	ASSERT_EQ(count_mode(&w, "train", "optimizer_step"), 9, "closure forwards nest");
	ASSERT_EQ(count(&w, "backward", "step"), 0, "no backward outside the closure");
	ASSERT_EQ(count_bool(&w, "optimizer_step", "truncated"), 0, "optimizer steps not truncated");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "LBFGS.step"), 3, "named");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "optimizer_step"), 3, "boundary");
	check_well_formed(&w);
	world_free(&w);
}

/* A GAN: per batch a discriminator step, then a generator step. */
static void test_two_optimizers_per_batch(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			scope(&w, "Optimizer.zero_grad#Adam.zero_grad");
			backward(&w);
			feed(&w, TI_SCOPE_ENTER, "Optimizer.step#Adam.step", 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
			scope(&w, "Optimizer.zero_grad#SGD.zero_grad");
			backward(&w);
			feed(&w, TI_SCOPE_ENTER, OPT, 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per batch");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	ASSERT_EQ(count(&w, "backward", "step"), 12, "two backwards per step");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 12, "two optimizer steps per step");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "Adam.step"), 6, "D steps named");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "SGD.step"), 6, "G steps named");
	ASSERT_EQ(count_mode(&w, "train", "step"), 12, "a forward before each backward");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "iterator ends");
	check_well_formed(&w);
	world_free(&w);
}

/* No optimizer: `with torch.no_grad(): p -= lr * p.grad` after each backward. */
static void manual_update(struct world *w)
{
	backward(w);
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	w->ts += 2000;
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
}

static void test_manual_updates_with_dataloader(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			manual_update(&w);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per batch");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "data_load"), 6, "steps from batches");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "a backward per step");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "iterator ends");
	check_well_formed(&w);
	world_free(&w);
}

static void test_manual_updates_without_dataloader(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 4; i++)
		manual_update(&w);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "one step per backward");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "backward"), 4, "steps from backwards");
	ASSERT_EQ(count(&w, "backward", "step"), 4, "a backward per step");
	/* the first has nothing before it; the others begin where the update ended */
	ASSERT_EQ(count_mode(&w, "train", "step"), 3, "inferred forwards");
	check_well_formed(&w);
	world_free(&w);
}

/* torch.inference_mode() validation: no GradMode event, so its batches look like
 * training batches nothing trained on. */
static void test_inference_mode_validation(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		train_epoch(&w, 0, 3);
		for (int i = 0; i < 2; i++) {
			data(&w, 0);
			w.ts += 3000;	/* eval forward */
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "train end + 2 batches + end, per epoch");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 4, "only iterator ends exhausted");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "an eval forward per validation batch");
	ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "none in steps");
	check_well_formed(&w);
	world_free(&w);
}

/* Updates by hand first, an optimizer later: steps switch from batches to optimizer steps. */
static void test_optimizer_appears_later(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 3; i++) {
		data(&w, 0);
		manual_update(&w);
	}
	data(&w, 0);
	train_epoch(&w, 0, 3);
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "data_load"), 3, "from batches first");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "optimizer_step"), 3, "then optimizer steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}


/* An evaluation loop that loads batches with grad on and disables it around the model call
 * only (HF Trainer's prediction_step): with the forward seen (Python frames) or not. */
static void test_eval_nograd_around_forward(void)
{
	for (int exact = 0; exact < 2; exact++) {
		struct world w;

		world_init(&w, 1000);
		for (int e = 0; e < 2; e++) {
			train_epoch(&w, 0, 3);
			for (int i = 0; i < 2; i++) {
				data(&w, 0);
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);
				if (exact) {
					feed(&w, TI_FORWARD_ENTER, "Model", 0, 0);
					w.ts += 3000;
					feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
				} else {
					w.ts += 3000;
				}
				feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			}
			data(&w, 0);	/* the evaluation loop's end */
		}
		collect(&w, true);
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
		ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
		ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "an eval forward per batch, under the epoch");
		ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "none in steps");
		ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "train end + 2 batches + end, per epoch");
		ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 4, "only iterator ends exhausted");
		check_well_formed(&w);
		world_free(&w);
	}
}

/* A validation batch whose module is in eval mode (module.training read by Python frames)
 * under inference_mode, which the tree does not see: a validation batch, not a step. */
static void test_eval_mode_module_forward(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		train_epoch(&w, 0, 3);
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			feed(&w, TI_FORWARD_ENTER, "Model", 0, 0);
			w.ts += 3000;
			feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 6, "eval forwards under the epoch");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}

/* K batches fetched back to back, then trained on (HF Trainer's get_batch_samples); with
 * `ahead`, a wrapper that fetches one batch ahead (accelerate, Lightning): the epoch's first
 * fetch and the StopIteration one shift the fetches by one. */
static void prefetch_epoch(struct world *w, int steps, int k, bool ahead)
{
	if (ahead)
		data(w, 0);
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < k; i++)
			data(w, 0);
		for (int i = 0; i < k; i++) {
			feed(w, TI_FORWARD_ENTER, "Model", 0, 1);
			w->ts += 2000;
			feed(w, TI_FORWARD_EXIT, NULL, 0, 0);
			backward(w);
		}
		optimizer(w);
	}
	if (!ahead)
		data(w, 0);	/* StopIteration */
}

static void test_prefetched_batches(void)
{
	for (int ahead = 0; ahead < 2; ahead++) {
		struct world w;

		world_init(&w, 1000);
		for (int e = 0; e < 3; e++)
			prefetch_epoch(&w, 2, 3, ahead);
		collect(&w, true);
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 3, "epochs");
		ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per optimizer step");
		ASSERT_EQ(count(&w, "data_load", "step"), 18, "K data_loads in each step");
		ASSERT_EQ(count_mode(&w, "train", "step"), 18, "K forwards in each step");
		ASSERT_EQ(count(&w, "backward", "step"), 18, "K backwards in each step");
		/* the StopIteration __next__ (ahead: the epoch's first fetch, which the tree takes
		 * for the last loop's end; the first epoch's lies before it) */
		ASSERT_EQ(count(&w, "data_load", "epoch") + count(&w, "data_load", "cirron.session"),
			  3, "one more fetch per epoch");
		ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 3, "taken for loop ends");
		check_well_formed(&w);
		world_free(&w);
	}
}

int main(void)
{
	RUN_TEST(test_plain_loop_with_validation);
	RUN_TEST(test_gradient_accumulation);
	RUN_TEST(test_loop_without_dataloader);
	RUN_TEST(test_epochs_without_iterator_identity);
	RUN_TEST(test_nested_user_regions);
	RUN_TEST(test_attach_mid_run);
	RUN_TEST(test_other_threads_ignored);
	RUN_TEST(test_crash_leaves_incomplete);
	RUN_TEST(test_cuda_counters_land_on_spans);
	RUN_TEST(test_closure_optimizer);
	RUN_TEST(test_two_optimizers_per_batch);
	RUN_TEST(test_manual_updates_with_dataloader);
	RUN_TEST(test_manual_updates_without_dataloader);
	RUN_TEST(test_inference_mode_validation);
	RUN_TEST(test_optimizer_appears_later);
	RUN_TEST(test_eval_nograd_around_forward);
	RUN_TEST(test_eval_mode_module_forward);
	RUN_TEST(test_prefetched_batches);
	return unit__done();
}
