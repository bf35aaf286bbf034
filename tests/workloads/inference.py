"""Inference workloads (issue 36): requests of a small GPT-2 built from a config (no download).

Each request prints one line of what it did, for the tests to compare with the tree:
    REQUEST <i> kind=<case> forwards=<n> new_tokens=<t> batch=<b> start_ns=<wall> latency_ns=<ns>
forwards are counted by a forward hook on the model (what ran, not what was asked for).

Cases (--case): greedy, sample (HF generate, --batch 1 or 4), pipeline (text-generation
pipeline), loop (hand-written decode loop under inference_mode), serve (one forward per
request under inference_mode), mixed (greedy, sample with batch 4, loop, pipeline, serve,
greedy with batch 4, sample, one after the other; --batch is ignored).
--requests N: how many (0: until the file named by --stop-file exists; attach tests).
--tokens K: new tokens per request.
"""
import argparse
import os
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel, logging as hf_logging

hf_logging.set_verbosity_error()


def build():
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=100, n_positions=128,
                     bos_token_id=0, eos_token_id=99, pad_token_id=98)
    model = GPT2LMHeadModel(cfg).eval()
    calls = [0]
    model.register_forward_hook(lambda m, a, o: calls.__setitem__(0, calls[0] + 1))
    return model, calls


def generate(model, batch, tokens, sample):
    ids = torch.randint(1, 90, (batch, 5))
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=tokens,
                         min_new_tokens=tokens, do_sample=sample, top_k=20 if sample else None,
                         pad_token_id=98)
    return out.shape[1] - ids.shape[1]


def decode_loop(model, batch, tokens):
    """What a hand-written server does: prefill, then one forward per token with the cache."""
    ids = torch.randint(1, 90, (batch, 5))
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        past = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        made = 1
        while made < tokens:
            out = model(nxt, past_key_values=past, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            made += 1
    return made


def serve(model, batch):
    with torch.inference_mode():
        model(torch.randint(1, 90, (batch, 8)))
    return 0


def make_pipeline(model):
    """A text-generation pipeline with a tokenizer of characters (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, pipeline

    vocab = {chr(ord("a") + i): i + 1 for i in range(26)}
    vocab["<unk>"] = 0
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", pad_token="<unk>")
    return pipeline("text-generation", model=model, tokenizer=tok, device="cpu")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="greedy")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=6)
    ap.add_argument("--requests", type=int, default=3)
    ap.add_argument("--stop-file")
    a = ap.parse_args()
    model, calls = build()
    pipe = make_pipeline(model) if a.case in ("pipeline", "mixed") else None
    cases = [(a.case, a.batch)]
    if a.case == "mixed":
        cases = [("greedy", 1), ("sample", 4), ("loop", 1), ("pipeline", 1), ("serve", 1),
                 ("greedy", 4), ("sample", 1)]
    print(f"READY pid={os.getpid()}", flush=True)
    i = 0
    while (a.requests and i < a.requests) or (not a.requests and not os.path.exists(a.stop_file)):
        case, batch = cases[i % len(cases)]
        before = calls[0]
        t0 = time.time_ns()
        if case in ("greedy", "sample"):
            new = generate(model, batch, a.tokens, case == "sample")
        elif case == "loop":
            new = decode_loop(model, batch, a.tokens)
        elif case == "serve":
            new = serve(model, batch)
        elif case == "pipeline":
            r = pipe("abcde", max_new_tokens=a.tokens, min_new_tokens=a.tokens, do_sample=False)
            new = a.tokens if r else 0
        else:
            sys.exit(f"unknown case {case}")
        lat = time.time_ns() - t0
        print(f"REQUEST {i} kind={case} forwards={calls[0] - before} new_tokens={new} "
              f"batch={batch} start_ns={t0} latency_ns={lat}", flush=True)
        i += 1
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
