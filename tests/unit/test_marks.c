// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks from printed output: the forms real jobs print, line assembly across writes,
// carriage-return redraws, binary output and writes over the copy bound.
#include <math.h>
#include "tree/marks.h"
#include "unit.h"

struct got {
	int n;
	char name[32][MARKS_NAME_MAX];
	double value[32];
	bool summary[32];
};

static void collect(void *ctx, const char *name, double value, bool summary)
{
	struct got *g = ctx;

	if (g->n >= 32)
		return;
	snprintf(g->name[g->n], MARKS_NAME_MAX, "%s", name);
	g->value[g->n] = value;
	g->summary[g->n++] = summary;
}

static struct got feed_text(struct marks_stream *st, const char *text,
			    const struct marks_regex *rx)
{
	struct got g = {0};
	struct marks_counts c = {0};

	marks__feed(st, text, strlen(text), strlen(text), rx, &c, collect, &g);
	return g;
}

static struct got lines(const char *text)
{
	struct marks_stream st = {0};

	return feed_text(&st, text, NULL);
}

static void expect(const struct got *g, int i, const char *name, double v, bool summary)
{
	if (!ASSERT_LT(i, g->n, name))
		return;
	ASSERT_STREQ(g->name[i], name, "name");
	ASSERT_TRUE(fabs(g->value[i] - v) < 1e-12, name);
	ASSERT_EQ(g->summary[i], summary, "kind");
}

static void test_hf_dicts(void)
{
	struct got g = lines("{'loss': 0.6931, 'learning_rate': 5e-05, 'epoch': 0.5}\n"
			     "{'eval_loss': 0.61, 'eval_runtime': 0.1, 'epoch': 1.0}\n"
			     "{'train_runtime': 2.5, 'note': 'a, b', 'grad': [1, 2], 'epoch': 2.0}\n");

	ASSERT_EQ(g.n, 8, "marks");
	expect(&g, 0, "loss", 0.6931, false);
	expect(&g, 1, "learning_rate", 5e-05, false);
	expect(&g, 2, "epoch", 0.5, false);
	expect(&g, 3, "eval_loss", 0.61, true);
	expect(&g, 4, "eval_runtime", 0.1, true);
	expect(&g, 5, "epoch", 1.0, true);
	expect(&g, 6, "train_runtime", 2.5, true);
	expect(&g, 7, "epoch", 2.0, true);
}

static void test_progress_pairs(void)
{
	struct got g = lines(
		"32/32 [==============================] - 0s 2ms/step - loss: 0.6931 - accuracy: 0.5000\n"
		"Epoch 0: 100%|##########| 10/10 [00:00<00:00, 50.0it/s, v_num=0, train_loss=0.693]\n"
		"epoch 3: loss 0.7012 val_acc 0.504 (0.01s)\n"
		"Downloading 12.5 MB, eta: 0:00:01, ETA: 3s\n");

	ASSERT_EQ(g.n, 6, "marks");
	expect(&g, 0, "loss", 0.6931, false);
	expect(&g, 1, "accuracy", 0.5, false);
	expect(&g, 2, "v_num", 0, false);
	expect(&g, 3, "train_loss", 0.693, false);
	expect(&g, 4, "loss", 0.7012, false);
	expect(&g, 5, "val_acc", 0.504, false);
}

static void test_lines_across_writes(void)
{
	struct marks_stream st = {0};
	struct got g;

	g = feed_text(&st, "step=1 lo", NULL);
	ASSERT_EQ(g.n, 0, "nothing before the line ends");
	g = feed_text(&st, "ss=0.25", NULL);
	ASSERT_EQ(g.n, 0, "still nothing");
	g = feed_text(&st, "\n", NULL);
	ASSERT_EQ(g.n, 2, "the line, whole");
	expect(&g, 0, "step", 1, false);
	expect(&g, 1, "loss", 0.25, false);
}

static void test_tqdm_redraws(void)
{
	struct marks_stream st = {0};
	struct got g = feed_text(&st, "\r 10%|#  | 1/10 [00:01<00:09, loss=0.5]"
				      "\r 20%|## | 2/10 [00:02<00:08, loss=0.5]"
				      "\r 30%|###| 3/10 [00:03<00:07, loss=0.4]\n", NULL);

	ASSERT_EQ(g.n, 2, "a mark when the value changes");
	expect(&g, 0, "loss", 0.5, false);
	expect(&g, 1, "loss", 0.4, false);
	g = feed_text(&st, "loss=0.4\n", NULL);
	ASSERT_EQ(g.n, 1, "a printed line is always a mark");
}

static void test_binary_and_bound(void)
{
	struct marks_stream st = {0};
	struct marks_counts c = {0};
	struct got g = {0};
	char bin[] = "loss=1.5\x01\x02\xff\x00z\nacc=0.5\n";

	marks__feed(&st, bin, sizeof(bin) - 1, sizeof(bin) - 1, NULL, &c, collect, &g);
	ASSERT_EQ(g.n, 1, "the binary line skipped, the next one read");
	expect(&g, 0, "acc", 0.5, false);
	ASSERT_EQ(c.lines_skipped, 1, "skipped");

	/* a write over the copy bound: its last, cut line and the unseen rest are dropped */
	g.n = 0;
	marks__feed(&st, "a=1\nb=2", 7, 5000, NULL, &c, collect, &g);
	marks__feed(&st, "ss=3\nc=4\n", 9, 9, NULL, &c, collect, &g);
	ASSERT_EQ(g.n, 2, "a and c");
	expect(&g, 0, "a", 1, false);
	expect(&g, 1, "c", 4, false);

	/* ANSI colours do not hide a key */
	g = feed_text(&st, "\x1b[1mloss\x1b[0m: 0.125\n", NULL);
	ASSERT_EQ(g.n, 1, "coloured");
	expect(&g, 0, "loss", 0.125, false);
}

static void test_regex(void)
{
	struct marks_regex rx;
	char err[128];
	struct marks_stream st = {0};
	struct got g;

	ASSERT_OK(marks_regex__compile(&rx, "it ([0-9]+) took (?<took_s>[0-9.]+)s "
				       "\\(x(?P<ratio>[0-9.]+)\\)", err, sizeof(err)), err);
	g = feed_text(&st, "it 3 took 1.25s (x0.5) it 4 took 2.5s (x0.25)\n", &rx);
	ASSERT_EQ(g.n, 4, "two matches, two named groups each");
	expect(&g, 0, "took_s", 1.25, false);
	expect(&g, 1, "ratio", 0.5, false);
	expect(&g, 2, "took_s", 2.5, false);
	expect(&g, 3, "ratio", 0.25, false);
	marks_regex__free(&rx);
	ASSERT_ERR(marks_regex__compile(&rx, "(a)(b)", err, sizeof(err)), "no named group");
	ASSERT_ERR(marks_regex__compile(&rx, "(?:a)(?<x>b)", err, sizeof(err)), "(?:");
	ASSERT_ERR(marks_regex__compile(&rx, "(?<x>[)", err, sizeof(err)), "bad regex");
}

int main(void)
{
	RUN_TEST(test_hf_dicts);
	RUN_TEST(test_progress_pairs);
	RUN_TEST(test_lines_across_writes);
	RUN_TEST(test_tqdm_redraws);
	RUN_TEST(test_binary_and_bound);
	RUN_TEST(test_regex);
	return unit__done();
}
