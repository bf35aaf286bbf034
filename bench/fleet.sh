#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A fleet's spans in the store (issue 42): a synthetic fleet through the real writer into
# SeaweedFS, then the cookbook's queries in chdb and DuckDB (bench/fleet_bench.py says how).
# Sizes: NODES (125), RANKS (8 per node), STEPS (1000); QUICK=1 in run.sh: a tiny fleet.
source "$(dirname "$0")/lib.sh"
reset_results fleet
[[ ${QUICK:-0} == 1 ]] && export NODES=${NODES:-4} RANKS=${RANKS:-2} STEPS=${STEPS:-50}
weed=$(tests/scripts/make-s3-venv.sh | tail -1)
venv=$(tests/scripts/make-fleet-venv.sh | tail -1)
mkdir -p "$TMPB/fleet"
"$PY" bench/fleet_bench.py "$TMPB/fleet" "$weed" "$venv" "$PROBE" "$(section_file fleet)" \
	"$RES/fleet.targets"
