#!/bin/sh
# Re-planning the GPT example from measured costs (examples/gpt/replan.sh),
# REPS times: the measured step time of the profiled 1F1B and of the
# re-planned schedule next to the compiler's predictions from the measured
# costs (ppsc sim's; for the re-planned executor also the executor
# timing's, how this runtime runs it), with the spread over steps and over
# repetitions. Build first: `ninja -C BUILD_DIR gpt_one_f_one_b`.
#
#   tests/bench/replan_gpt.sh [BUILD_DIR] [REPS] [CLOCK] [WORK_DIR]
#
# CLOCK: wall (default) or cpu (kernels by CPU time: the four rank threads
# then share fewer cores without their waits counting as costs; the step
# times stay wall time, so on such a machine they exceed any prediction).
set -eu
BUILD=${1:-build}
REPS=${2:-3}
CLOCK=${3:-wall}
WORK=${4:-replan_bench}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); 4 rank threads; kernels timed by the $CLOCK clock"
printf '%-4s %-24s %-10s %-24s %-10s %-10s %s\n' rep "1F1B measured (sd)" "sim" \
  "re-planned measured (sd)" "sim" "executor" "measured / executor"
Ratios=""
i=1
while [ "$i" -le "$REPS" ]; do
  line=$(CLOCK=$CLOCK sh "$SRC/examples/gpt/replan.sh" "$BUILD" "$WORK/rep$i" |
         grep '^replan:')
  set -- $line
  # replan: before B BSD BSIM after A ASD ASIM AEXEC
  r=$(awk "BEGIN { printf \"%.3f\", $7 / ${10} }")
  Ratios="$Ratios $r"
  printf '%-4s %-24s %-10s %-24s %-10s %-10s %s\n' "$i" "$3 ($4)" "$5" \
    "$7 ($8)" "$9" "${10}" "$r"
  i=$((i + 1))
done
echo "$Ratios" | awk '{ for (i = 1; i <= NF; i++) { s += $i; q += $i * $i }
  m = s / NF; printf "measured / executor timing: mean %.3f, sd %.3f over %d runs\n",
  m, (NF > 1 ? sqrt((q - NF * m * m) / (NF - 1)) : 0), NF }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
