// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks from printed output: the forms real jobs print, line assembly across writes,
// carriage-return redraws, binary output and writes over the copy bound. The framework lines
// are what transformers 5.24, lightning 2.6.6 (tqdm and rich bars), keras 3.15.1, tqdm
// 4.70.1 and logging wrote (raw bytes: /work/notes/marks-raw at the time of issue 25), and
// what they print that is no metric.
#include <math.h>
#include "marks/marks.h"
#include "unit.h"

#define GOT_MAX 64

struct got {
	int n;
	char name[GOT_MAX][MARKS_NAME_MAX];
	double value[GOT_MAX];
	bool summary[GOT_MAX];
};

static void collect(void *ctx, const char *name, double value, bool summary)
{
	struct got *g = ctx;

	if (g->n >= GOT_MAX)
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

/* The marks as "name=value" (":S" for a summary), space-separated, in order. */
static void got_is(const struct got *g, const char *want, const char *what)
{
	char buf[4096] = "";
	size_t o = 0;

	for (int i = 0; i < g->n && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s=%.10g%s", i ? " " : "",
				      g->name[i], g->value[i], g->summary[i] ? ":S" : "");
	ASSERT_STREQ(buf, want, what);
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

	/* v_num is the logger's version; val_acc on a line left on screen ends an epoch */
	ASSERT_EQ(g.n, 5, "marks");
	expect(&g, 0, "loss", 0.6931, false);
	expect(&g, 1, "accuracy", 0.5, false);
	expect(&g, 2, "train_loss", 0.693, false);
	expect(&g, 3, "loss", 0.7012, true);
	expect(&g, 4, "val_acc", 0.504, true);
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

/* transformers 5.24 quotes the numbers of its log dicts; evaluate() returns floats. */
static void test_hf5_quoted_dicts(void)
{
	struct got g = lines(
		"{'loss': '3.646', 'grad_norm': '1.354', 'learning_rate': '0.0009375', 'epoch': '0.25'}\n"
		"{'eval_loss': '3.629', 'eval_runtime': '0.5563', 'eval_samples_per_second': '14.38', "
		"'eval_steps_per_second': '3.595', 'epoch': '1'}\n"
		"{'loss': '3.596', 'grad_norm': 'nan', 'learning_rate': '6.25e-05', 'epoch': '1.75'}\n"
		"{'train_runtime': '6.897', 'train_loss': '3.628', 'epoch': '2'}\n"
		"{'eval_loss': 3.629917621612549, 'epoch': 2.0}\n"
		"{\"loss\": 0.5, \"step\": 10, \"tags\": [\"a\", \"b\"], \"lr\": \"1e-3\"}\n");

	got_is(&g, "loss=3.646 grad_norm=1.354 learning_rate=0.0009375 epoch=0.25 "
		   "eval_loss=3.629:S eval_runtime=0.5563:S eval_samples_per_second=14.38:S "
		   "eval_steps_per_second=3.595:S epoch=1:S "
		   "loss=3.596 learning_rate=6.25e-05 epoch=1.75 "
		   "train_runtime=6.897:S train_loss=3.628:S epoch=2:S "
		   "eval_loss=3.629917622:S epoch=2:S loss=0.5 step=10 lr=0.001", "hf 5");
}

static void test_scalar_reprs(void)
{
	struct got g = lines(
		"loss tensor(0.5586)\n"
		"loss: tensor(0.5123, grad_fn=<NllLossBackward0>)\n"
		"val_loss=tensor(0.25, device='cuda:0')\n"
		"acc: np.float64(0.5) f1=numpy.float32(0.75) auc: array(0.875, dtype=float32)\n"
		"{'loss': np.float32(0.55858254), 'acc': np.float64(0.5), 'n': tensor(3)}\n"
		"tensor(0.5586, grad_fn=<MseLossBackward0>)\n"
		"loss: tensor([0.5, 0.25]) w: tensor(0.5)x\n");

	got_is(&g, "loss=0.5586 loss=0.5123 val_loss=0.25:S acc=0.5 f1=0.75 auc=0.875 "
		   "loss=0.55858254 acc=0.5 n=3", "reprs");
}

/* Keras 3 model.fit(verbose=1): a frame per update, redrawn with \b and \r, coloured; the
 * epoch's last frame, with its validation values, stays (a newline). verbose=2: one line. */
static void test_keras3_progress(void)
{
	struct marks_stream st = {0};
	struct got g = feed_text(&st,
		"Epoch 1/2\n"
		"\r\x1b[1m 1/16\x1b[0m \x1b[32m\xe2\x94\x81\x1b[0m\x1b[37m\xe2\x94\x81\xe2\x94\x81\x1b[0m "
		"\x1b[1m0s\x1b[0m 33ms/step - loss: 4.4654 - mae: 1.8510\b\b\b\b\b\b\b\b"
		"\r\x1b[1m10/16\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\x1b[0m\x1b[37m\xe2\x94\x81\x1b[0m "
		"\x1b[1m0s\x1b[0m 6ms/step - loss: 1.2639 - mae: 1.8510 \b\b\b\b\b\b\b\b"
		"\r\x1b[1m16/16\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\x1b[0m\x1b[37m\x1b[0m "
		"\x1b[1m0s\x1b[0m 6ms/step - loss: 1.0668 - mae: 0.7908\b\b\b\b\b\b\b\b"
		"\r\x1b[1m16/16\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\x1b[0m\x1b[37m\x1b[0m "
		"\x1b[1m0s\x1b[0m 14ms/step - loss: 1.0668 - mae: 0.7908 - val_loss: 0.8993 - "
		"val_mae: 0.8367\n"
		"16/16 - 1s - 54ms/step - loss: 1.0668 - mae: 0.7908 - val_loss: 0.8993 - val_mae: 0.8367\n"
		"\r\x1b[1m1/1\x1b[0m \x1b[1m0s\x1b[0m 17ms/step\b\b\b\r\x1b[1m1/1\x1b[0m 17ms/step\n",
		NULL);

	/* a redraw gives a value again only when it becomes a summary; the verbose=2 line is
	 * a line of its own */
	got_is(&g, "loss=4.4654 mae=1.851 loss=1.2639 loss=1.0668 mae=0.7908 "
		   "loss=1.0668:S mae=0.7908:S val_loss=0.8993:S val_mae=0.8367:S "
		   "loss=1.0668:S mae=0.7908:S val_loss=0.8993:S val_mae=0.8367:S", "keras");
}

/* Keras on TensorFlow (tensorflow-cpu 2.21): TensorFlow's own log lines (absl's prefix: a
 * source file and line, `port.cc:153]`) are no metric; tf-keras 2.21's verbose=2 epoch line
 * puts its times last, Keras 3's first. */
static void test_keras_tensorflow_lines(void)
{
	struct got g = lines(
		"I0000 00:00:1796180794.177528   20575 port.cc:153] oneDNN custom operations are on."
		" You may see slightly different numerical results.\n"
		"4/4 - 1s - loss: 0.7880 - accuracy: 0.4297 - val_loss: 0.8341 - "
		"val_accuracy: 0.4531 - 846ms/epoch - 212ms/step\n"
		"4/4 - 0s - 29ms/step - loss: 0.5154 - mae: 0.5698 - val_loss: 0.5186 - "
		"val_mae: 0.5804\n");

	got_is(&g, "loss=0.788:S accuracy=0.4297:S val_loss=0.8341:S val_accuracy=0.4531:S "
		   "loss=0.5154:S mae=0.5698:S val_loss=0.5186:S val_mae=0.5804:S", "tensorflow");
}

/* Keras 3's bar (verbose=1), epoch after epoch: each epoch's bar is a new one after its
 * "Epoch N/M" line, so a value equal to the last epoch's is the new epoch's all the same. */
static void test_keras_bars_epoch_after_epoch(void)
{
	struct marks_stream st = {0};
	struct got g = feed_text(&st,
		"Epoch 1/2\n"
		"\r1/2 - 0s 9ms/step - loss: 0.7000\b\b\b\b"
		"\r2/2 - 0s 9ms/step - loss: 0.6000 - val_acc: 0.5000 - val_loss: 0.6500\n"
		"Epoch 2/2\n"
		"\r1/2 - 0s 9ms/step - loss: 0.6000\b\b\b\b"
		"\r2/2 - 0s 9ms/step - loss: 0.5000 - val_acc: 0.5000 - val_loss: 0.6000\n", NULL);

	got_is(&g, "loss=0.7 loss=0.6:S val_acc=0.5:S val_loss=0.65:S "
		   "loss=0.6 loss=0.5:S val_acc=0.5:S val_loss=0.6:S", "two epochs");
}

/* Lightning 2.6 with TQDMProgressBar: one bar redrawn with \r, the validation bar below it;
 * the epoch's values join the postfix. A terminal narrower than the postfix cuts it. */
static void test_lightning_tqdm(void)
{
	struct marks_stream st = {0};
	struct got g = feed_text(&st,
		"\rEpoch 0:  88%|########8 | 7/8 [00:00<00:00,  8.56it/s, v_num=8, train_loss_step=0.678]"
		"\rEpoch 0: 100%|##########| 8/8 [00:00<00:00,  8.34it/s, v_num=8, train_loss_step=0.749]"
		"\n\rValidation DataLoader 0: 100%|##########| 3/3 [00:00<00:00, 15.01it/s]\x1b[A"
		"\rEpoch 0: 100%|##########| 8/8 [00:00<00:00,  8.28it/s, v_num=8, "
		"train_loss_step=0.749, val_loss=0.726, val_acc=0.333]"
		"\rEpoch 0: 100%|##########| 8/8 [00:00<00:00,  8.28it/s, v_num=8, "
		"train_loss_step=0.749, val_loss=0.726, val_acc=0.333, train_loss_epoch=0.724]"
		"\rEpoch 1:  12%|#2        | 1/8 [00:00<00:00, 10.58it/s, v_num=8, "
		"train_loss_step=0.699, val_loss=0.726, val_acc=0.333, train_loss_ep"
		"\rEpoch 1:  25%|##5       | 2/8 [00:00<00:00, 10.58it/s, v_num=8, "
		"train_loss_step=0.693, val_loss=0.726, val_acc=0.3"
		"\rEpoch 1: 100%|##########| 8/8 [00:00<00:00, 10.57it/s, v_num=8, "
		"train_loss_step=0.724, val_loss=0.714, val_acc=0.333, train_loss_epoch=0.705]\n",
		NULL);

	got_is(&g, "train_loss_step=0.678 train_loss_step=0.749 val_loss=0.726:S val_acc=0.333:S "
		   "train_loss_epoch=0.724:S train_loss_step=0.699 train_loss_step=0.693 "
		   "train_loss_step=0.724 val_loss=0.714:S train_loss_epoch=0.705:S", "tqdm bar");
}

/* Lightning 2.6's default bar when rich is installed: on a terminal a live display of rows,
 * redrawn after "\r ESC[2K ESC[1A ESC[2K ..."; the metrics in rows below the bar. */
static void test_rich_live(void)
{
	struct marks_stream st = {0};
	const char *frame_a =
		"\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K"
		"Epoch 1/1  \x1b[35m\xe2\x94\x81\xe2\x94\x81\x1b[0m 1/8 0:00:00 \xe2\x80\xa2 -:--:-- "
		"0.00it/s v_num: 7.000 train_loss_step: 0.699    \n"
		"          \x1b[3mval_loss: 0.726 val_acc: 0.333         \x1b[0m\n"
		"          \x1b[3mtrain_loss_epoch: 0.724                \x1b[0m";
	const char *frame_b =
		"\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K"
		"Epoch 1/1  \x1b[35m\xe2\x94\x81\xe2\x94\x81\x1b[0m 2/8 0:00:00 \xe2\x80\xa2 0:00:01 "
		"8.34it/s v_num: 7.000 train_loss_step: 0.693    \n"
		"          \x1b[3mval_loss: 0.726 val_acc: 0.333         \x1b[0m\n"
		"          \x1b[3mtrain_loss_epoch: 0.724                \x1b[0m";
	struct got g;

	g = feed_text(&st, frame_a, NULL);
	got_is(&g, "train_loss_step=0.699 val_loss=0.726:S val_acc=0.333:S "
		   "train_loss_epoch=0.724:S", "first frame (its last row read at the write's end)");
	g = feed_text(&st, frame_b, NULL);
	got_is(&g, "train_loss_step=0.693", "the next: what changed");
	g = feed_text(&st, frame_b, NULL);
	got_is(&g, "", "the same frame again");
	g = feed_text(&st, "\n[{'val_loss': 0.726}]\n", NULL);
	got_is(&g, "val_loss=0.726:S", "the display stopped: a printed line is a line");

	/* the results table rich prints after validate() and test() */
	g = lines("\xe2\x94\x8f\xe2\x94\x81\xe2\x94\x81\xe2\x94\x93\n"
		  "\xe2\x94\x83      Validate metric      \xe2\x94\x83       DataLoader 0        \xe2\x94\x83\n"
		  "\xe2\x94\x82          val_acc          \xe2\x94\x82    0.8333333134651184     \xe2\x94\x82\n"
		  "\xe2\x94\x82\x1b[36m         test_loss         \x1b[0m\xe2\x94\x82\x1b[35m    "
		  "0.7117473483085632     \x1b[0m\xe2\x94\x82\n"
		  "| lr | 0.001 |\n"
		  "\xe2\x94\x82 0 \xe2\x94\x82 net  \xe2\x94\x82 Sequential       \xe2\x94\x82    610 \xe2\x94\x82 train \xe2\x94\x82     0 \xe2\x94\x82\n"
		  "\xe2\x94\x82 dense (Dense)   \xe2\x94\x82 (None, 32)  \xe2\x94\x82   544 \xe2\x94\x82\n");
	got_is(&g, "val_acc=0.8333333135:S test_loss=0.7117473483:S lr=0.001", "tables");

	/* to a pipe rich prints the last frame once, wrapping the metrics column at 80 */
	g = lines("Epoch 1/1  \xe2\x94\x81\xe2\x94\x81 8/8 0:00:00 \xe2\x80\xa2 0:00:00 27.13it/s v_num: 0.000      \n"
		  "                                                              train_loss_step:  \n"
		  "                                                              0.724 val_loss:   \n"
		  "                                                              0.714 val_acc:    \n"
		  "                                                              0.333             \n"
		  "                                                              train_loss_epoch: \n"
		  "                                                              0.705             \n"
		  "Validation \xe2\x94\x81\xe2\x94\x81 3/3 0:00:00 \xe2\x80\xa2 0:00:00 12.91it/s \n"
		  "config:\n  seed: 42\n  lr: 0.1\n");
	got_is(&g, "train_loss_step=0.724 val_loss=0.714:S val_acc=0.333:S "
		   "train_loss_epoch=0.705:S lr=0.1", "wrapped");
}

/* Plain prints, f-strings and logging lines as training scripts write them. */
static void test_prints_and_logging(void)
{
	struct got g = lines(
		"2026-11-25 04:41:52,123 - INFO - loss: 0.5\n"
		"2026-11-25 04:55:36,113 - INFO - __main__ - [RANK 0] epoch 0 step 0: loss 1.4489\n"
		"INFO:root:step=200 lr=3.0e-04 grad_norm 1.25\n"
		"Epoch [1/10], Step [100/600], Loss: 0.2345\n"
		"Epoch 1/10, Train Loss: 0.5432, Val Acc: 87.5%\n"
		"Epoch: 1 \tTraining Loss: 0.123456 \tValidation Loss: 0.234567\n"
		"iter 100: loss 2.3456, time 12.34ms, mfu 12.34%\n"
		"step 500: train loss 2.3456, val loss 2.4567\n"
		"learning rate: 0.001\n");

	got_is(&g, "loss=0.5 loss=1.4489 step=200 lr=0.0003 grad_norm=1.25 Loss=0.2345 "
		   "Train Loss=0.5432:S Val Acc=87.5:S "
		   "Epoch=1:S Training Loss=0.123456:S Validation Loss=0.234567:S "
		   "loss=2.3456 mfu=12.34 train loss=2.3456:S val loss=2.4567:S "
		   "learning rate=0.001", "prints");
}

/* What frameworks print that is no metric: banners, counts, ids, versions, paths, reprs. */
static void test_not_metrics(void)
{
	static const char *const none[] = {
		"GPU available: False, used: False",
		"TPU available: False, using: 0 TPU cores",
		"HPU available: False, using: 0 HPUs",
		"LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]",
		"Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2",
		"All distributed processes registered. Starting with 2 processes",
		"Seed set to 42",
		"world_size=8 rank=3 seed=42 v_num=0 num_workers: 4 pid 1234.5",
		"Trainable params: 610",
		"Non-trainable params: 0",
		"Total estimated model params size (MB): 0.002",
		"Modules in train mode: 5",
		"Total FLOPs: 0",
		" Total params: 579 (2.26 KB)",
		"  Num examples = 32",
		"  Number of trainable parameters = 11,456",
		"  Total optimization steps = 16",
		"`Trainer.fit` stopped: `max_epochs=2` reached.",
		"/tmp/v/lib/python3.11/site-packages/lightning/pytorch/trainer/connectors/"
		"logger_connector/logger_connector.py:76: Starting from v1.9.0, `tensorboardX` has "
		"been removed",
		"[transformers] Model config: bos_token_id must be `None` or an integer within the "
		"vocabulary (between 0 and 63), got 50256.",
		"torch 2.13.0+cpu, transformers: 5.24.0, Python 3.11.7",
		"| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |",
		"CUDA Version: 12.4",
		"Epoch 5: ReduceLROnPlateau reducing learning rate to 0.0005000000237487257.",
		"Restoring model weights from the end of the best epoch: 4.",
		"Saving checkpoint to /ckpt/epoch=3-step=100-val_loss=0.52.ckpt",
		"  (0): Linear(in_features=16, out_features=32, bias=True)",
		"Namespace(lr=0.001, epochs=10, batch_size=32)",
		"Map: 100%|##########| 100/100 [00:00<00:00, 1000.00 examples/s]",
		"Training: 100%|##########| 8/8 [00:01<00:00,  6.66it/s]",
		"Downloading 12.5 MB, eta: 0:00:01, ETA: 3s, took: 12ms, time=12:30:01",
		"Epoch 1/2",
		NULL
	};

	for (int i = 0; none[i]; i++) {
		char line[512];
		struct got g;

		snprintf(line, sizeof(line), "%s\n", none[i]);
		g = lines(line);
		if (!ASSERT_EQ(g.n, 0, none[i]))
			fprintf(stderr, "  first: %s=%g\n", g.name[0], g.value[0]);
	}
}

/* A bar's frame ends only with the next one: read when its flushed write ends, so its values
 * come with the write that showed them; not a write of a whole buffer, which a
 * block-buffered stream may have cut anywhere. */
static void test_frames_read_at_write_end(void)
{
	struct marks_stream st = {0};
	static char block[MARKS_FLUSHED_BELOW];
	struct got g;

	g = feed_text(&st, "\r 10%|#  | 1/10 [00:01<00:09, loss=0.5]", NULL);
	got_is(&g, "loss=0.5", "tqdm's first frame, at its write");
	g = feed_text(&st, "\r 20%|## | 2/10 [00:02<00:08, loss=0.5]", NULL);
	got_is(&g, "", "the same value redrawn");
	g = feed_text(&st, "\r 30%|###| 3/10 [00:03<00:07, loss=0.25]", NULL);
	got_is(&g, "loss=0.25", "a changed value");
	g = feed_text(&st, "\n", NULL);
	got_is(&g, "", "the bar's last frame stays: nothing new");

	/* Keras: "\b\b...\r" before each next frame */
	g = feed_text(&st, "\r1/4 \xe2\x94\x81 0s 30ms/step - loss: 1.9342 - mae: 1.0834", NULL);
	got_is(&g, "loss=1.9342 mae=1.0834", "keras frame");
	g = feed_text(&st, "\b\b\b\b\r4/4 \xe2\x94\x81 0s 6ms/step - loss: 1.1042 - mae: 1.0834 - "
			   "val_loss: 0.3331\n", NULL);
	got_is(&g, "loss=1.1042:S mae=1.0834:S val_loss=0.3331:S", "its last frame");

	/* a plain print without its newline yet is no frame: it waits */
	g = feed_text(&st, "loss=0.", NULL);
	got_is(&g, "", "a print in two writes");
	g = feed_text(&st, "75\n", NULL);
	got_is(&g, "loss=0.75", "whole");

	/* a full buffer may end anywhere: its open frame waits for its end */
	memset(block, 'x', sizeof(block));
	for (size_t i = 99; i < sizeof(block); i += 100)
		block[i] = '\n';
	memcpy(block + sizeof(block) - 11, "\n\rloss=0.12", 11);
	g = (struct got){0};
	{
		struct marks_counts c = {0};

		marks__feed(&st, block, sizeof(block), sizeof(block), NULL, &c, collect, &g);
	}
	got_is(&g, "", "a full buffer");
	g = feed_text(&st, "34\r", NULL);
	got_is(&g, "loss=0.1234", "the frame, whole");
}

/* tqdm blanks its bars with spaces before tqdm.write() prints, and HF's log dicts can
 * follow its bar on one stream: the line after the blanking is no redraw. */
static void test_tqdm_write_is_a_line(void)
{
	struct marks_stream st = {0};
	struct got g = feed_text(&st, "\r 12%|#  | 2/16 [00:01<00:12, loss=0.5]"
				      "\r                                       \r"
				      "{'loss': 0.5, 'epoch': 0.25}\n"
				      "\r 12%|#  | 2/16 [00:01<00:12, loss=0.5]", NULL);

	got_is(&g, "loss=0.5 loss=0.5 epoch=0.25", "the printed dict");
}

int main(void)
{
	RUN_TEST(test_hf_dicts);
	RUN_TEST(test_progress_pairs);
	RUN_TEST(test_lines_across_writes);
	RUN_TEST(test_tqdm_redraws);
	RUN_TEST(test_binary_and_bound);
	RUN_TEST(test_regex);
	RUN_TEST(test_hf5_quoted_dicts);
	RUN_TEST(test_scalar_reprs);
	RUN_TEST(test_keras3_progress);
	RUN_TEST(test_keras_tensorflow_lines);
	RUN_TEST(test_keras_bars_epoch_after_epoch);
	RUN_TEST(test_lightning_tqdm);
	RUN_TEST(test_rich_live);
	RUN_TEST(test_prints_and_logging);
	RUN_TEST(test_not_metrics);
	RUN_TEST(test_tqdm_write_is_a_line);
	RUN_TEST(test_frames_read_at_write_end);
	return unit__done();
}
