#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# user/ is one folder per stage of the data flow (user/README.md). A stage includes only the
# stages it is allowed to (below it), so the includes form no cycle: this checks every
# `#include "stage/..."` in user/ against that table, and that no two files include each
# other's headers across stages. Exit 1 with one line per violation.
set -euo pipefail
cd "$(dirname "$0")/../.."

declare -A allowed=(
	[common]=""
	[tree]="common"
	[marks]="common"
	[sink]="common tree"
	[read]="common tree"
	[proc]="common"
	[pyobj]="common proc"
	[probedefs]="common pyobj"
	[agent]="common proc probedefs"
	[traced]="common tree marks proc pyobj probedefs"
	[snap]="common tree sink proc pyobj probedefs traced"
	[attach]="common tree marks sink proc pyobj probedefs agent traced snap"
	[observe]="common tree marks sink proc pyobj probedefs agent traced snap attach"
)
bad=0
for f in user/*/*.[ch]; do
	stage=${f#user/}; stage=${stage%%/*}
	[[ -v allowed[$stage] ]] || { echo "check-layers: $f: unknown stage '$stage'"; bad=1; continue; }
	while IFS= read -r inc; do
		dep=${inc%%/*}
		[[ $dep == "$stage" ]] && continue
		if [[ ! " ${allowed[$stage]} " == *" $dep "* ]]; then
			echo "check-layers: $f includes $inc: $stage may include only: ${allowed[$stage]:-nothing}"
			bad=1
		fi
	done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$f")
done
# Within a stage too: no two files use each other (a.c reaches b.h and b.c reaches a.h,
# through any headers).
python3 - <<'PY' || bad=1
import glob, os, re, sys
INC = re.compile(r'^#include "([a-z_]+/[a-z_]+\.h)"', re.M)
def direct(path):
    return INC.findall(open(path).read()) if os.path.exists(path) else []
def closure(path):
    out, todo = set(), direct(path)
    while todo:
        h = todo.pop()
        if h not in out:
            out.add(h)
            todo += direct("user/" + h)
    return out
uses = {f[len("user/"):-2]: {h[:-2] for h in closure(f)} for f in glob.glob("user/*/*.c")}
seen = set()
for a in sorted(uses):
    for b in sorted(uses[a]):
        if b != a and a in uses.get(b, ()) and (b, a) not in seen:
            seen.add((a, b))
            print(f"check-layers: user/{a}.c and user/{b}.c include each other's headers")
sys.exit(1 if seen else 0)
PY
if ((bad)); then exit 1; fi
echo "check-layers: user/ stages include only the stages below them"
