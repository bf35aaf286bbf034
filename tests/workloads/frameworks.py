#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Training jobs written the way framework users write them. Nothing here knows the observer.

    frameworks.py transformers|lightning|keras [--epochs E] [--batches B] [--accumulate K]
                  [--val-batches V]

Per epoch: B training batches of 4 samples, one optimizer step every K batches, then an
evaluation pass of V batches.
- transformers: HF Trainer on a tiny GPT-2 built from a config (random weights, random
  tokens, no hub download), gradient_accumulation_steps=K, eval_strategy="epoch".
- lightning: Trainer.fit with accumulate_grad_batches=K and a validation loop (no sanity
  check), SGD.
- keras: Keras 3 on the torch backend (KERAS_BACKEND=torch), model.fit with validation_data;
  Keras has its own optimizer (no torch optimizer step); K must be 1.
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
args = ap.parse_args()
BS = 4


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
            eval_strategy="epoch", logging_strategy="no", save_strategy="no", report_to=[],
            use_cpu=True, disable_tqdm=True, dataloader_num_workers=0, learning_rate=1e-3)
        Trainer(model=model, args=targs, train_dataset=Tokens(args.batches * BS),
                eval_dataset=Tokens(args.val_batches * BS)).train()


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
            return self.loss(self(x), y)

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_loss", self.loss(self(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    def loader(batches):
        x = torch.randn(batches * BS, 16)
        return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=BS)

    trainer = L.Trainer(max_epochs=args.epochs, accumulate_grad_batches=args.accumulate,
                        accelerator="cpu", devices=1, num_sanity_val_steps=0, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Model(), loader(args.batches), loader(args.val_batches))


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
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, x[:, :1], batch_size=BS, epochs=args.epochs, shuffle=False, verbose=0,
              validation_data=(xv, xv[:, :1]))


{"transformers": hf, "lightning": lightning, "keras": keras}[args.framework]()
print("DONE", flush=True)
sys.exit(0)
