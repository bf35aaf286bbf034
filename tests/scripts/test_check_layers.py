#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""check_layers.py must fail on what it is there to catch: two files that call each other
with no header of the other's included (an umbrella header's declarations), a circle of three
files, and a call into a stage above; and pass a tree without them. Made in a scratch tree of
small C files, compiled; run by `make check-layers` before the real check."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def tree(files):
    d = tempfile.mkdtemp(prefix="check-layers-")
    for rel, text in files.items():
        p = os.path.join(d, "user", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(text)
    for rel in files:
        if rel.endswith(".c"):
            o = os.path.join(d, ".output", "user", rel[:-2] + ".o")
            os.makedirs(os.path.dirname(o), exist_ok=True)
            subprocess.run(["cc", "-c", "-I", os.path.join(d, "user"),
                            "-Wno-implicit-function-declaration",
                            os.path.join(d, "user", rel), "-o", o], check=True)
    return d


def check(files, want_ok, want_text):
    d = tree(files)
    r = subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py"), d],
                       capture_output=True, text=True)
    ok = (r.returncode == 0) == want_ok and want_text in r.stdout
    if not ok:
        print(f"test_check_layers: wanted {'a pass' if want_ok else 'a failure'} saying "
              f"'{want_text}', got exit {r.returncode}:\n{r.stdout}{r.stderr}")
    return ok


UMBRELLA = "int a(void);\nint b(void);\nint c(void);\n"
cases = [
    # a.c and b.c call each other through one umbrella header: no include ties them
    ({"common/all.h": UMBRELLA,
      "common/a.c": '#include "common/all.h"\nint a(void) { return b(); }\n',
      "common/b.c": '#include "common/all.h"\nint b(void) { return a(); }\n'},
     False, "a circle of 2 files"),
    ({"common/all.h": UMBRELLA,
      "common/a.c": "int a(void) { return b(); }\n",
      "common/b.c": "int b(void) { return c(); }\n",
      "common/c.c": "int c(void) { return a(); }\n"},
     False, "a circle of 3 files"),
    # common may use no stage: a call up into tree/ is refused, declared or not
    ({"common/a.c": "int a(void) { return t(); }\n",
      "tree/t.c": "int t(void) { return 1; }\n"},
     False, "user/common/a.c calls user/tree/t.c"),
    ({"common/a.c": '#include "tree/t.h"\nint a(void) { return 0; }\n',
      "tree/t.h": "int t(void);\n", "tree/t.c": "int t(void) { return 1; }\n"},
     False, "user/common/a.c includes tree/t.h"),
    # two files that include each other's headers, calls or not
    ({"common/a.h": '#include "common/b.h"\n', "common/b.h": "struct b { int x; };\n",
      "common/a.c": '#include "common/a.h"\nint a(void) { return 0; }\n',
      "common/b.c": '#include "common/a.h"\nint b(void) { return 0; }\n'},
     False, "include each other's headers"),
    # user/README.md's table must say what each stage may use, as the checker does
    ({"README.md": "| folder | in | out | may use |\n|---|---|---|---|\n"
                   "| `tree/` | x | y | - |\n",
      "tree/t.c": "int t(void) { return 0; }\n"},
     False, "tree/ may use '-', check_layers.py says 'common'"),
    # a line of calls downwards is fine
    ({"tree/t.c": "int t(void) { return a(); }\n",
      "common/a.c": "int a(void) { return b(); }\n",
      "common/b.c": "int b(void) { return 0; }\n"},
     True, "no files use each other in a circle"),
]
failed = sum(not check(*c) for c in cases)
print(f"test_check_layers: {len(cases) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
