#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""A serving loop as serving code writes it (issue 44, tests/e2e/test_serving.py): requests of
a causal language model with a KV cache, each a prefill of its prompt and one decode step per
further token, a pause between requests. Plain PyTorch: nothing here knows the observer.

    serving.py [--model tiny|gpt2] [--region one|each] [--grad inference_mode|no_grad]
               [--pick argmax|sample] [--requests N] [--prompt P] [--new-tokens K]
               [--batch B] [--gap-ms MS]

--model tiny: a decoder of our own in plain torch (token and position embeddings, 2 attention
  blocks, a cache grown with torch.cat): every torch build; gpt2: transformers' GPT-2 built
  from a config (no download), its own cache.
--region one: the whole loop inside one grad-off region (`with torch.inference_mode():` or
  `torch.no_grad()` around it, as --grad says); each: one region per request.
--pick argmax: greedy, logits[:, -1].argmax(-1); sample: softmax, then multinomial.
--requests 0: requests until killed (attach tests).
Prints per request "REQUEST i prompt=P new_tokens=K batch=B start_ns=... end_ns=..." (the wall
clock before its prefill and after its last token) and "DONE requests=N" at the end.
"""
import argparse
import contextlib
import itertools
import math
import time

import torch
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("--model", choices=["tiny", "gpt2"], default="tiny")
ap.add_argument("--region", choices=["one", "each"], default="one")
ap.add_argument("--grad", choices=["inference_mode", "no_grad"], default="inference_mode")
ap.add_argument("--pick", choices=["argmax", "sample"], default="argmax")
ap.add_argument("--requests", type=int, default=4)
ap.add_argument("--prompt", type=int, default=10)
ap.add_argument("--new-tokens", type=int, default=12)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--gap-ms", type=float, default=100)
args = ap.parse_args()
VOCAB = 100


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.ln1, self.ln2 = heads, nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, cache):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        att = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        if t > 1:   # the prompt attends causally; a decode step sees the whole cache
            mask = torch.ones(t, k.shape[2], dtype=torch.bool).tril(k.shape[2] - t)
            att = att.masked_fill(~mask, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(y)
        return x + self.mlp(self.ln2(x)), (k, v)


class TinyLM(nn.Module):
    def __init__(self, d=32, heads=2, layers=2, positions=256):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, d), nn.Embedding(positions, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.head = nn.Linear(d, VOCAB)

    def forward(self, ids, past=None):
        start = 0 if past is None else past[0][0].shape[2]
        x = self.tok(ids) + self.pos(torch.arange(start, start + ids.shape[1]))
        cache = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, None if past is None else past[i])
            cache.append(kv)
        return self.head(x), cache


def build():
    torch.manual_seed(0)
    if args.model == "tiny":
        return TinyLM().eval()
    from transformers import GPT2Config, GPT2LMHeadModel, logging as hf_logging
    hf_logging.set_verbosity_error()
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=VOCAB, n_positions=128)
    return GPT2LMHeadModel(cfg).eval()


def step(model, ids, past):
    """logits of the last position, and the cache."""
    if args.model == "tiny":
        logits, past = model(ids, past)
    else:
        out = model(ids, past_key_values=past, use_cache=True)
        logits, past = out.logits, out.past_key_values
    return logits, past


def pick(logits):
    last = logits[:, -1]
    if args.pick == "argmax":
        return last.argmax(-1, keepdim=True)
    return torch.multinomial(last.softmax(-1), 1)


def region():
    return torch.inference_mode() if args.grad == "inference_mode" else torch.no_grad()


def serve(model, i):
    ids = torch.randint(1, VOCAB, (args.batch, args.prompt))
    start = time.time_ns()
    logits, past = step(model, ids, None)        # the prefill
    nxt, made = pick(logits), 1
    while made < args.new_tokens:                # a decode step per token, with the cache
        logits, past = step(model, nxt, past)
        nxt, made = pick(logits), made + 1
    end = time.time_ns()
    print(f"REQUEST {i} prompt={args.prompt} new_tokens={made} batch={args.batch} "
          f"start_ns={start} end_ns={end}", flush=True)


def main():
    model = build()
    requests = range(args.requests) if args.requests else itertools.count()
    outer = region() if args.region == "one" else contextlib.nullcontext()
    with outer:
        for i in requests:
            if i:
                time.sleep(args.gap_ms / 1000)
            with (region() if args.region == "each" else contextlib.nullcontext()):
                serve(model, i)
    print(f"DONE requests={args.requests}", flush=True)


if __name__ == "__main__":
    main()
