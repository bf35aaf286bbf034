# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Torch CUDA training loops for the GPU check (bench/gpu/check.py), as users write them.

    workloads.py KIND [--profile OUT.json] [--steps-file OUT.json] [--seconds S] [--width W]
                      [--batch B] [--phases SPEC] [--device cuda|cpu]

KIND: plain (MLP, AdamW, DataLoader, eval batches), bf16 (autocast), fp16 (autocast +
GradScaler), compile (torch.compile, inductor), hf (HF Trainer on a small GPT-2 made from a
config), cost (launch-bound MLP steps timed inside the loop, for the cost rounds).
--profile: the whole CUDA part runs under torch.profiler; the runtime and driver calls it saw
are counted by name and written to OUT.json, to hold the observer's totals against.
--phases (cost): "base:N,prof:N,..." in-process phases of N steps, with torch.profiler on in
the prof ones; every step's time goes to --steps-file with its wall time, so that check.py
can split them by the observer's attach windows too.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("kind")
ap.add_argument("--profile")
ap.add_argument("--steps-file")
ap.add_argument("--seconds", type=float, default=0)
ap.add_argument("--width", type=int, default=1024)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--depth", type=int, default=4)
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--batches", type=int, default=24)
ap.add_argument("--phases", default="")
ap.add_argument("--device", default="cuda")
ap.add_argument("--stop-file", help="cost: stop (and write --steps-file) once it exists")
args = ap.parse_args()
dev = torch.device(args.device)

# What torch.profiler's CPU-side events are called for the calls the observer counts.
PROF_NAMES = {
    "launch_runtime": ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernel_ptsz",
                       "cudaLaunchKernelExC_ptsz"),
    "launch_driver": ("cuLaunchKernel", "cuLaunchKernelEx"),
    "graph_launch": ("cudaGraphLaunch", "cuGraphLaunch"),
    "memcpy": ("cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy_ptds", "cudaMemcpyAsync_ptsz"),
    "malloc": ("cudaMalloc",),
    "free": ("cudaFree",),
    "sync": ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"),
}


def prof_steps_gpu(prof):
    """Per training step, as cirron-probe makes steps (from the first DataLoader __next__ after
    an optimizer step to the end of the next optimizer step): the union of the GPU intervals
    of the kernels, copies and memsets whose launching call (runtime or driver, by correlation
    id) was made in the step, and their extent; from the profiler's trace, in ns."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    calls, gpu, nexts, opts = {}, [], [], []
    for e in ev:
        if e.get("ph") != "X":
            continue
        cat, name, a = e.get("cat", ""), e.get("name", ""), e.get("args", {})
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in a:
            calls[a["correlation"]] = e["ts"]
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in a:
            gpu.append((a["correlation"], e["ts"], e["ts"] + e["dur"]))
        elif name.startswith("enumerate(DataLoader)"):
            nexts.append(e["ts"])
        elif name.startswith("Optimizer.step#"):
            opts.append(e["ts"] + e["dur"])
    nexts.sort()
    opts.sort()
    steps, prev_end = [], None
    for end in opts:
        start = next((t for t in nexts if prev_end is None or t >= prev_end), None)
        if start is None or start > end:
            prev_end = end
            continue
        iv = sorted((s, e) for c, s, e in gpu if c in calls and start <= calls[c] < end)
        busy, cs, ce = 0.0, None, None
        for s0, e0 in iv:
            if ce is None or s0 > ce:
                busy += (ce - cs) if ce is not None else 0
                cs, ce = s0, e0
            else:
                ce = max(ce, e0)
        busy += (ce - cs) if ce is not None else 0
        if iv:
            steps.append([round(busy * 1000), round((iv[-1][1] - iv[0][0]) * 1000)])
        prev_end = end
    return steps


def prof_counts(prof):
    counts = {k: 0 for k in PROF_NAMES}
    names = {}
    for e in prof.events():
        for k, ns in PROF_NAMES.items():
            if e.name in ns:
                counts[k] += 1
                names[e.name] = names.get(e.name, 0) + 1
    counts["by_name"] = names
    return counts


def mlp(width, depth=4):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def loader(n, batch, width):
    x = torch.randn(n * batch, width)
    y = torch.randint(0, 10, (n * batch,))
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch)


def train_loop(kind):
    torch.manual_seed(0)
    model = mlp(args.width).to(dev)
    if kind == "compile":
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda") if kind == "fp16" else None
    amp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(kind)
    data = loader(args.batches, args.batch, args.width)
    val = loader(4, args.batch, args.width)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        for x, y in data:
            x, y = x.to(dev, non_blocking=False), y.to(dev)
            opt.zero_grad()
            with torch.autocast("cuda", dtype=amp, enabled=amp is not None):
                loss = loss_fn(model(x), y)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            last = loss.item()
        model.eval()
        with torch.no_grad():
            for x, y in val:
                model(x.to(dev))
        print(f"epoch {epoch} loss {last:.4f}", flush=True)


def hf_loop():
    from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments)
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(cfg)

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            ids = torch.randint(0, 512, (32,), generator=torch.Generator().manual_seed(i))
            return {"input_ids": ids, "labels": ids.clone()}

    targs = TrainingArguments(output_dir="/tmp/cirron-hf", per_device_train_batch_size=8,
                              num_train_epochs=2, logging_steps=4, save_strategy="no",
                              report_to=[], gradient_accumulation_steps=2,
                              dataloader_num_workers=0, disable_tqdm=True)
    Trainer(model=model, args=targs, train_dataset=Data()).train()


def cost_loop():
    """Launch-bound steps, each timed inside the loop; runs its phases, or for --seconds."""
    torch.manual_seed(0)
    model = mlp(args.width, args.depth).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    loss_fn = nn.CrossEntropyLoss()

    def timed(n, phase, out):
        for _ in range(n):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            loss.item()         # one sync a step, as loops that log the loss do
            t1 = time.perf_counter()
            out.append((phase, time.time(), t1 - t0))

    steps = []
    timed(50, "warmup", steps)
    print("ready", flush=True)
    if args.phases:
        for part in args.phases.split(","):
            phase, n = part.split(":")
            if phase == "prof":
                from torch.profiler import ProfilerActivity, profile
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                    timed(int(n), phase, steps)
            else:
                timed(int(n), phase, steps)
    end = time.time() + args.seconds
    while time.time() < end:
        timed(20, "run", steps)
        if args.stop_file and os.path.exists(args.stop_file):
            break
    if args.steps_file:
        with open(args.steps_file, "w") as f:
            json.dump(steps, f)


def main():
    if args.kind == "cost":
        cost_loop()
        return
    run = hf_loop if args.kind == "hf" else (lambda: train_loop(args.kind))
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        with profile(activities=acts) as prof:
            run()
        res = prof_counts(prof)
        if dev.type == "cuda":
            res["steps_gpu"] = prof_steps_gpu(prof)
        with open(args.profile, "w") as f:
            json.dump(res, f)
    elif args.seconds:
        end = time.time() + args.seconds
        while time.time() < end:
            run()
    else:
        run()


if __name__ == "__main__":
    sys.exit(main())
