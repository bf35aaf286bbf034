#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make-tf-venv.sh: build once, and cache, the TensorFlow stack of the e2e tests
# (tests/e2e/test_tensorflow.py): a venv on a non-Debian CPython 3.11 (pyenv's, or any
# python3.11 with venv) holding tensorflow-cpu, Keras 3 and tf-keras from PyPI, every version
# pinned (tests/scripts/tf-venv-requirements.txt) and installed without dependency
# resolution (--no-deps: the file is the whole set; tf-keras would otherwise pull the
# `tensorflow` wheel beside tensorflow-cpu).
#
#   CIRRON_VENV_PYTHON  the interpreter (default: pyenv's 3.11 if present, else python3.11)
#   CIRRON_VENV_CACHE   where venvs live (default /var/cache/cirron-probe), outside the repo
#
# The venv is $CACHE/tf-venv-<hash>, the hash of the requirements and the interpreter's
# version: a change to either builds a new one; a link tf-venv-current points at the last one
# built. A marker file (.cirron-venv-ok) is written last; a directory without it is rebuilt.
# Prints the venv's path on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQS="$HERE/tf-venv-requirements.txt"
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
	echo "make-tf-venv.sh: no python3.11 with venv and ensurepip (install pyenv's 3.11," \
		"or python3.11-venv)" >&2
	exit 1
fi
pyver=$("$py" -c 'import sys; print(sys.version.split()[0])')
[[ $pyver == 3.11.* ]] || { echo "make-tf-venv.sh: $py is $pyver, not 3.11" >&2; exit 1; }

hash=$({ cat "$REQS"; echo "$pyver"; } | sha256sum | cut -c1-12)
VENV="$CACHE/tf-venv-$hash"
MARKER="$VENV/.cirron-venv-ok"

if [[ ! -f "$MARKER" ]]; then
	start=$(date +%s)
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.tf-venv-$hash.lock"	# a parallel build of the same venv waits
	flock 9
	if [[ ! -f "$MARKER" ]]; then
		rm -rf "$VENV"
		"$py" -m venv "$VENV"
		"$VENV/bin/python" -m pip --disable-pip-version-check -q install --no-deps \
			-r "$REQS"
		TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" - <<'PY'
import tensorflow as tf, keras, tf_keras
assert tf.__version__ == "2.21.0", tf.__version__
assert keras.__version__.startswith("3."), keras.__version__
print("tensorflow", tf.__version__, "keras", keras.__version__, "tf_keras", tf_keras.__version__)
PY
		date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
		echo "tf venv built at $VENV in $(($(date +%s) - start)) s ($(du -sh "$VENV" | cut -f1))"
	fi
fi
ln -sfn "$VENV" "$CACHE/tf-venv-current"
echo "$VENV"
