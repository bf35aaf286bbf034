// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The models a job trains, found where real code keeps them: the outermost forward's Module
// (Python frames), __main__'s globals, the locals of every thread's running frames, and the
// attributes of the objects found there, two levels deep (HF's Trainer.model, Lightning's
// Trainer -> strategy -> LightningModule, a Keras model held by a trainer object). Wrappers
// are taken off (DistributedDataParallel's `module`, torch.compile's `_orig_mod`). When
// torch optimizers are found (their param_groups), the models are the largest Modules
// holding parameters they update, each under the name it was found by (a GAN's generator
// and discriminator: two); without optimizers, the Module with the most parameters.
// A model found several ways takes the name of the outermost: a global, then the locals and
// attributes of main()'s frame, before a callee's parameter that holds it for a moment
// (print_stats(model) inside a trainer's fit(): `trainer.model`, at every look).
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"
#include "pyobj/py_models.h"

#define CANDIDATES_MAX	2048
#define ATTR_DEPTH	2
#define LIST_SIZE	16
#define LIST_ITEMS	24
#define LIST_MAX	4096

struct candidate {
	uint64_t obj;
	char name[128];
	const char *found_by;
	int depth;
	int rank;	/* how far in it was found: 0 a global, 1 + the frame's place from the
			 * thread's oldest, an attribute its object's; INT_MAX: not by name */
};

struct search {
	int pid;
	const struct py_layout *l;
	uint32_t minor;
	struct py_types *types;
	struct candidate *c;
	size_t n;
	uint64_t *opt;		/* parameters the optimizers update */
	size_t nopt, capopt;
	size_t optimizers;
	/* for the callbacks */
	const char *found_by, *prefix;
	int depth, rank;
};

static void add(struct search *s, uint64_t obj, const char *name, const char *found_by,
		int depth, int rank)
{
	struct candidate *c;

	if (!obj || s->n == CANDIDATES_MAX)
		return;
	if (!name[0])	/* a method's `self`, a value on a frame's stack, the forward's Module */
		rank = INT_MAX;
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].obj == obj) {	/* found already: named by the outermost way */
			c = &s->c[i];
			if (rank < c->rank) {
				snprintf(c->name, sizeof(c->name), "%s", name);
				if (strcmp(c->found_by, "forward") != 0)
					c->found_by = found_by;
				c->rank = rank;
			}
			return;
		}
	c = &s->c[s->n++];
	c->obj = obj;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->found_by = found_by;
	c->depth = depth;
	c->rank = rank;
}

static bool add_entry(const char *key, uint64_t value, void *ctx)
{
	struct search *s = ctx;
	char name[128];

	if (key[0] == '_' && key[1] == '_')
		return false;	/* __builtins__, __loader__, ... */
	if (s->prefix)
		snprintf(name, sizeof(name), "%s.%s", s->prefix, key);
	else
		snprintf(name, sizeof(name), "%s", key);
	add(s, value, name, s->found_by, s->depth, s->rank);
	return false;
}

struct local {
	uint64_t value;
	char name[64];
	int outer;
};

struct locals {
	struct local *v;
	size_t n, cap;
};

static void add_local(uint64_t value, const char *name, int outer, void *ctx)
{
	struct locals *ls = ctx;

	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? 2 * ls->cap : 256;
		struct local *v = cap <= CANDIDATES_MAX ? realloc(ls->v, cap * sizeof(*v)) : NULL;

		if (!v)
			return;
		ls->v = v;
		ls->cap = cap;
	}
	ls->v[ls->n].value = value;
	ls->v[ls->n].outer = outer;
	/* inside a method: `self` is no name the job knows its model by */
	snprintf(ls->v[ls->n++].name, sizeof(ls->v[0].name), "%s", strcmp(name, "self") ? name : "");
}

