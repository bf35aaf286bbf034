#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The uprobes cirron-probe attaches to a process, as data for the benchmarks.

    cirron-probe doctor -p PID [--python-frames L] | probe_list.py list
        one line per probe that resolves: group|symbol|file|offset|return|first instruction
    ... | probe_list.py bpftrace
        a bpftrace program that counts the same uprobes (and uretprobes), one map per probe
    probe_list.py cost LIST HITS
        LIST from `list`, HITS from `spool_info.py probes` (same process kind and level):
        per probe, hits per step x the measured cost of a hit at its kind of entry
        instruction, from the environment (ns): PUSH_NS, PUSH_RET_NS, NOP_NS, NOP_RET_NS
        (bench/hit_cost.sh writes them). Markdown rows, then "total_us=..."

PROBE_LIST_CACHE (a directory) keeps the dynamic symbols read from each file between runs.

doctor prints each group under the first file it matched in; a group can match in several
files (libtorch_python's template symbol is defined in libtorch_cpu and libtorch_python), so
every probe's file is checked here: a named symbol must be defined in the file at that
offset (or 4 bytes before it, where cirron-probe steps over an endbr64); a probe at a static
offset (keyed by build-id in probes/) must sit in a file with that build-id. A probe that
cannot be placed for certain is left out with a warning: a uprobe at a wrong offset can
crash the target.
"""
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROBES_DIR = os.path.join(HERE, "..", "probes")
HINTS = ("torch", "c10", "python", "cudart", "ld-linux")


def load_defs():
    """symbol -> probe definition, from probes/*.json."""
    defs = {}
    for f in sorted(glob.glob(os.path.join(PROBES_DIR, "*.json"))):
        g = json.load(open(f))
        for p in g.get("probes", ()):     # torch_layouts.json holds no probes
            defs[(g["name"], p["symbol"])] = p
    return defs


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout


class Elf:
    def __init__(self, path):
        self.path = path
        self.loads = []     # (file offset, vaddr, size)
        for line in run("readelf", "-lW", path).splitlines():
            w = line.split()
            if w and w[0] == "LOAD":
                self.loads.append((int(w[1], 16), int(w[2], 16), int(w[4], 16)))
        self._syms = None
        self._build_id = None

    def vaddr(self, off):
        for fo, va, sz in self.loads:
            if fo <= off < fo + sz:
                return va + off - fo
        return None

    def offset(self, va):
        for fo, v, sz in self.loads:
            if v <= va < v + sz:
                return fo + va - v
        return None

    def syms(self):
        """file offset -> names of the functions defined there (.dynsym)"""
        if self._syms is not None:
            return self._syms
        cache = os.environ.get("PROBE_LIST_CACHE")
        if cache:
            st = os.stat(self.path)
            key = os.path.join(cache, "%s-%d-%d.json" % (self.path.replace("/", "_"), st.st_size,
                                                        st.st_mtime_ns))
            if os.path.exists(key):
                self._syms = {int(k): v for k, v in json.load(open(key)).items()}
                return self._syms
        self._syms = {}
        for line in run("readelf", "-W", "--dyn-syms", self.path).splitlines():
            w = line.split()
            if len(w) >= 8 and w[3] == "FUNC" and w[6] != "UND":
                off = self.offset(int(w[1], 16))
                if off is not None:
                    self._syms.setdefault(off, []).append(w[7].split("@")[0])
        if cache:
            os.makedirs(cache, exist_ok=True)
            json.dump(self._syms, open(key, "w"))
        return self._syms

    def build_id(self):
        if self._build_id is None:
            m = re.search(r"Build ID: ([0-9a-f]+)", run("readelf", "-n", self.path))
            self._build_id = m.group(1) if m else ""
        return self._build_id

    def first_insn(self, off):
        va = self.vaddr(off)
        if va is None:
            return "?"
        out = run("objdump", "-d", f"--start-address={va:#x}", f"--stop-address={va + 16:#x}", self.path)
        for line in out.splitlines():
            m = re.match(r"^\s*[0-9a-f]+:\t[^\t]*\t(.*)$", line)
            if m:
                return re.sub(r"\s+", " ", m.group(1).split("#")[0]).strip()
        return "?"


_elves = {}


def elf(path):
    if path not in _elves:
        _elves[path] = Elf(path)
    return _elves[path]


def places(e, symbol, off, d):
    """Where the probe (symbol from probes/, file offset) sits in this file, for certain:
    the offset of the function's start (off, or off - 4 past an endbr64), else None."""
    if d and "offset" in d:
        return off if d.get("build_id") == e.build_id() and int(d["offset"], 16) == off else None
    for o in (off, off - 4):
        if any(fnmatch.fnmatchcase(n, symbol) for n in e.syms().get(o, [])):
            return o
    return None


def parse_doctor(text):
    files, probes, group, gfile, in_maps = [], [], None, None, False
    for line in text.splitlines():
        if line.startswith("executable mappings:"):
            in_maps = True
            continue
        if line.startswith("probe groups:"):
            in_maps = False
            continue
        if in_maps and line.startswith("  "):
            files.append(line.strip().split(" (unreadable)")[0])
            continue
        m = re.match(r"^  (\S+): matched in (\S+) \(defines", line)
        if m:
            group, gfile = m.group(1), m.group(2)
            continue
        m = re.match(r"^    ok\s+(.*?)\s+(\S+) \+0x([0-9a-f]+)$", line)
        if m and group:
            probes.append((group, gfile, m.group(1), m.group(2), int(m.group(3), 16)))
    return files, probes


def resolve():
    files, probes = parse_doctor(sys.stdin.read())
    defs = load_defs()
    out = []
    for group, gfile, symbol, action, off in probes:
        d = defs.get((group, symbol))
        cands = [gfile] + [f for f in files if f != gfile and
                           any(h in os.path.basename(f) for h in HINTS)]
        where, start = None, None
        for f in cands:
            if os.path.exists(f):
                start = places(elf(f), symbol, off, d)
                if start is not None:
                    where = f
                    break
        if not where:
            print(f"probe_list: cannot place {group} {symbol} +{off:#x}: left out", file=sys.stderr)
            continue
        ret = bool(d and d.get("return"))
        out.append((group, symbol, where, off, ret, elf(where).first_insn(off), start))
    return out


def insn_kind(insn):
    """How the kernel handles a uprobe on this instruction (arch/x86/kernel/uprobes.c)."""
    if insn.startswith("nop") and "(" in insn:
        return "nop5"       # multi-byte nop: can be optimized into a call
    if insn.startswith(("push", "nop")):
        return "push"       # emulated
    if insn.startswith(("jmp", "call", "j")):
        return "branch"     # emulated as well
    return "xol"            # copied out of line and single-stepped: dearer than measured here


def by_group(rows):
    """(group, index within group) -> row: the spool's health and doctor list probes in
    different orders, but each group's probes in the same order."""
    seen, out = {}, {}
    for r in rows:
        i = seen.get(r[0], 0)
        seen[r[0]] = i + 1
        out[(r[0], i)] = r
    return out


def cost(list_file, hits_file):
    c = {k: float(os.environ[k]) / 1000 for k in ("PUSH_NS", "PUSH_RET_NS", "NOP_NS", "NOP_RET_NS")}
    probes = by_group([l.rstrip("\n").split("|") for l in open(list_file) if l.strip()])
    hits = by_group([l.rstrip("\n").split("|") for l in open(hits_file) if l.strip()])
    total, lower_bound = 0.0, False
    for key, h in hits.items():
        n, r = float(h[2]), float(h[3])
        if n == 0 and r == 0:
            continue
        p = probes.get(key)
        insn = p[5] if p else "?"
        kind = insn_kind(insn)
        entry = c["NOP_NS"] if kind == "nop5" else c["PUSH_NS"]
        ret = (c["NOP_RET_NS"] - c["NOP_NS"]) if kind == "nop5" else (c["PUSH_RET_NS"] - c["PUSH_NS"])
        us = n * entry + r * ret
        lower_bound |= kind == "xol"
        total += us
        name = h[1] if len(h[1]) <= 48 else h[1][:45] + "..."
        print(f"| {h[0]} | `{name}` | `{insn}` ({kind}) | {n:.2f} | {r:.2f} | "
              f"{'>= ' if kind == 'xol' else ''}{us:.1f} |")
    print(f"total_us={total:.1f}")
    print(f"lower_bound={int(lower_bound)}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "cost":
        return cost(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 2 or sys.argv[1] not in ("list", "bpftrace"):
        sys.exit(__doc__)
    probes = resolve()
    if sys.argv[1] == "list":
        for g, s, f, off, ret, insn, _ in probes:
            print(f"{g}|{s}|{f}|{off:#x}|{int(ret)}|{insn}")
        return
    # bpftrace takes a number it cannot match to a symbol as a file offset (with --unsafe).
    # Inside a known symbol (past an endbr64) Debian's bpftrace 0.17 refuses ("compiled without
    # (k|u)probe offset support"): there it probes the function's first instruction instead.
    for i, (g, s, f, off, ret, insn, start) in enumerate(probes):
        at = start if start != off else off
        note = f" (at the function's start {start:#x}, cirron-probe: {off:#x})" if at != off else ""
        print(f"// {g} {s}{note}")
        print(f"uprobe:{f}:{at:#x} {{ @hit{i} = count(); }}")
        if ret:
            print(f"uretprobe:{f}:{at:#x} {{ @ret{i} = count(); }}")


if __name__ == "__main__":
    main()
