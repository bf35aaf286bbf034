#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""user/ is one folder per stage of the data flow (user/README.md). Checks, and exits 1 with
one line per violation:

1. includes: a stage's files include only the stages listed for it below;
2. calls: what each object file uses (nm's undefined symbols) is defined by a file of its own
   stage or of a stage it may use: edges the includes hide (a declaration in another file's
   header, an umbrella header) are seen;
3. no circle of files: the files tied by what they use and define form no loop (strongly
   connected components of more than one file are named, each edge with the symbols behind
   it); and no two files include each other's headers (a header is its .c file's), directly
   or through other headers.

Usage: check_layers.py [ROOT [OBJDIR]]: the tree under ROOT/user (default: this checkout),
its objects under OBJDIR/user (default: ROOT/.output, built by `make check-layers`).
"""
import collections
import os
import re
import subprocess
import sys

# Which stages each stage may use (include, call), lowest first.
ALLOWED = {
    "common": [],
    "tree": ["common"],
    "marks": ["common"],
    "gputime": ["common", "tree"],
    "tftree": ["common", "tree"],
    "infer": ["common", "tree"],
    "sink": ["common", "tree"],
    "ship": ["common", "sink"],
    "read": ["common", "tree"],
    "fetch": ["common", "tree"],
    "perfetto": ["common", "tree", "read"],
    "trace": ["common", "tree", "read", "perfetto"],
    "report": ["common", "tree", "read", "trace"],
    "proc": ["common"],
    "pyobj": ["common", "proc"],
    "probedefs": ["common", "pyobj"],
    "agent": ["common", "proc", "probedefs"],
    "traced": ["common", "tree", "infer", "tftree", "marks", "proc", "pyobj", "probedefs"],
    "snap": ["common", "tree", "sink", "proc", "pyobj", "probedefs", "traced"],
    "attach": ["common", "tree", "sink", "proc", "pyobj", "probedefs", "agent", "traced",
               "snap"],
    "observe": ["common", "tree", "infer", "tftree", "marks", "gputime", "sink", "ship", "proc",
                "pyobj", "probedefs", "agent", "traced", "snap", "attach"],
}
TOP = "(top)"  # user/*.c: commands on top of every stage
INC = re.compile(r'^#include "([a-z_0-9]+/[a-z_0-9]+\.h)"', re.M)


def stage_of(rel):
    return rel.split("/")[0] if "/" in rel else TOP


def may_use(a, b):
    return a == b or a == TOP or b in ALLOWED.get(a, ())


def sources(root):
    out = []
    for d, _, files in os.walk(os.path.join(root, "user")):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), os.path.join(root, "user")))
    return sorted(out)


def check_includes(root, files, bad):
    for rel in files:
        st = stage_of(rel)
        if st != TOP and st not in ALLOWED:
            bad.append(f"{rel}: unknown stage '{st}' (add it to tests/scripts/check_layers.py)")
            continue
        for inc in INC.findall(open(os.path.join(root, "user", rel)).read()):
            dep = stage_of(inc)
            if not may_use(st, dep):
                bad.append(f"user/{rel} includes {inc}: {st} may use only: "
                           f"{' '.join(ALLOWED[st]) or 'nothing'}")


def symbols(obj):
    """(defined, used) global symbols of an object file."""
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] not in "Uvw":
            defined.add(parts[2])
    return defined, used


def call_edges(root, objdir, files, bad):
    """file -> {file: symbols}: who uses what another file defines."""
    defs, uses = {}, {}
    for rel in files:
        if not rel.endswith(".c"):
            continue
        obj = os.path.join(objdir, "user", rel[:-2] + ".o")
        if not os.path.exists(obj):
            bad.append(f"user/{rel}: no object {obj} (build it: make check-layers)")
            continue
        d, u = symbols(obj)
        uses[rel] = u
        for s in d:
            defs.setdefault(s, rel)
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for rel, used in uses.items():
        for s in used:
            b = defs.get(s)
            if b and b != rel:
                edges[rel][b].add(s)
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if not may_use(stage_of(a), stage_of(b)):
                bad.append(f"user/{a} calls user/{b} ({', '.join(sorted(edges[a][b])[:3])}): "
                           f"{stage_of(a)} may use only: {' '.join(ALLOWED[stage_of(a)]) or 'nothing'}")
    return edges


def include_edges(root, files):
    """file.c -> {other.c: headers}: a .c file that includes another file's header (directly
    or through headers) uses that file."""
    direct = {rel: INC.findall(open(os.path.join(root, "user", rel)).read()) for rel in files}
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for rel in files:
        if not rel.endswith(".c"):
            continue
        seen, todo = set(), list(direct[rel])
        while todo:
            h = todo.pop()
            if h in seen:
                continue
            seen.add(h)
            todo += direct.get(h, [])
        for h in seen:
            c = h[:-2] + ".c"
            if c != rel and c in direct:
                edges[rel][c].add(h)
    return edges


def circles(edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    nodes = sorted(set(edges) | {b for a in edges for b in edges[a]})

    def visit(v0):
        work = [(v0, iter(sorted(edges.get(v0, ()))))]
        index[v0] = low[v0] = n[0]
        n[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


ROW = re.compile(r"^\| `([a-z]+)/` \|.*\| ([^|]*) \|$", re.M)


def check_readme(root, bad):
    """user/README.md's table says what each stage may use: it must say what ALLOWED says."""
    path = os.path.join(root, "user", "README.md")
    if not os.path.exists(path):
        return
    rows = {m[1]: m[2].strip() for m in ROW.finditer(open(path).read())}
    for st, deps in ALLOWED.items():
        said = rows.get(st)
        want = ", ".join(deps) or "-"
        if said is None:
            bad.append(f"user/README.md has no row for the stage {st}/")
        elif said != want and not (st == "observe" and said == "every stage above"):
            bad.append(f"user/README.md: {st}/ may use '{said}', check_layers.py says '{want}'")
    for st in rows:
        if st not in ALLOWED:
            bad.append(f"user/README.md has a row for {st}/, which is no stage")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    objdir = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, ".output"))
    files = sources(root)
    bad = []
    check_includes(root, files, bad)
    check_readme(root, bad)
    calls = call_edges(root, objdir, files, bad)
    for comp in circles(calls):
        ties = [f"user/{a} -> user/{b} ({', '.join(sorted(calls[a][b])[:3])})"
                for a in comp for b in comp if b in calls.get(a, {})]
        bad.append(f"a circle of {len(comp)} files: " + "; ".join(ties))
    incs = include_edges(root, files)
    for a in sorted(incs):
        for b in sorted(incs[a]):
            if a < b and a in incs.get(b, {}):
                bad.append(f"user/{a} and user/{b} include each other's headers "
                           f"({', '.join(sorted(incs[a][b] | incs[b][a]))})")
    for line in bad:
        print(f"check-layers: {line}")
    if bad:
        return 1
    print(f"check-layers: {len(files)} files in user/: each stage uses only the stages below "
          "it, and no files use each other in a circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
