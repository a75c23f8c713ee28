#!/bin/sh
# Whole-process figures of ppsc at scale: CPU seconds (user + system, best
# of RUNS, since the machine may be shared) and peak RSS of each command.
#
#   tests/bench/whole_process.sh [BUILD_DIR] [RUNS]
#   CALLGRIND=1 tests/bench/whole_process.sh    # also instruction counts
#
# Inputs (made in a temporary directory): interleaved 1F1B on 64 ranks x 2
# chunks x 1024 microbatches as a programmable schedule (il.pps), its
# lowered text (`ppsc emit --target=pps`, 782,336 actions) and its PyTorch
# CSV (`ppsc emit --target=torch`); V-Half at 64 ranks x 4096 microbatches
# (1.57M actions); and `ppsc synth --placement v` at P = 32, 64 (M = 2P,
# memory limit P + 2). With CALLGRIND=1, callgrind counts the instructions
# of `ppsc check` of the lowered text (the parse) and of il.pps (the
# evaluator), which are repeatable where times are not.
set -eu
BUILD=${1:-build}
RUNS=${2:-3}
PPSC=$(cd "$BUILD" && pwd)/bin/ppsc
[ -x "$PPSC" ] || { echo "missing $PPSC (build ppsc first)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
cat > il.pps <<'EOF'
pipeline p { ranks 64; stages 2 * P placement loop; microbatches 1024; schedule interleaved_1f1b(); }
EOF
cat > vh.pps <<'EOF'
pipeline p { ranks 64; stages 2 * P placement v; microbatches 4096; schedule v_half(); }
EOF
"$PPSC" emit --target=pps -o il.lowered.pps il.pps
"$PPSC" emit --target=torch -o il.csv il.pps

# best CPU seconds and the peak RSS of that run, over RUNS runs
measure() {
  best=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%U %S %M' -o t.out "$@" >/dev/null 2>&1 || true
    line=$(tail -n 1 t.out)
    cpu=$(echo "$line" | awk '{printf "%.3f", $1 + $2}')
    rss=$(echo "$line" | awk '{printf "%.1f", $3 / 1024}')
    if [ -z "$best" ] || awk "BEGIN{exit !($cpu < $best)}"; then
      best=$cpu
      bestrss=$rss
    fi
  done
  printf '%8s s %8s MB  %s\n' "$best" "$bestrss" "$*" | sed "s|$PPSC|ppsc|"
}

echo "cpu (best of $RUNS)  peak RSS  command"
measure "$PPSC" check il.lowered.pps
measure "$PPSC" lint il.lowered.pps
measure "$PPSC" lint il.csv
measure "$PPSC" check il.pps
measure "$PPSC" lint il.pps
measure "$PPSC" sim il.pps
measure "$PPSC" check vh.pps
for P in 32 64; do
  measure "$PPSC" synth --ranks=$P --microbatches=$((2 * P)) --placement=v \
    --memory-limit=$((P + 2)) -o synth.pps
done

if [ "${CALLGRIND:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "CALLGRIND=1 needs valgrind" >&2; exit 1; }
  for f in il.lowered.pps il.pps; do
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$PPSC" check "$f" 2>&1 | sed -n 's/.*I *refs: *//p')
    printf 'callgrind: ppsc check %-16s %s instructions\n' "$f" "$ir"
  done
fi
