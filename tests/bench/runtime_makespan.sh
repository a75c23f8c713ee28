#!/bin/sh
# Simulated vs measured makespan of generated executors (built-in workload).
#
#   tests/bench/runtime_makespan.sh [BUILD_DIR] [MS_PER_UNIT]
#
# Runs the executors tests/exec builds (build them first:
# `ninja -C BUILD_DIR tests/exec/all` or run ctest) with kernels that last
# the cost model's times, MS_PER_UNIT milliseconds per unit (default 20), and
# prints the measured makespan next to the simulator's prediction that the
# emitter stored in each executor. `--kernel=sleep` keeps the figures honest
# when ranks outnumber free cores (2-core CI machines); `spin` (busy-wait)
# is also run for the 4-rank schedules, which needs 4 free cores.
set -eu
BUILD=${1:-build}
SCALE=${2:-20}
EXEC=$BUILD/tests/exec
printf '%-26s %-6s %s\n' schedule kernel "measured vs predicted"
for name in one_f_one_b gpipe zb_h1 zb_h2 interleaved_1f1b interleaved_1f1b_overlap \
            looped_bfs zb_v v_half v_min dualpipe_v; do
  exe=$EXEC/exec_$name
  [ -x "$exe" ] || { echo "missing $exe" >&2; continue; }
  for kernel in sleep spin; do
    line=$("$exe" --kernel=$kernel --time-scale="$SCALE" 2>&1 | grep 'measured makespan' || true)
    printf '%-26s %-6s %s\n' "$name" "$kernel" "${line#measured makespan: }"
  done
done