/* list object -> its items (at most LIST_MAX); NULL when not a list */
static uint64_t *list_items(struct search *s, uint64_t list, int64_t *n)
{
	struct py_type *t = py_types__classify(s->types, s->pid, list);
	uint64_t items = 0, *v;

	*n = 0;
	if (!t || strcmp(t->name, "list") != 0 ||
	    !procfs__read_mem(s->pid, list + LIST_SIZE, n, 8) || *n <= 0 || *n > LIST_MAX ||
	    !procfs__read_mem(s->pid, list + LIST_ITEMS, &items, 8) || !items)
		return NULL;
	v = calloc((size_t)*n, 8);
	if (v && !procfs__read_mem(s->pid, items, v, (size_t)*n * 8)) {
		free(v);
		v = NULL;
	}
	return v;
}

static uint64_t dict_get(struct search *s, uint64_t dict, const char *key)
{
	return py_dict__get(s->pid, s->l, dict, key);
}

/* An instance's attribute (its __dict__, or its values only). */
static uint64_t attr_get(struct search *s, uint64_t obj, const char *key)
{
	return py_obj__attr(s->pid, s->l, s->minor, obj, key);
}

/* A torch optimizer: the parameters of its param_groups (a list of dicts with "params").
 * Returns false when it keeps none in its __dict__ (a wrapper: its attributes are looked at). */
static bool add_optimizer(struct search *s, uint64_t obj)
{
	uint64_t groups = attr_get(s, obj, "param_groups");
	uint64_t *g, *p;
	int64_t ng = 0, np = 0;

	g = groups ? list_items(s, groups, &ng) : NULL;
	if (!g)
		return false;
	for (int64_t i = 0; i < ng; i++) {
		p = list_items(s, dict_get(s, g[i], "params"), &np);
		for (int64_t k = 0; p && k < np; k++) {
			if (s->nopt == s->capopt) {
				size_t cap = s->capopt ? 2 * s->capopt : 256;
				uint64_t *v = realloc(s->opt, cap * 8);

				if (!v)
					break;
				s->opt = v;
				s->capopt = cap;
			}
			s->opt[s->nopt++] = p[k];
		}
		free(p);
	}
	free(g);
	s->optimizers++;
	return true;
}

struct only_child {
	int n;
	uint64_t child;
	bool wrapper_name;
};

static bool count_child(const char *key, uint64_t value, void *ctx)
{
	struct only_child *c = ctx;

	c->n++;
	c->child = value;
	c->wrapper_name = !strcmp(key, "module") || !strcmp(key, "_orig_mod");
	return c->n > 1;
}

static bool any_entry(const char *key, uint64_t value, void *ctx)
{
	(void)key;
	(void)value;
	(void)ctx;
	return true;
}

/* DistributedDataParallel, torch.compile's OptimizedModule: no parameters of their own,
 * one child named module / _orig_mod. */
static uint64_t unwrap(struct search *s, uint64_t module)
{
	for (int depth = 0; depth < 4; depth++) {
		struct only_child c = {};

		if (py_dict__each(s->pid, s->l, attr_get(s, module, "_parameters"), any_entry, NULL))
			break;
		py_dict__each(s->pid, s->l, attr_get(s, module, "_modules"), count_child, &c);
		if (c.n != 1 || !c.wrapper_name)
			break;
		module = c.child;
	}
	return module;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_set(const uint64_t *set, size_t n, uint64_t v)
{
	return n && bsearch(&v, set, n, sizeof(v), cmp_u64);
}

/* How many of a's parameters are in the sorted set. */
static size_t overlap(const struct py_params *a, const uint64_t *set, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n; i++)
		k += in_set(set, n, a->v[i].obj);
	return k;
}

static uint64_t *sorted_objs(const struct py_params *p)
{
	uint64_t *v = calloc(p->n ? p->n : 1, 8);

	for (size_t i = 0; v && i < p->n; i++)
		v[i] = p->v[i].obj;
	if (v)
		qsort(v, p->n, 8, cmp_u64);
	return v;
}

