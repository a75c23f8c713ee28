#!/bin/sh
# Re-plan the GPT example from measured costs, end to end, on threads:
#
#   examples/gpt/replan.sh [BUILD_DIR] [WORK_DIR] [SCHEDULE] [MEMORY]
#
#   1. profile: run the GPT executor of SCHEDULE (default one_f_one_b,
#      built in BUILD_DIR) for a few steps with --profile: per stage, the
#      measured F, I, W, B, message times and activation bytes, as a .pps
#      file (WORK_DIR/profile.pps);
#   2. re-plan: `ppsc synth` for the measured costs within MEMORY of
#      activations per rank, a size such as 12MiB (the profile measures
#      each stage's activation bytes; default: the profiled run's peak),
#      each send placed right after its producer (--comm-placement=producer);
#   3. the new schedule's executor (examples/gpt/replan, a find_package(pps)
#      project) is built under the stream rule `peer`, so a rank hands its
#      sends to a comm stream and computes on (what the plan assumes); it
#      runs with --profile;
#   4. print the measured step times next to the compiler's predictions.
#
# docs/synthesis.md ("Re-planning from a profile") explains each step.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
WORK=${2:-replan}
SCHEDULE=${3:-one_f_one_b}
MEMORY=${4:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
STEPS=${STEPS:-6}
# wall (default) or cpu: time kernels by their thread's CPU time, for a
# machine whose cores the four rank threads share (docs/runtime.md).
CLOCK=${CLOCK:-wall}
PPSC=$BUILD/bin/ppsc
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

echo "== 1. profile gpt_$SCHEDULE ($STEPS steps, the first not counted)"
"$BUILD/examples/gpt/gpt_$SCHEDULE" --steps="$STEPS" \
  --profile="$WORK/profile.pps" --profile-clock="$CLOCK" -- --reference=off | grep -v '^gpt: step'
sed -n '/The I\/W split/,/^\/\/$/p' "$WORK/profile.pps"

echo "== 2. re-plan: ppsc synth $WORK/profile.pps"
"$PPSC" synth "$WORK/profile.pps" ${MEMORY:+--memory-limit "$MEMORY"} \
  --comm-placement=producer -o "$WORK/replanned.pps"
grep '^// makespan' "$WORK/replanned.pps"

echo "== 3. build and run the re-planned executor"
cmake -S "$SRC/examples/gpt/replan" -B "$WORK/build" \
  -Dpps_DIR="$BUILD/lib/cmake/pps" -DSCHEDULE="$WORK/replanned.pps" \
  -DSTREAM=peer \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log"
cmake --build "$WORK/build" -j2 >"$WORK/build.log"
"$WORK/build/gpt_replanned" --steps="$STEPS" \
  --profile="$WORK/replanned_profile.pps" --profile-clock="$CLOCK" \
  -- --reference=off |
  grep -v '^gpt: step'

echo "== 4. step times, ms: measured (mean, sd over steps); predicted from the measured costs"
# The profile's step-time row: mean, sd, min, max, steps.
step() { sed -n 's|^// Step time[^:]*: *\([0-9.]*\) *\([0-9.]*\).*|\1 \2|p' "$1"; }
set -- $(step "$WORK/profile.pps"); before=$1 before_sd=$2
set -- $(step "$WORK/replanned_profile.pps"); after=$1 after_sd=$2
sim_before=$("$PPSC" sim --costs="$WORK/profile.pps" --format=json \
  "$SRC/examples/gpt/$SCHEDULE.pps" | sed -n 's|^ *"makespan": \([0-9.]*\).*|\1|p')
predicted=$(sed -n 's|^// The compiler predicted \([0-9.]*\) (ppsc sim), \([0-9.]*\) (executor timing).*|\1 \2|p' \
  "$WORK/replanned_profile.pps")
set -- $predicted
echo "profiled $SCHEDULE: measured $before (sd $before_sd); ppsc sim $sim_before"
echo "re-planned: measured $after (sd $after_sd); ppsc sim $1, executor timing $2"
echo "replan: before $before $before_sd $sim_before after $after $after_sd $1 $2"
