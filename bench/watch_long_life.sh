#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The node agent's memory over a long life (issue 15): bench/watch_long_life.py with
# LIFE_JOBS short jobs (10000, 250 ms each, 16 at a time) and LIFE_TORCH torch jobs (20);
# about 10 minutes here.
#   LIFE_JOBS=10000 LIFE_TORCH=20 bench/watch_long_life.sh
source "$(dirname "$0")/lib.sh"
NAME=watch_long_life
reset_results $NAME
"$PY" bench/watch_long_life.py --jobs "${LIFE_JOBS:-10000}" --torch-jobs "${LIFE_TORCH:-20}" \
	--sample-every "$(( ${LIFE_JOBS:-10000} >= 10 ? ${LIFE_JOBS:-10000} / 10 : 1 ))" \
	--python "$PY" --md "$(section_file $NAME)" --targets "$RES/$NAME.targets" >&2
cat "$(section_file $NAME)"