static void expand(struct search *s, const struct candidate *c, const struct py_type *t)
{
	if (c->depth >= ATTR_DEPTH || !t->managed_dict)
		return;
	s->found_by = "attribute";
	s->prefix = c->name[0] ? c->name : t->name;
	s->depth = c->depth + 1;
	s->rank = c->rank;
	py_obj__attrs_each(s->pid, s->l, s->minor, c->obj, add_entry, s);
}

/* Looks at the candidates [from, s->n) in order; deep: the attributes of the plain objects
 * among them are candidates too (a trainer, a strategy, an optimizer wrapper). */
static void classify(struct search *s, struct py_models *out, size_t from, bool deep)
{
	for (size_t i = from; i < s->n; i++) {
		struct candidate c = s->c[i];
		struct py_type *t = py_types__classify(s->types, s->pid, c.obj);
		struct py_model *m;
		uint64_t module;

		if (!t || t->kind == PYK_LOSS)
			continue;
		if (t->kind == PYK_OPTIMIZER && add_optimizer(s, c.obj))
			continue;
		if (t->kind != PYK_MODULE) {
			if (deep)
				expand(s, &c, t);
			continue;
		}
		module = unwrap(s, c.obj);
		for (size_t k = 0; k < out->n; k++)
			if (out->v[k].module == module)
				goto next;
		m = realloc(out->v, (out->n + 1) * sizeof(*m));
		if (!m)
			return;
		out->v = m;
		m = &out->v[out->n];
		memset(m, 0, sizeof(*m));
		if (py_model__params(s->pid, s->l, module, &m->params) || !m->params.n) {
			py_params__free(&m->params);
			continue;
		}
		m->module = module;
		m->cand = i;	/* named once all are in: a later, outer one may name it */
		snprintf(m->name, sizeof(m->name), "%s", t->name);
		out->n++;
next:;
	}
}

/* The farthest in that a model found so far was named (a callee's parameter: large). */
static int named_at(const struct search *s, const struct py_models *out)
{
	int rank = 0;

	for (size_t k = 0; k < out->n; k++)
		if (s->c[out->v[k].cand].rank > rank)
			rank = s->c[out->v[k].cand].rank;
	return rank;
}

/* The roots first; then the attributes of the objects there, two levels deep when the roots
 * hold no model or no optimizer (a framework's trainer: a few ms; the first look comes as
 * training begins), else one level and only of the objects of frames outer than where a
 * model was named: a trainer there holds it by a name that lasts (trainer.model), where the
 * job may be in a callee for a moment (a script's own globals and locals: none). */
static void classify_all(struct search *s, struct py_models *out)
{
	size_t roots = s->n;
	bool found;
	int below;

	classify(s, out, 0, false);
	found = out->n && s->optimizers;
	below = found ? named_at(s, out) : INT_MAX;
	for (size_t i = 0; i < roots; i++) {
		struct candidate c = s->c[i];
		struct py_type *t = c.rank < below ? py_types__classify(s->types, s->pid, c.obj) : NULL;

		if (t && t->kind != PYK_MODULE && t->kind != PYK_LOSS &&
		    (t->kind != PYK_OPTIMIZER || !s->optimizers))
			expand(s, &c, t);
	}
	classify(s, out, roots, !found);
}

/* Keeps the models: the largest Modules holding parameters the optimizers update (a Module
 * whose parameters all belong to a larger one found too is part of it), else the largest. */
