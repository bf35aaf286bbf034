# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The GPU check, in one call on a GPU machine (bench/gpu/README.md): the default level's
CUDA totals against torch.profiler's on the same loops, per-span counts, GPU time on steps
(the CUPTI companion) against torch.profiler's kernel intervals, attach mid-run, and the cost
of launch-bound steps, of the companion and of each kind of hit, printed as one table (and
written to $OUT/gpu-check.json when OUT is set).

    python3 bench/gpu/check.py [--carry DIR] [--device cuda|cpu] [--quick]

--carry: the folder bench/gpu/pack.sh made (the binary, its libraries, launch_cost);
--device cpu: a dry run of the whole check on a machine without a GPU (the numbers mean
nothing there; it checks that the check runs). Needs root (BPF).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ap = argparse.ArgumentParser()
ap.add_argument("--carry", default=str(HERE.parent.parent / ".gpu-carry"))
ap.add_argument("--device", default="cuda")
ap.add_argument("--quick", action="store_true", help="fewer rounds (a dry run)")
ap.add_argument("--only", default="",
                help="comma-separated parts: exact,gpu,attach,cost,launchbound,companion,hits,facts")
ap.add_argument("--rounds", type=int, default=0, help="cost rounds (default 10; --quick 2)")
ap.add_argument("--kinds", default="plain,bf16,fp16,compile,hf", help="the loops of 'exact'")
ap.add_argument("--python", default=shutil.which("python3"), help="the Python with torch")
args = ap.parse_args()
CARRY = Path(args.carry).resolve()
BIN = CARRY / "cirron-probe"
# the carried binaries find their libraries by RUNPATH (pack.sh): nothing here for them
ENV = dict(os.environ, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
WORK = Path(tempfile.mkdtemp(prefix="cirron-gpu-"))
PY = args.python
WL = str(HERE / "workloads.py")
DEV = ["--device", args.device]
results = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
rows = []       # the table: (part, what, cirron, reference, verdict)


def save():
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        results["table"] = rows
        Path(out, "gpu-check.json").write_text(json.dumps(results, indent=1))


def row(part, what, ours, ref, ok=None):
    verdict = "" if ok is None else ("ok" if ok else "MISS")
    rows.append((part, what, str(ours), str(ref), verdict))
    save()
    print(f"  {part:8} {what:38} {str(ours):>14} {str(ref):>14} {verdict}", flush=True)


def sh(cmd, env=None, **kw):
    return subprocess.run(cmd, env=dict(ENV, **(env or {})), text=True, capture_output=True,
                          **kw)


# launches counted at the runtime's probes too: two traps a runtime launch, as before (a cost
# comparison only: the default counts them at the driver, one trap)
RUNTIME_LAYER = {"CIRRON_EXPERIMENT_LAUNCH_LAYER": "runtime"}
COMPANION = CARRY / "libcirron_cupti.so"
NO_COMPANION = {"CIRRON_GPU_COMPANION": "off"}
WITH_COMPANION = {"CUDA_INJECTION64_PATH": str(COMPANION)}


def sessions(spool):
    """The spooled sessions: (session, root attrs, spans, health) of each."""
    out = sh([str(BIN), "trace", "--path", str(spool), "--format", "json", "--all"])
    if out.returncode:
        out = sh([str(BIN), "trace", "--path", str(spool), "--format", "json"])
    health = json.loads(sh([str(BIN), "health", "--path", str(spool), "--format", "json"]).stdout
                        or "[]")
    hmap = {h["session_id"]: h["health"] for h in health}
    res = []
    for s in json.loads(out.stdout or "[]"):
        flat = []

        def walk(sp):
            flat.append(sp)
            for c in sp.get("children", []):
                walk(c)
        for sp in s["spans"]:
            walk(sp)
        root = next((sp for sp in flat if sp["name"] == "cirron.session"), None)
        res.append((s, root["attrs"] if root else {}, flat, hmap.get(s["session_id"], {})))
    return res


def job_session(spool, pid=None):
    """The job's own session: the one with the most CUDA launches (helpers have none)."""
    ss = sessions(spool)
    if pid is not None:
        ss = [x for x in ss if x[0]["pid"] == pid] or ss
    return max(ss, key=lambda x: (x[1].get("cuda.launches", 0), len(x[2]))) if ss else None


def per_step(spans, name="step", key="cuda.launches"):
    return [sp["attrs"].get(key, 0) for sp in spans if sp["name"] == name]


def snapshot_rows(label, spool, res):
    """--snapshots (on by default): where the tensor layout came from (a torch the table may
    not know: found in the target), and CUDA parameters listed, not read (device memory)."""
    recs = []
    for f in sorted((spool / "spool").glob("*.json")):
        recs += json.loads(f.read_text()).get("snapshots", [])
    errors = sorted({r["error"] for r in recs if "error" in r})
    sources = sorted({r.get("layout_source", "-") for r in recs if "error" not in r})
    params = [p for r in recs for p in r.get("params", [])]
    on_gpu = [p for p in params if p["device"].startswith("cuda")]
    not_read = [p for p in on_gpu if p.get("not_read") == "device memory"]
    search = [r["layout_search_ms"] for r in recs if "layout_search_ms" in r]
    row(label, "snapshot records (errors)", f"{len(recs)} ({len(errors)})", "", bool(recs)
        and not errors)
    row(label, "  layout_source", ",".join(sources) or "-", "table|found|cache", None)
    if search:
        row(label, "  layout search ms", round(search[0], 2), "", None)
    row(label, "  cuda params not read / listed", f"{len(not_read)}/{len(on_gpu)}", "",
        len(not_read) == len(on_gpu) if args.device == "cuda" else None)
    res["snapshots"] = {"records": len(recs), "errors": errors[:3], "layout_source": sources,
                        "layout_search_ms": search[:1], "torch_layout": sorted(
                            {r.get("torch_layout", "-") for r in recs}),
                        "params_sample": params[:2]}


# ---- 1. exact totals at the default level, against torch.profiler ----------------------------
def exact(kind, label=None, env=None):
    label = label or kind
    spool, prof = WORK / f"spool-{label}", WORK / f"prof-{label}.json"
    t0 = time.time()
    # torch.profiler inside the job needs CUPTI: the companion stays out of this run
    p = sh([str(BIN), "run", "--path", str(spool), "--", PY, WL, kind, "--profile", str(prof),
            *DEV], env=dict(NO_COMPANION, **(env or {})), timeout=300)
    wall = time.time() - t0
    if p.returncode or not prof.exists():
        row(label, "run", f"exit {p.returncode}", "", False)
        print(p.stderr[-3000:], p.stdout[-2000:], file=sys.stderr)
        return None
    ref = json.loads(prof.read_text())
    s, a, spans, h = job_session(spool)
    launches_ref = ref["launch_runtime"] + ref["launch_driver"]
    res = {"wall_s": round(wall, 1), "profiler": ref, "attrs": {k: v for k, v in a.items()
                                                                if k.startswith("cuda.")},
           "health": {k: h.get(k) for k in ("uprobe_hits", "uprobe_hits_per_step", "steps",
                                             "driver_calls_from_runtime", "ringbuf_drops")}}
    row(label, "launches (runtime + driver)", a.get("cuda.launches", 0), launches_ref,
        a.get("cuda.launches", 0) == launches_ref)
    # not the same split: a library's static runtime (cuBLAS) calls the driver, which the
    # profiler names by the runtime call and cirron counts at the driver (source=driver)
    row(label, "  via the driver / cuLaunchKernel", a.get("cuda.launches_driver", 0),
        ref["launch_driver"], None)
    row(label, "graph launches", a.get("cuda.graph_launches", 0), ref["graph_launch"],
        a.get("cuda.graph_launches", 0) == ref["graph_launch"])
    row(label, "memcpy calls", a.get("cuda.memcpy_calls", 0), ref["memcpy"],
        a.get("cuda.memcpy_calls", 0) == ref["memcpy"])
    row(label, "malloc calls", a.get("cuda.malloc_calls", 0), ref["malloc"],
        a.get("cuda.malloc_calls", 0) == ref["malloc"])
    row(label, "synchronize calls", a.get("cuda.sync_calls", 0), ref["sync"],
        a.get("cuda.sync_calls", 0) == ref["sync"])
    launch_hits = sum(p.get("hits", 0) for p in h.get("probes", [])
                      if p.get("action") == "cuda_launch")
    n = a.get("cuda.launches", 0)
    row(label, "uprobe hits per launch", round(launch_hits / n, 3) if n else "-", "1", None)
    k = a.get("cuda.kernels") or {}
    named = sum(v for name, v in k.items() if "(unnamed" not in name)
    row(label, "launches named", f"{named}/{sum(k.values())}", "", None)
    res["gpu_ref_steps"] = ref.get("steps_gpu", [])
    row(label, "reserved peak MiB", round(a.get("cuda.reserved_peak_bytes", 0) / 2**20, 1), "", None)
    steps = per_step(spans)
    with_launches = sum(1 for n in steps if n > 0)
    row(label, "steps with launches / steps", f"{with_launches}/{len(steps)}", "", bool(steps) and
        with_launches == len(steps) if args.device == "cuda" else None)
    span_sum = sum(sp["attrs"].get("cuda.launches", 0) for sp in spans
                   if sp["name"] in ("step",) or (sp["name"] == "forward" and
                                                  sp["attrs"].get("mode") == "eval"))
    row(label, "launches in steps + eval fwd", span_sum, a.get("cuda.launches", 0),
        span_sum <= a.get("cuda.launches", 0))
    if steps:
        row(label, "launches per step (median)", statistics.median(steps), "", None)
    hps = h.get("uprobe_hits_per_step")
    row(label, "uprobe hits per step", round(hps, 1) if hps else "-", "", None)
    row(label, "driver hits left out (runtime's)", h.get("driver_calls_from_runtime", 0), "", None)
    snapshot_rows(label, spool, res)
    res["kernels_sample"] = list(k)[:8]
    res["steps"] = len(steps)
    res["median_step_launches"] = statistics.median(steps) if steps else None
    results.setdefault("exact", {})[label] = res
    return res


# ---- 1b. GPU time on steps (the CUPTI companion) against torch.profiler's kernel intervals --------
def gpu_steps(spans):
    """Steps fully covered by CUPTI records: (gpu_busy_ns, gpu_ns), the first two left out."""
    st = [sp for sp in spans if sp["name"] == "step" and sp["status"] == "ok"]
    st.sort(key=lambda sp: sp["start_ns"])
    return [(sp["attrs"]["gpu_busy_ns"], sp["attrs"].get("gpu_ns", 0)) for sp in st[2:]
            if sp["attrs"].get("gpu_time_coverage") == 1 and "gpu_busy_ns" in sp["attrs"]]


def gpu_rows(label, ours, ref, h, note=""):
    """Medians of steps: cirron's gpu_busy_ns and gpu_ns against the profiler's, within 2%."""
    row(label, "gpu companion", h.get("gpu_companion", "-"), "active",
        h.get("gpu_companion") == "active" if args.device == "cuda" else None)
    if not ours or not ref:
        row(label, "gpu_busy_ns per step (median)", len(ours), f"{len(ref)} steps",
            False if args.device == "cuda" else None)
        return
    mb, rb = statistics.median(b for b, _ in ours), statistics.median(b for b, _ in ref)
    mg, rg = statistics.median(g for _, g in ours), statistics.median(g for _, g in ref)
    row(label, "gpu_busy_ns per step (median)" + note, int(mb), int(rb),
        abs(mb / rb - 1) <= 0.02 if args.device == "cuda" else None)
    row(label, "  ratio to torch.profiler", round(mb / rb, 4), "1 +-0.02", None)
    row(label, "gpu_ns per step (median)", int(mg), int(rg), None)
    row(label, "steps compared (covered)", len(ours), len(ref), None)
    row(label, "gpu clock error ns (max)", h.get("gpu_clock_error_ns", "-"), "", None)


def gpu_time(kind, ref_steps):
    """The loop again under `run`, the companion injected (no profiler: one CUPTI subscriber)."""
    label = f"{kind}-gpu"
    spool = WORK / f"spool-gpu-{kind}"
    dump = {"CIRRON_GPU_DUMP": str(Path(os.environ.get("OUT", WORK)) /
                                   f"gpu-stream-{kind}.jsonl")} if kind == "plain" else {}
    p = sh([str(BIN), "run", "--path", str(spool), "--", PY, WL, kind, *DEV], env=dump,
           timeout=300)
    if p.returncode:
        row(label, "run", f"exit {p.returncode}", "", False)
        print(p.stderr[-3000:], file=sys.stderr)
        return
    s, a, spans, h = job_session(spool)
    ours = gpu_steps(spans)
    gpu_rows(label, ours, ref_steps, h)
    top = next((sp["attrs"].get("gpu_kernels") for sp in spans if sp["name"] == "step"
                and sp["attrs"].get("gpu_kernels")), {})
    row(label, "a step's top kernel", (next(iter(top), "-") or "-")[:14], "", None)
    row(label, "session gpu_busy_share", a.get("gpu_busy_share", "-"), "", None)
    results.setdefault("gpu", {})[kind] = {
        "ours": ours[:50], "ref": ref_steps[:50], "health": {k: v for k, v in h.items()
                                                             if k.startswith("gpu_")},
        "session": {k: v for k, v in a.items() if k.startswith("gpu_")}, "top_kernels": top}



# ---- 2. attach mid-run ------------------------------------------------------------------------
class Lines(threading.Thread):
    """Collects a stream's lines with the time each was read."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []
        self.start()

    def run(self):
        for line in self.stream:
            self.lines.append((time.time(), line.rstrip("\n")))

    def wait_for(self, pattern, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            for t, l in self.lines:
                m = re.search(pattern, l)
                if m:
                    return t, m
            time.sleep(0.05)
        raise TimeoutError(pattern)


def attach_check(run_median, ref_steps=()):
    """The plain loop started with the companion in its environment (as a fleet's job template
    sets it), dormant until the attach; the observer attaches for a few seconds."""
    spool = WORK / "spool-attach"
    job = subprocess.Popen([PY, WL, "plain", "--seconds", "40", "--epochs", "1", *DEV],
                           env=dict(ENV, **WITH_COMPANION), text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    out = Lines(job.stdout)
    out.wait_for(r"^epoch 0")
    obs = sh([str(BIN), "attach", "-p", str(job.pid), "--duration", "4", "--path", str(spool)],
             timeout=120)
    job.kill()
    job.wait()
    s, a, spans, h = job_session(spool, job.pid)
    steps = per_step(spans)[1:]     # the first was under way at the attach
    med = statistics.median(steps) if steps else 0
    row("attach", "exit", obs.returncode, 0, obs.returncode == 0)
    row("attach", "device / cuda_count", f"{a.get('device')}/{a.get('cuda_count')}", "cuda/>=1",
        a.get("device") == "cuda" and (a.get("cuda_count") or 0) >= 1
        if args.device == "cuda" else None)
    gpus = a.get("gpus") or []
    row("attach", "gpus (model / uuid)", f"{len(gpus)}: " + ",".join(
        (g.get("model", "?")[-12:]) for g in gpus), a.get("cuda_count_source", "-"),
        bool(gpus) if args.device == "cuda" else None)
    row("attach", "launches per step (median)", med, run_median,
        med == run_median if args.device == "cuda" else None)
    row("attach", "steps seen", len(steps), "", len(steps) > 0)
    gpu_rows("attach", gpu_steps(spans), list(ref_steps), h, note=" attached")
    results["attach"] = {"median_step_launches": med, "steps": len(steps),
                         "device": a.get("device"), "cuda_count": a.get("cuda_count"),
                         "hits_per_step": h.get("uprobe_hits_per_step")}


# ---- 3. cost of launch-bound steps -------------------------------------------------------------
def windows_median(steps, windows):
    """Per window (t0, t1): the median step time of the steps that ran inside it."""
    return [statistics.median([d for _, t, d in steps if t0 <= t <= t1] or [float("nan")])
            for t0, t1 in windows]


def bootstrap_ci(xs, n=2000):
    """Half the width of a 95% bootstrap interval of the median of xs (0 for fewer than 3)."""
    import random
    if len(xs) < 3:
        return 0.0
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choice(xs) for _ in xs) for _ in range(n))
    return (meds[int(0.975 * n)] - meds[int(0.025 * n)]) / 2


def cost(label, width, batch, n, rounds, depth=4, obs_args=(), profiler=True, obs_env=None,
         job_env=None, min_hold=2.5):
    shape = ["--width", str(width), "--batch", str(batch), "--depth", str(depth)]
    ratios = []
    base_ms = None
    if profiler:    # torch.profiler, in process: base and profiled phases alternate
        stf = WORK / f"steps-prof-{label}.json"
        phases = ",".join(f"base:{n},prof:{n}" for _ in range(rounds))
        p = sh([PY, WL, "cost", *shape, "--phases", phases, "--steps-file", str(stf), *DEV],
               timeout=400)
        if p.returncode:
            row(label, "profiler rounds", f"exit {p.returncode}", "", False)
            print(p.stderr[-2000:], file=sys.stderr)
            return
        st = json.loads(stf.read_text())
        base = [d for ph, _, d in st if ph == "base"]
        for r in range(rounds):
            b = [d for ph, _, d in st[50 + 2 * r * n: 50 + (2 * r + 1) * n]]
            q = [d for ph, _, d in st[50 + (2 * r + 1) * n: 50 + (2 * r + 2) * n]]
            ratios.append(statistics.median(q) / statistics.median(b))
        base_ms = statistics.median(base) * 1e3
    # the observer, attached and detached while the same kind of loop runs
    stf = WORK / f"steps-obs-{label}.json"
    spool = WORK / f"spool-cost-{label}"
    step_s = (base_ms or 2.0) / 1e3
    hold = max(min_hold, n * step_s)     # seconds per phase
    total = 60 + rounds * (2 * hold + 10)     # a bound: check.py stops it when done
    stop = WORK / f"stop-{label}"
    job = subprocess.Popen([PY, WL, "cost", *shape,
                            "--seconds", str(total), "--steps-file", str(stf),
                            "--stop-file", str(stop), *DEV], env=dict(ENV, **(job_env or {})),
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = Lines(job.stdout)
    out.wait_for("^ready")
    base_w, obs_w, hits, step_launches = [], [], [], None
    for r in range(rounds):
        b0 = time.time()
        time.sleep(hold)
        base_w.append((b0 + 0.2, time.time()))
        o = subprocess.Popen([str(BIN), "attach", "-v", "-p", str(job.pid), "--duration",
                              str(hold + 1.5), "--path", str(spool / str(r)), *obs_args],
                             env=dict(ENV, **(obs_env or {})),
                             text=True, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        err = Lines(o.stderr)
        t_att, _ = err.wait_for(r"attached \d+ probes to process")
        o.wait()
        t_end = time.time()
        obs_w.append((t_att + 0.3, min(t_att + hold, t_end - 0.5)))
        time.sleep(0.5)
        x = job_session(spool / str(r), job.pid)
        if x:
            hits.append(x[3].get("uprobe_hits_per_step"))
            launches = per_step(x[2])[1:]
            step_launches = statistics.median(launches) if launches else None
    time.sleep(hold)            # a last base window after the last detach
    base_w.append((t_end + 1.0, time.time()))
    stop.touch()
    job.wait()
    st = json.loads(stf.read_text())
    bm, om = windows_median(st, base_w), windows_median(st, obs_w)
    # each observed window against the base windows on either side of it
    obs_ratios = [o / ((bm[i] + bm[i + 1]) / 2) for i, o in enumerate(om)]
    # the same of base windows against their neighbours: what the method resolves (A/A)
    aa = [bm[i] / ((bm[i - 1] + bm[i + 1]) / 2) for i in range(1, len(bm) - 1)]
    base_ms = statistics.median([d for _, t, d in st if any(a <= t <= b for a, b in base_w)]) * 1e3
    res = {"base_ms": round(base_ms, 3), "profiler_ratios": [round(x, 4) for x in ratios],
           "obs_args": list(obs_args), "launches_per_step": step_launches,
           "observer_ratios": [round(x, 4) for x in obs_ratios], "hits_per_step": hits,
           "base_window_ms": [round(x * 1e3, 3) for x in bm],
           "observed_window_ms": [round(x * 1e3, 3) for x in om]}
    results.setdefault("cost", {})[label] = res
    spread = (max(obs_ratios) - min(obs_ratios)) / 2 if obs_ratios else 0
    row(label, f"base step ms (median)", round(base_ms, 3), "", None)
    ci = bootstrap_ci(obs_ratios)
    row(label, "observer / base (median of rounds)", round(statistics.median(obs_ratios), 4),
        f"±{spread:.4f}", None)
    row(label, "  95% interval of that median", f"±{ci:.4f}", "<= ±0.0100",
        ci <= 0.01 if args.device == "cuda" else None)
    if aa:
        row(label, "  base / base (A/A, median)", round(statistics.median(aa), 4),
            f"±{(max(aa) - min(aa)) / 2:.4f}", None)
    res["ci95_half"] = round(ci, 4)
    res["aa_ratios"] = [round(x, 4) for x in aa]
    if ratios:
        row(label, "torch.profiler / base", round(statistics.median(ratios), 4),
            f"±{(max(ratios) - min(ratios)) / 2:.4f}", None)
    row(label, "launches per step (median)", step_launches, "", None)
    row(label, "uprobe hits per step", round(hits[-1], 1) if hits and hits[-1] else "-", "", None)


# ---- 4. the cost of one hit, per kind ------------------------------------------------------------
def hit_cost(rounds):
    lc = CARRY / "launch_cost"
    kinds = ("runtime_ns", "driver_ns", "sync_ns")
    bare, obs = {k: [] for k in kinds}, {k: [] for k in kinds}
    for _ in range(rounds):
        for mode in ("bare", "obs"):
            cmd = [str(lc), "20000"]
            if mode == "obs":
                cmd = [str(BIN), "run", "--path", str(WORK / "spool-hits"), "--"] + cmd
            p = sh(cmd, env=NO_COMPANION, timeout=120)    # the uprobes' cost alone
            m = dict(re.findall(r"(\w+_ns)=([\d.]+)", p.stdout))
            if not m:
                row("hits", f"launch_cost {mode}", f"exit {p.returncode}", "", False)
                print(p.stderr[-1500:], file=sys.stderr)
                return
            for k in kinds:
                (bare if mode == "bare" else obs)[k].append(float(m[k]))
    res = {}
    for k in kinds:
        b, o = statistics.median(bare[k]), statistics.median(obs[k])
        res[k] = {"bare": b, "observed": o, "per_hit_ns": round(o - b, 1)}
        what = {"runtime_ns": "runtime launch (1 hit, at the driver)",
                "driver_ns": "driver launch (1 entry hit)",
                "sync_ns": "stream sync (entry + return)"}[k]
        row("hits", what + " ns added", round(o - b, 1), f"of {b:.0f} ns", None)
    results["hit_cost"] = res


def machine():
    info = {}
    smi = shutil.which("nvidia-smi")
    q = sh([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]) \
        if smi else None
    info["gpu"] = q.stdout.strip() if q and q.stdout.strip() else "none"
    info["kernel"] = os.uname().release
    t = sh([PY, "-c", "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version.split()[0])"])
    info["torch_cuda_python"] = t.stdout.strip()
    info["cpu"] = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                        if l.startswith("model name")), "?")
    results["machine"] = info
    for k, v in info.items():
        print(f"# {k}: {v}", flush=True)


# ---- 5. facts for naming kernels and GPUs (issue 34): what the wheels' libraries use ---------
KERNEL_SYMS = ("__cudaRegisterFunction", "__cudaGetKernel", "cudaGetFuncBySymbol",
               "cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction",
               "cuLibraryLoadData", "cuModuleLoadData", "cudaLaunchKernelExC", "cuLaunchKernelEx")


def facts():
    t = sh([PY, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"])
    tdir = Path(t.stdout.strip())
    libs = list((tdir / "lib").glob("*.so*")) + list(tdir.parent.glob("nvidia/*/lib/*.so*"))
    uses = {}
    for lib in sorted(libs):
        try:
            data = lib.read_bytes()
        except OSError:
            continue
        found = [sym for sym in KERNEL_SYMS if b"\0" + sym.encode() + b"\0" in data]
        if found:
            uses[lib.name] = found
    info = {"kernel_symbols_in_dynstr": uses}
    gpus = sorted(Path("/proc/driver/nvidia/gpus").glob("*/information"))
    info["proc_driver_nvidia"] = [g.read_text()[:600] for g in gpus[:2]]
    info["nvml"] = [str(p) for p in Path("/").glob("usr/lib*/**/libnvidia-ml.so.1")][:3]
    info["dev_nvidia"] = sorted(p.name for p in Path("/dev").glob("nvidia*"))
    info["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    results["facts"] = info
    for name, syms in uses.items():
        print(f"# {name}: {' '.join(syms)}", flush=True)


def main():
    # default: what fits one device call (~9 min on the H200); "cost" (GPU-bound steps without
    # the companion, measured 2026-11-28) only when asked
    parts = set(args.only.split(",")) if args.only else {"exact", "gpu", "attach", "launchbound",
                                                           "companion", "hits", "facts"}
    machine()
    if "facts" in parts:
        try:
            facts()
        except Exception as e:
            print(f"# facts: {e}", flush=True)
    print(f"  {'part':8} {'what':38} {'cirron':>14} {'reference':>14}")
    plain, refs = None, {}
    kinds = args.kinds.split(",") if args.device == "cuda" else ["plain"]
    if parts & {"exact", "gpu", "attach"}:
        for kind in kinds if parts & {"exact", "gpu"} else ["plain"]:
            try:
                r = exact(kind)
                refs[kind] = (r or {}).get("gpu_ref_steps", [])
                if kind == "plain":
                    plain = r
                if "gpu" in parts:
                    gpu_time(kind, refs[kind])
            except Exception as e:          # one loop's failure must not cost the others
                row(kind, "check", f"error: {e}"[:40], "", False)
    if "attach" in parts:
        try:
            attach_check(plain["median_step_launches"] if plain else None, refs.get("plain", ()))
        except Exception as e:
            row("attach", "check", f"error: {e}"[:40], "", False)
    rounds = args.rounds or (2 if args.quick else 10)
    if "cost" in parts:
        for label, width, batch, n in (("2ms", 4096, 256, 300), ("20ms", 8192, 2048, 60)):
            if args.device != "cuda":
                width, batch, n = 256, 64, 100
            try:
                cost(label, width, batch, n, rounds)
            except Exception as e:
                row(label, "cost", f"error: {e}"[:40], "", False)
    if "launchbound" in parts:     # CPU-bound steps: every launch's cost shows in full
        # one trap a launch (default), two (the runtime's launch probes kept), no per-call
        # probes; interleaved windows of ~700 steps, timed inside the loop
        for label, obs_args, env in (("lb-default", (), None),
                                     ("lb-runtime", (), RUNTIME_LAYER),
                                     ("lb-off", ("--cuda-calls", "off"), None)):
            try:
                cost(label, 256, 32, 600 if args.device == "cuda" else 50, rounds, depth=8,
                     obs_args=obs_args, profiler=False, obs_env=env, min_hold=1.5)
            except Exception as e:
                row(label, "cost", f"error: {e}"[:40], "", False)
    if "companion" in parts:       # the job started with the companion: dormant in the base
        # windows, CUPTI on while the observer is attached
        for label, width, batch, n, depth in (("lb-companion", 256, 32, 600, 8),
                                              ("20ms-companion", 8192, 2048, 60, 4)):
            if args.device != "cuda":
                width, batch, n, depth = 256, 32, 50, 8
            try:
                cost(label, width, batch, n, rounds, depth=depth, profiler=False,
                     job_env=WITH_COMPANION, min_hold=1.5)
            except Exception as e:
                row(label, "cost", f"error: {e}"[:40], "", False)
    if "hits" in parts and args.device == "cuda":
        try:
            hit_cost(3)
        except Exception as e:
            row("hits", "cost", f"error: {e}"[:40], "", False)
    save()
    misses = sum(1 for r in rows if r[4] == "MISS")
    print(f"gpu-check: {len(rows)} rows, {misses} missed", flush=True)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
