#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Seeds for fuzz_spool_reader from real spools (the <path> of `cirron-probe run --path`).

    make_corpus.py OUT_DIR NAME=SPOOL_ROOT...

Writes, per root: one seed per distinct batch file ("NAME\\nTEXT") and one seed holding the
whole spool (files joined by 0x1e). Batches over MAX_SPANS spans keep their first spans and
every span not "ok" (the open path), so seeds stay small enough to mutate quickly; the text
is re-serialised compactly, as the observer writes it. Where a root's last batch holds more
than ELIDE epochs, a seed keeps only them (trace elides long runs of siblings). One more
seed joins every root's last batch: several sessions in one spool.
"""
import hashlib
import json
import sys
from pathlib import Path

MAX_SPANS = 12
ELIDE = 20           # trace.h TRACE_ELIDE_RUN
SEP = b"\x1e"


def trimmed(text):
    batch = json.loads(text)
    spans = batch["spans"]
    if len(spans) > MAX_SPANS:
        keep = spans[:MAX_SPANS] + [s for s in spans[MAX_SPANS:] if s["status"] != "ok"]
        batch["spans"] = keep
    return (json.dumps(batch, separators=(",", ":")) + "\n").encode()


def record(path):
    return path.name.encode() + b"\n" + trimmed(path.read_text())


def epochs_only(path):
    batch = json.loads(path.read_text())
    epochs = [s for s in batch["spans"] if s["name"] in ("cirron.session", "epoch")]
    if len(epochs) <= ELIDE + 1:
        return None
    batch["spans"] = epochs[:3 * ELIDE]
    return path.name.encode() + b"\n" + (json.dumps(batch, separators=(",", ":")) +
                                         "\n").encode()


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    seen, lasts = set(), []
    for arg in sys.argv[2:]:
        label, root = arg.split("=", 1)
        files = sorted((Path(root) / "spool").glob("*.json"))
        recs = [record(f) for f in files]
        for f, rec in zip(files, recs):
            body = rec.split(b"\n", 1)[1]
            # Batches that differ only in seq and counters are one seed.
            key = hashlib.sha1(json.dumps(sorted(json.loads(body)["spans"],
                                                 key=lambda s: s["span_id"])).encode())
            if key.hexdigest() in seen:
                continue
            seen.add(key.hexdigest())
            (out / f"{label}-{f.name.rsplit('.', 2)[1]}").write_bytes(rec)
        (out / f"{label}-all").write_bytes(SEP.join(recs))
        epochs = epochs_only(files[-1])
        if epochs:
            (out / f"{label}-epochs").write_bytes(epochs)
        lasts.append(recs[-1])
    (out / "sessions-last").write_bytes(SEP.join(lasts))


if __name__ == "__main__":
    main()
