#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-venv.sh: build once, and cache, the "real users' stack" of the e2e tests: a venv on a
# non-Debian CPython 3.11 (pyenv's, or any python3.11 with venv) holding the official
# PyTorch CPU wheel torch==2.13.0 and transformers, accelerate, lightning and keras from
# PyPI, every version pinned (tests/scripts/venv-requirements.txt).
#
#   CIRRON_VENV_PYTHON  the interpreter (default: pyenv's 3.11 if present, else python3.11)
#   CIRRON_VENV_CACHE   where venvs live (default /var/cache/cirron-probe), outside the repo
#
# The venv is /var/cache/cirron-probe/venv-<hash>, the hash of the pinned requirements, the
# torch pin and the interpreter's version: a change to any of them builds a new one. A link
# venv-current points at the last one built; the e2e tests use it. Idempotent: a marker file
# (.cirron-venv-ok) is written last; a directory without it is removed and rebuilt.
# Prints the venv's path on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQS="$HERE/venv-requirements.txt"
TORCH_PIN="torch==2.13.0"
CACHE="${CIRRON_VENV_CACHE:-/var/cache/cirron-probe}"

py="${CIRRON_VENV_PYTHON:-}"
if [[ -z "$py" ]]; then
	for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11.*/bin/python3.11 \
		 "$(command -v python3.11 || true)"; do
		if [[ -x "$c" ]] && "$c" -c 'import venv, ensurepip' 2>/dev/null; then
			py="$c"
			break
		fi
	done
fi
if [[ -z "$py" ]]; then
	echo "make-venv.sh: no python3.11 with venv and ensurepip (install pyenv's 3.11," \
		"or python3.11-venv)" >&2
	exit 1
fi
pyver=$("$py" -c 'import sys; print(sys.version.split()[0])')
[[ $pyver == 3.11.* ]] || { echo "make-venv.sh: $py is $pyver, not 3.11" >&2; exit 1; }

hash=$({ cat "$REQS"; echo "$TORCH_PIN"; echo "$pyver"; } | sha256sum | cut -c1-12)
VENV="$CACHE/venv-$hash"
MARKER="$VENV/.cirron-venv-ok"

if [[ -f "$MARKER" ]]; then
	ln -sfn "$VENV" "$CACHE/venv-current"
	echo "venv ready: $VENV"
	echo "$VENV"
	exit 0
fi

start=$(date +%s)
mkdir -p "$CACHE"
# Another build of the same venv (a parallel CI job) waits for this one.
exec 9>"$CACHE/.venv-$hash.lock"
flock 9
if [[ -f "$MARKER" ]]; then
	ln -sfn "$VENV" "$CACHE/venv-current"
	echo "$VENV"
	exit 0
fi
rm -rf "$VENV"
"$py" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
cons="$VENV/.torch-constraint.txt"
echo "$TORCH_PIN" >"$cons"
# torch first, alone (the official CPU wheel; never unpinned: that would be a CUDA build),
# then the rest under a constraint that holds it.
"${pip[@]}" install "$TORCH_PIN"
"${pip[@]}" install -c "$cons" -r "$REQS"
KERAS_BACKEND=torch "$VENV/bin/python" - <<'PY'
import torch, transformers, accelerate, lightning, keras
assert torch.__version__.split("+")[0] == "2.13.0", torch.__version__
print("torch", torch.__version__, "transformers", transformers.__version__,
      "accelerate", accelerate.__version__, "lightning", lightning.__version__,
      "keras", keras.__version__)
PY
"$VENV/bin/python" -m pip freeze >"$VENV/.cirron-venv-freeze"
date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
ln -sfn "$VENV" "$CACHE/venv-current"
end=$(date +%s)
echo "venv built at $VENV in $((end - start)) s ($(du -sh "$VENV" | cut -f1))"
echo "$VENV"