static void choose(struct search *s, struct py_models *out)
{
	bool *keep = calloc(out->n + 1, sizeof(bool));
	size_t best = 0, k = 0;

	if (!keep)
		return;
	if (s->nopt)
		qsort(s->opt, s->nopt, 8, cmp_u64);
	for (size_t i = 0; i < out->n; i++) {
		keep[i] = s->nopt ? overlap(&out->v[i].params, s->opt, s->nopt) > 0 : false;
		if (out->v[i].params.n > out->v[best].params.n)
			best = i;
	}
	if (!s->nopt && out->n)
		keep[best] = true;
	for (size_t i = 0; i < out->n; i++) {
		uint64_t *mine;

		if (!keep[i])
			continue;
		mine = sorted_objs(&out->v[i].params);
		for (size_t j = 0; mine && j < out->n; j++) {
			size_t ni = out->v[i].params.n, nj = out->v[j].params.n;

			/* only a larger one, or an equal one found earlier, takes it in */
			if (j == i || !keep[j] || nj < ni || (nj == ni && i < j))
				continue;
			if (overlap(&out->v[j].params, mine, ni) == ni) {
				keep[i] = false;	/* all of it is in model j */
				break;
			}
		}
		free(mine);
	}
	for (size_t i = 0; i < out->n; i++) {
		if (keep[i])
			out->v[k++] = out->v[i];
		else
			py_params__free(&out->v[i].params);
	}
	out->n = k;
	free(keep);
}

int py_models__find(int pid, const struct py_layout *l, struct py_types *types,
		    const struct py_roots *r, struct py_models *out)
{
	struct search s = { .pid = pid, .l = l, .minor = r->minor, .types = types };

	memset(out, 0, sizeof(*out));
	s.c = calloc(CANDIDATES_MAX, sizeof(*s.c));
	if (!s.c)
		return -ENOMEM;
	if (r->forward)	/* named by where else it is found */
		add(&s, r->forward, "", "forward", ATTR_DEPTH, INT_MAX);
	if (r->main_dict) {
		s.found_by = "main_globals";
		s.rank = 0;
		py_dict__each(pid, l, r->main_dict, add_entry, &s);
	}
	if (r->interp) {	/* outermost frames first: main()'s names, not a callee's */
		struct locals ls = {};

		out->frames_err = py_frames__each(pid, l, r->minor, r->interp, add_local, &ls);
		out->locals = ls.n;
		if (out->frames_err > 0 && r->whole_frames) {	/* a callee's `self` alone might
								 * pass for the model: again */
			free(ls.v);
			free(s.c);
			return -EAGAIN;
		}
		for (size_t i = ls.n; i-- > 0;)
			add(&s, ls.v[i].value, ls.v[i].name, "frame_locals", 0,
			    ls.v[i].outer < INT_MAX - 1 ? 1 + ls.v[i].outer : INT_MAX - 1);
		free(ls.v);
	}
	out->roots = s.n;
	classify_all(&s, out);
	out->candidates = s.n;
	for (size_t k = 0; k < out->n; k++) {
		const struct candidate *c = &s.c[out->v[k].cand];

		if (c->name[0])
			snprintf(out->v[k].name, sizeof(out->v[k].name), "%s", c->name);
		out->v[k].found_by = c->found_by;
		out->v[k].rank = c->rank;
	}
	choose(&s, out);
	out->optimizers = s.optimizers;
	free(s.opt);
	free(s.c);
	return out->n ? 0 : -ENOENT;
}

void py_models__free(struct py_models *m)
{
	for (size_t i = 0; i < m->n; i++)
		py_params__free(&m->v[i].params);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int py_models__dup(const struct py_models *m, struct py_models *out)
{
	memset(out, 0, sizeof(*out));
	out->v = calloc(m->n ? m->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct py_params *p = &m->v[i].params;

		out->v[i] = m->v[i];
		out->v[i].params = (struct py_params){ .n = p->n, .cap = p->n };
		out->v[i].params.v = malloc((p->n ? p->n : 1) * sizeof(*p->v));
		out->n = i + 1;
		if (!out->v[i].params.v) {
			py_models__free(out);
			return -ENOMEM;
		}
		memcpy(out->v[i].params.v, p->v, p->n * sizeof(*p->v));
	}
	out->optimizers = m->optimizers;
	return 0;
}
