#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the benchmarks read back from a cirron-probe spool (DIR/spool/*.json).

    spool_info.py health DIR       key=value lines from the newest batch's health block of the
                                   session with the most steps (else the most events), and the
                                   steady-state hits per step: the hits between the first batch
                                   that counted a tenth of the steps and the last batch before
                                   the final one, so start-up and teardown are left out
    spool_info.py probes DIR       one line per attached probe: group|symbol|hits/step|returns/step
                                   (steady state, as above)
    spool_info.py probe-hits DIR   one line per attached probe: group|symbol|hits|returns, the
                                   whole session (newest batch)
    spool_info.py first-event DIR  wall-clock ns of the earliest event the session recorded (a
                                   mark, or the start of a span other than the root and epochs)
                                   and of the session root's start (when attaching began)
"""
import glob
import json
import os
import sys


def batches(d):
    by_session = {}
    for f in glob.glob(os.path.join(d, "spool", "*.json")):
        try:
            b = json.load(open(f))
        except (OSError, ValueError):
            continue
        by_session.setdefault(b["session_id"], []).append(b)
    if not by_session:
        sys.exit(f"spool_info: no batches under {d}/spool")

    def weight(bs):
        h = max(bs, key=lambda b: b["seq"])["health"]
        return (h.get("steps", 0), h.get("events", 0))
    bs = max(by_session.values(), key=weight)
    return sorted(bs, key=lambda b: b["seq"])


def steady(bs):
    """(first, last) batches bounding the steady state, or None: from the first batch that
    counted at least a tenth of the steps (the first steps run lazy imports and first-use
    paths) to the last batch before the final one (interpreter teardown)."""
    stepped = [b for b in bs if b["health"].get("steps", 0) > 0]
    if len(stepped) < 2:
        return None
    total = stepped[-1]["health"]["steps"]
    a = next(b for b in stepped if b["health"]["steps"] >= total / 10)
    later = [b for b in stepped if not b["final"] and b["health"]["steps"] > a["health"]["steps"]]
    z = later[-1] if later else stepped[-1]
    if z["health"]["steps"] <= a["health"]["steps"]:
        a = stepped[0]
    if z["health"]["steps"] <= a["health"]["steps"]:
        return None
    return a, z


def health(d):
    bs = batches(d)
    h = bs[-1]["health"]
    out = {k: h.get(k) for k in ("events", "ringbuf_drops", "kernel_map_full", "uprobe_hits",
                                  "steps", "uprobe_hits_per_step", "probes_attached",
                                  "probes_failed", "spool_bytes", "spool_files", "marks_hook",
                                  "signals_sent")}
    s = steady(bs)
    if s:
        a, z = s
        out["steady_hits_per_step"] = (z["health"]["uprobe_hits"] - a["health"]["uprobe_hits"]) / \
            (z["health"]["steps"] - a["health"]["steps"])
        out["steady_steps"] = z["health"]["steps"] - a["health"]["steps"]
    else:   # too short a run for two batches with steps: the whole-run figure
        out["steady_hits_per_step"] = h.get("uprobe_hits_per_step")
        out["steady_steps"] = 0
    for k, v in out.items():
        print(f"{k}={'' if v is None else (round(v, 2) if isinstance(v, float) else v)}")


def probes(d):
    bs = batches(d)
    s = steady(bs)
    z = s[1] if s else bs[-1]
    a = s[0] if s else None
    steps = (z["health"]["steps"] - a["health"]["steps"]) if a else z["health"].get("steps", 0)
    before = {}
    if a:
        for i, p in enumerate(a["health"]["probes"]):
            before[(i, p["symbol"])] = p
    for i, p in enumerate(z["health"]["probes"]):
        if not p.get("attached"):
            continue
        b = before.get((i, p["symbol"]), {})
        n = p.get("hits", 0) - b.get("hits", 0)
        r = p.get("return_hits", 0) - b.get("return_hits", 0)
        print(f"{p['group']}|{p['symbol']}|{n / steps if steps else 0:.2f}|{r / steps if steps else 0:.2f}")


def probe_hits(d):
    """group|symbol|hits|return_hits of each attached probe, whole session (newest batch)."""
    for p in batches(d)[-1]["health"]["probes"]:
        if p.get("attached"):
            print(f"{p['group']}|{p['symbol']}|{p.get('hits', 0)}|{p.get('return_hits', 0)}")


def first_event(d):
    bs = batches(d)
    first, root_start = None, None
    for b in bs:
        for s in b["spans"]:
            if s["name"] == "cirron.session":
                root_start = s["start_ns"]
                for m in s.get("marks", []):
                    first = m["ts_ns"] if first is None else min(first, m["ts_ns"])
            elif s["name"] != "epoch":
                first = s["start_ns"] if first is None else min(first, s["start_ns"])
    print(f"first_event_ns={first if first is not None else ''}")
    print(f"session_start_ns={root_start if root_start is not None else ''}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("health", "probes", "probe-hits",
                                                  "first-event"):
        sys.exit(__doc__)
    {"health": health, "probes": probes, "probe-hits": probe_hits,
     "first-event": first_event}[sys.argv[1]](sys.argv[2])
