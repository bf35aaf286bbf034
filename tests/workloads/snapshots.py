#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training job whose parameters are known at each epoch's end (tests/e2e/test_snapshots.py).
It knows nothing of the observer and never waits for it.

The model has float32 Linear layers, a bfloat16 parameter, a parameter that is a
non-contiguous view (a transposed tensor), and one the loss never uses (no .grad). Right
after each epoch's last optimizer step the script prints, with torch, per model and
parameter one line
  STATS <epoch> <model> <name> {"weights": {...}, "grad": {...} or null}
and then
  EPOCH_END <epoch> STEPS <optimizer steps so far>
then validates under torch.no_grad() (--val-batches, 8 by default), as real loops do. Prints DONE at the
end, after a last validation (the job lives on after its last epoch) unless --exit-at-end.

    snapshots.py [--epochs E] [--batches B] [--batch-sleep S] [--val-batches V]
                 [--where PLACE] [--exit-at-end] [--save DIR]
--where: where the job keeps its model: global (a global of __main__), local (a local of
main()), attr (an attribute of a trainer object, itself a local), attr-step (the same, its
loop handing model and optimizer to a step function: most looks see them as that callee's
parameters), ddp (wrapped in
DistributedDataParallel, one gloo rank), compile (torch.compile), gan (a generator and a
discriminator, each with its optimizer, each trained every batch).
--batch-sleep: seconds of work per batch (time.sleep), for epochs of seconds.
--save DIR: also saves each epoch's tensors (torch.save) for the safetensors comparison.
--print-at-end: the STATS and EPOCH_END lines are printed when training is over, not at each
epoch's end: with --val-batches 0 the next epoch begins right after the last step.
--stop-file F: training ends after the first epoch that ends once F exists (an observer's
test attaches, sees what it needs, then lets the job end; the job never waits for it).
"""
import argparse
import json
import os
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, bf16=True):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)
        # gloo (DistributedDataParallel here) has no bfloat16: float32 there, same name
        self.mix_bf16 = nn.Parameter(torch.randn(4, 4).to(torch.bfloat16 if bf16 else
                                                          torch.float32))
        self.tview = nn.Parameter(torch.randn(12, 8).t())    # strides (1, 8)
        self.unused = nn.Parameter(torch.randn(5))           # never gets a grad

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h + (x @ self.tview.t()).sum(dim=1, keepdim=True) * 0.01
        y = self.fc2(h)
        return y + (y.to(self.mix_bf16.dtype) @ self.mix_bf16).float() * 0.01


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, y):
        return self.body(y)


def stats(t):
    t = t.detach().double().flatten()
    return {"mean": t.mean().item(), "std": t.std().item(), "min": t.min().item(),
            "max": t.max().item(), "norm": t.norm().item(), "count": t.numel(),
            "histogram": [int(v) for v in torch.histc(t, bins=16, min=t.min().item(),
                                                     max=t.max().item()).tolist()]}


LATER = None    # --print-at-end: what the epochs' ends say, kept until the job ends


def say(*words):
    """Prints now, or (--print-at-end) once training is over: an epoch's end then takes no
    longer than torch's arithmetic, and the next epoch begins at once."""
    if LATER is None:
        print(*words, flush=True)
    else:
        LATER.append(" ".join(str(w) for w in words))


def print_stats(epoch, name, model):
    for pname, p in model.named_parameters():
        g = stats(p.grad) if p.grad is not None else None
        say("STATS", epoch, name, pname, json.dumps({"weights": stats(p), "grad": g}))


model = None


