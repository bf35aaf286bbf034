#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Training jobs written the way framework users write them. Nothing here knows the observer.

    frameworks.py transformers|lightning|keras [--epochs E] [--batches B] [--accumulate K]
                  [--val-batches V] [--progress] [--bar tqdm|rich] [--verbose N]
                  [--log-dir DIR]

Per epoch: B training batches of 4 samples, one optimizer step every K batches, then an
evaluation pass of V batches.
- transformers: HF Trainer on a tiny GPT-2 built from a config (random weights, random
  tokens, no hub download), gradient_accumulation_steps=K, eval_strategy="epoch".
- lightning: Trainer.fit with accumulate_grad_batches=K and a validation loop (no sanity
  check), SGD.
- keras: Keras 3 on the torch backend (KERAS_BACKEND=torch), model.fit with validation_data;
  Keras has its own optimizer (no torch optimizer step); K must be 1.
--progress: print what each framework prints by default, for the marks tests: HF logs every
2 steps (its log dicts on stdout) with its tqdm bars on, and prints evaluate()'s result;
Lightning logs train_loss (per step and per epoch), val_loss and val_acc to its progress bar
(rich's when rich is installed, or --bar tqdm), with its CSV logger (in --log-dir), banners
and model summary, then runs trainer.validate() (its results table);
Keras prints model.summary() and fits with verbose=1 (a redrawn bar; --verbose 2: a line an
epoch).
--norms: at each epoch's end (HF's on_epoch_end, Lightning's on_train_epoch_end, Keras'
on_epoch_end callbacks) print, with torch, per parameter of the model
  STATS <epoch> - <name> {"weights": {...}, "grad": {...} or null}
and then EPOCH_END <epoch> STEPS <optimizer steps so far> (tests/e2e/test_snapshots.py).
Prints "DONE" at the end.
"""
import argparse
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("framework", choices=["transformers", "lightning", "keras"])
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--accumulate", type=int, default=1)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--progress", action="store_true")
ap.add_argument("--bar", choices=["tqdm", "rich"])
ap.add_argument("--verbose", type=int, default=1)
ap.add_argument("--log-dir")
ap.add_argument("--norms", action="store_true")
args = ap.parse_args()
BS = 4


def print_stats(epoch, steps, named_params):
    import json

    import torch

    def stats(t):
        t = t.detach().double().flatten()
        return {"mean": t.mean().item(), "std": t.std().item(), "min": t.min().item(),
                "max": t.max().item(), "norm": t.norm().item(), "count": t.numel(),
                "histogram": [int(v) for v in torch.histc(t, bins=16, min=t.min().item(),
                                                         max=t.max().item()).tolist()]}
    for name, p in named_params:
        g = stats(p.grad) if p.grad is not None else None
        print("STATS", epoch, "-", name, json.dumps({"weights": stats(p), "grad": g}),
              flush=True)
    print("EPOCH_END", epoch, "STEPS", steps, flush=True)


def hf():
    import tempfile

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=1, n_head=2)
    model = GPT2LMHeadModel(cfg)

    class Tokens(torch.utils.data.Dataset):
        def __init__(self, n):
            self.ids = torch.randint(0, 64, (n, 8))

        def __len__(self):
            return len(self.ids)

        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "labels": self.ids[i]}

    with tempfile.TemporaryDirectory() as out:
        targs = TrainingArguments(
            output_dir=out, num_train_epochs=args.epochs, per_device_train_batch_size=BS,
            per_device_eval_batch_size=BS, gradient_accumulation_steps=args.accumulate,
            eval_strategy="epoch", logging_strategy="steps" if args.progress else "no",
            logging_steps=2, save_strategy="no", report_to=[], use_cpu=True,
            disable_tqdm=not args.progress, dataloader_num_workers=0, learning_rate=1e-3)
        callbacks = []
        if args.norms:
            from transformers import TrainerCallback

            class Norms(TrainerCallback):
                def __init__(self):
                    self.epoch = 0

                def on_epoch_end(self, targs, state, control, model=None, **kw):
                    print_stats(self.epoch, state.global_step, model.named_parameters())
                    self.epoch += 1
            callbacks.append(Norms())
        trainer = Trainer(model=model, args=targs, train_dataset=Tokens(args.batches * BS),
                          eval_dataset=Tokens(args.val_batches * BS), callbacks=callbacks)
        trainer.train()
        if args.progress:
            print(trainer.evaluate(), flush=True)


def lightning():
    import lightning as L
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
            self.loss = nn.CrossEntropyLoss()

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, i):
            x, y = batch
            loss = self.loss(self(x), y)
            if args.progress:
                self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            out = self(x)
            self.log("val_loss", self.loss(out, y), prog_bar=args.progress)
            if args.progress:
                self.log("val_acc", (out.argmax(1) == y).float().mean(), prog_bar=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    def loader(batches):
        x = torch.randn(batches * BS, 16)
        return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=BS)

    if args.progress:
        import tempfile

        from lightning.pytorch.callbacks import RichProgressBar, TQDMProgressBar

        bar = {"tqdm": [TQDMProgressBar()], "rich": [RichProgressBar()], None: []}[args.bar]
        kw = dict(default_root_dir=args.log_dir or tempfile.mkdtemp(), callbacks=bar,
                  log_every_n_steps=1)
    else:
        kw = dict(logger=False, enable_progress_bar=False, enable_model_summary=False)
    if args.norms:
        class Norms(L.Callback):
            def on_train_epoch_end(self, trainer, module):
                print_stats(trainer.current_epoch, trainer.global_step, module.named_parameters())
        kw["callbacks"] = kw.get("callbacks", []) + [Norms()]
    trainer = L.Trainer(max_epochs=args.epochs, accumulate_grad_batches=args.accumulate,
                        accelerator="cpu", devices=1, num_sanity_val_steps=0,
                        enable_checkpointing=False, **kw)
    model = Model()
    trainer.fit(model, loader(args.batches), loader(args.val_batches))
    if args.progress:
        trainer.validate(model, loader(args.val_batches))


def keras():
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras as K
    import numpy as np

    assert K.backend.backend() == "torch"
    K.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batches * BS, 16)).astype("float32")
    xv = rng.standard_normal((args.val_batches * BS, 16)).astype("float32")
    model = K.Sequential([K.Input((16,)), K.layers.Dense(32, activation="relu"),
                          K.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"] if args.progress else None)
    if args.progress:
        model.summary()
    callbacks = []
    if args.norms:
        class Norms(K.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                print_stats(epoch, 0, ((w.path, w.value) for w in self.model.weights))
        callbacks.append(Norms())
    model.fit(x, x[:, :1], batch_size=BS, epochs=args.epochs, shuffle=False,
              verbose=args.verbose if args.progress else 0, validation_data=(xv, xv[:, :1]),
              callbacks=callbacks)


{"transformers": hf, "lightning": lightning, "keras": keras}[args.framework]()
print("DONE", flush=True)
sys.exit(0)
