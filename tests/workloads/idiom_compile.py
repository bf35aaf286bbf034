#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.compile as the tutorials write it, for the tree-rule tests. Plain PyTorch: nothing
here knows the observer.

    idiom_compile.py --target model|function|step [--mode default|max-autotune|fullgraph]
                     [--backend inductor|aot_eager] [--epochs E] [--batches B]
                     [--val-batches V] [--ragged]

Per epoch: B training batches of a DataLoader (SGD), then V validation batches with
model.eval() under torch.no_grad(), then model.train() again.
- model:    model = torch.compile(model); the loop calls the compiled model.
- function: the loss function is compiled (torch.compile(loss_fn)); the model runs eagerly.
- step:     the whole training step (forward, loss, backward, optimizer.step, zero_grad) is
            one compiled function; validation calls the plain model.
--mode: default (inductor's defaults), max-autotune (mode="max-autotune-no-cudagraphs"),
fullgraph (fullgraph=True; not for step: dynamo cannot put backward into one graph).
--backend aot_eager: no C++ compiler needed (AOTAutograd's
graphs run eagerly; trixie's root has no compiler).
--step-sleep MS sleeps after each training step (steps of a few ms, for --python-frames
sampled, whose windows come at most once a second).
--ragged: the training set holds half a batch more, so each epoch's last batch is smaller:
dynamo recompiles once for it (automatic dynamic shapes).
Compilations with fixed shapes: model: 2 (the training graph at the first batch, the
evaluation graph at the first validation batch: grad mode and module.training are guarded);
function: 2 (training, then under no_grad); step: the first batches compile the step in
pieces (dynamo breaks the graph at backward and inside the optimizer: torch 2.13 compiles
13 frames, Debian's 2.6 16).
Prints "DONE compiled_frames=N in_steps=a,b,... in_validation=c,... compile_runs=M
runs_in_steps=... runs_in_validation=..." at the end: the frames dynamo compiled into code
(its cache entries: first compiles and recompiles) and the compiles dynamo ran (each run of its
compile_inner, those that end without code included: a frame traced, then skipped), in all, in
each training step and in each epoch's validation pass. dynamo's own counters["frames"]["ok"]
counts more: every frame its callback looked at without an error, skipped ones included.
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--target", required=True, choices=["model", "function", "step"])
ap.add_argument("--mode", default="default", choices=["default", "max-autotune", "fullgraph"])
ap.add_argument("--backend", default="inductor", choices=["inductor", "aot_eager"])
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=4)
ap.add_argument("--val-batches", type=int, default=2)
ap.add_argument("--batch-size", type=int, default=16)
ap.add_argument("--ragged", action="store_true")
ap.add_argument("--step-sleep", type=float, default=0)
args = ap.parse_args()
if args.target == "step" and args.mode == "fullgraph":
    # dynamo cannot trace Tensor.backward() into one graph: the first step would raise
    ap.error("--target step cannot be compiled with fullgraph=True (backward breaks the graph)")

torch.manual_seed(0)
bs = args.batch_size
n = args.batches * bs - (bs // 2 if args.ragged else 0)
x = torch.randn(n, 16)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=bs)
xv = torch.randn(args.val_batches * bs, 16)
val_loader = DataLoader(TensorDataset(xv, (xv[:, 0] > 0).long()), batch_size=bs)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()

options = {"backend": args.backend}
if args.mode == "max-autotune":
    options["mode"] = "max-autotune-no-cudagraphs"
elif args.mode == "fullgraph":
    options["fullgraph"] = True


def train_step(xb, yb):
    loss = loss_fn(model(xb), yb)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


train_model, eval_model = model, model
if args.target == "model":
    train_model = eval_model = torch.compile(model, **options)
elif args.target == "function":
    loss_fn = torch.compile(loss_fn, **options)
else:
    train_step = torch.compile(train_step, **options)

runs = []
torch._dynamo.callback_handler.register_start_callback(lambda *args: runs.append(1))


def compiled():
    """(frames compiled into code so far: dynamo's cache entries, first compiles and
    recompiles; compiles dynamo ran so far)"""
    entries = 0
    for ref in torch._dynamo.convert_frame.input_codes.seen:
        code = ref()
        if code is not None:
            entries += len(torch._dynamo.eval_frame._debug_get_cache_entry_list(code))
    return entries, len(runs)


def since(before):
    now = compiled()
    return now[0] - before[0], now[1] - before[1]


in_steps, in_validation = [], []
for epoch in range(args.epochs):
    model.train()
    for xb, yb in loader:
        before = compiled()
        if args.target == "step":
            loss = train_step(xb, yb)
        else:
            loss = loss_fn(train_model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        in_steps.append(since(before))
        if args.step_sleep:
            time.sleep(args.step_sleep / 1000)
    model.eval()
    before = compiled()
    with torch.no_grad():
        correct = 0
        for xb, yb in val_loader:
            out = eval_model(xb)
            correct += (out.argmax(1) == yb).sum().item()
            val_loss = loss_fn(out, yb)
    in_validation.append(since(before))
    print(f"epoch {epoch}: loss {loss.item():.4f} val_loss {val_loss.item():.4f}", flush=True)


def col(pairs, i):
    return ",".join(str(p[i]) for p in pairs)


# what dynamo itself holds and ran: in all, in each training step and validation pass
total = compiled()
print(f"DONE compiled_frames={total[0]} in_steps={col(in_steps, 0)} "
      f"in_validation={col(in_validation, 0)} compile_runs={total[1]} "
      f"runs_in_steps={col(in_steps, 1)} runs_in_validation={col(in_validation, 1)}",
      flush=True)
