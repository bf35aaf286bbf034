#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# install-trace-engine.sh: Chrome DevTools' trace engine (@paulirish/trace_engine, from npm),
# the trace consumer the Perfetto export tests load their files with, under node. Installed
# once per version into a cache outside the repository, every dependency pinned:
#   CIRRON_NPM_CACHE  (default /var/cache/cirron-probe/npm)/trace_engine-<version>
# Prints the package's directory. Idempotent: a marker file is written last.
set -euo pipefail

VERSION=0.0.65
THIRD_PARTY_WEB=0.30.0		# its dependencies, which it asks for as "latest"
LEGACY_JAVASCRIPT=0.0.1
DIR="${CIRRON_NPM_CACHE:-/var/cache/cirron-probe/npm}/trace_engine-$VERSION"
MARKER="$DIR/.cirron-ok"
PKG="$DIR/node_modules/@paulirish/trace_engine"

if [[ -f "$MARKER" ]]; then
	echo "$PKG"
	exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "install-trace-engine: node and npm are needed (scripts/install-deps.sh installs them)" >&2
	exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cat > "$DIR/package.json" <<JSON
{
  "private": true,
  "dependencies": { "@paulirish/trace_engine": "$VERSION" },
  "overrides": { "third-party-web": "$THIRD_PARTY_WEB", "legacy-javascript": "$LEGACY_JAVASCRIPT" }
}
JSON
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error >&2)
touch "$MARKER"
echo "$PKG"