class Trainer:
    """A trainer object that holds the model and its optimizer, as frameworks do; its loop
    reaches them through self only."""

    def __init__(self, a, net, step=None):
        self.a = a
        self.step = step
        self.model = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def fit(self):
        a = self.a
        data = TensorDataset(torch.randn(8 * a.batches, 12), torch.randn(8 * a.batches, 4))
        loader = DataLoader(data, batch_size=8)
        val = DataLoader(val_set(a), batch_size=8)
        steps = 0
        for epoch in range(a.epochs):
            for x, y in loader:
                if self.step:
                    self.step(self.model, self.optimizer, x, y)
                else:
                    self.optimizer.zero_grad()
                    nn.functional.mse_loss(self.model(x), y).backward()
                    self.optimizer.step()
                steps += 1
                if a.batch_sleep:
                    time.sleep(a.batch_sleep)
            print_stats(epoch, "-", self.model)
            say("EPOCH_END", epoch, "STEPS", steps)
            if epoch < a.epochs - 1 or not a.exit_at_end:
                validate(self.model, val)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--batch-sleep", type=float, default=0)
    ap.add_argument("--val-batches", type=int, default=8)
    ap.add_argument("--where", default="global",
                    choices=["global", "local", "attr", "attr-step", "ddp", "compile", "gan"])
    ap.add_argument("--exit-at-end", action="store_true")
    ap.add_argument("--save", default=None)
    ap.add_argument("--print-at-end", action="store_true")
    ap.add_argument("--stop-file", default=None)
    a = ap.parse_args()
    global LATER
    if a.print_at_end:
        LATER = []
    torch.set_num_threads(1)    # a core left for the observer on a 2-core test machine
    torch.manual_seed(0)
    print("TRAINING", flush=True)     # for an observer that attaches mid-run
    if a.where == "global":
        global model
        model = Net()    # a global of __main__
        train(a, model, torch.optim.SGD(model.parameters(), lr=0.1))
    elif a.where == "local":
        net = Net()      # only in main()'s locals (and train's), as in most scripts
        train(a, net, torch.optim.SGD(net.parameters(), lr=0.1))
    elif a.where in ("attr", "attr-step"):
        trainer = Trainer(a, Net(), train_step if a.where == "attr-step" else None)
        trainer.fit()
    elif a.where == "ddp":
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        # USE_LIBUV=0: Debian's torch 2.6 has no libuv for its TCP store
        import socket
        with socket.socket() as s:       # a port of its own: other jobs may run beside it
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                          RANK="0", WORLD_SIZE="1", USE_LIBUV="0")
        dist.init_process_group("gloo")
        net = DistributedDataParallel(Net(bf16=False), find_unused_parameters=True)
        train(a, net, torch.optim.SGD(net.parameters(), lr=0.1), inner=net.module)
        dist.destroy_process_group()
    elif a.where == "compile":
        net = Net()
        train(a, torch.compile(net), torch.optim.SGD(net.parameters(), lr=0.1), inner=net)
    else:
        gan(a)
    for line in LATER or ():
        print(line, flush=True)
    print("DONE", flush=True)


def val_set(a):
    """The validation set: --val-batches batches of 8 (its loop is the quiet time between
    an epoch's last optimizer step and the next epoch's first)."""
    n = 8 * a.val_batches
    return TensorDataset(torch.randn(n, 12), torch.randn(n, 4))


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def validate(model, loader):
    with torch.no_grad():
        for x, _ in loader:
            model(x)


def train(a, net, opt, inner=None):
    data = TensorDataset(torch.randn(8 * a.batches, 12), torch.randn(8 * a.batches, 4))
    loader = DataLoader(data, batch_size=8)
    val = DataLoader(val_set(a), batch_size=8)
    steps = 0
    for epoch in range(a.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(net(x), y)
            loss.backward()
            opt.step()
            steps += 1
            if a.batch_sleep:
                time.sleep(a.batch_sleep)
        print_stats(epoch, "-", inner or net)
        if a.save:
            torch.save({n: (p.detach().clone(), None if p.grad is None else p.grad.clone())
                        for n, p in (inner or net).named_parameters()},
                       os.path.join(a.save, f"epoch{epoch}.pt"))
        say("EPOCH_END", epoch, "STEPS", steps)
        if a.stop_file and os.path.exists(a.stop_file):
            break       # the test is done with it: its last epoch
        if epoch < a.epochs - 1 or not a.exit_at_end:
            validate(net, val)


def gan(a):
    gen, critic = Net(), Critic()
    opt_g = torch.optim.SGD(gen.parameters(), lr=0.05)
    opt_c = torch.optim.SGD(critic.parameters(), lr=0.05)
    loader = DataLoader(TensorDataset(torch.randn(8 * a.batches, 12),
                                      torch.randn(8 * a.batches, 4)), batch_size=8)
    val = DataLoader(val_set(a), batch_size=8)
    steps = 0
    for epoch in range(a.epochs):
        for x, real in loader:
            opt_c.zero_grad()
            loss_c = critic(gen(x).detach()).mean() - critic(real).mean()
            loss_c.backward()
            opt_c.step()
            opt_g.zero_grad()
            loss_g = -critic(gen(x)).mean()
            loss_g.backward()
            opt_g.step()
            steps += 2
            if a.batch_sleep:
                time.sleep(a.batch_sleep)
        print_stats(epoch, "gen", gen)
        print_stats(epoch, "critic", critic)
        say("EPOCH_END", epoch, "STEPS", steps)
        if epoch < a.epochs - 1 or not a.exit_at_end:
            validate(gen, val)


if __name__ == "__main__":
    main()
