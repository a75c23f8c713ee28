#!/bin/sh
# Runs two ppsc builds on every input the repository has and compares what
# they print: the check that a faster build compiles exactly what an older
# one did (the unit tests compare the fast paths with their references
# inside one build; this compares two builds, e.g. before and after a
# change).
#
#   tests/bench/compare_builds.sh OLD_PPSC NEW_PPSC [OLD_STDLIB NEW_STDLIB]
#
# The stdlib directories default to each build's share/pps/stdlib; both
# builds see theirs at the same path, so messages that name it compare.
# Inputs: every .pps and .csv under examples/ and tests/lit/ of this
# source tree (run in their own directory, so relative imports resolve),
# and every stdlib schedule at P = 2, 3, 4, 8 and M = 1, 2, 3, 4, 8, 13, 32.
# Commands on each: lint (text and JSON diagnostics, under each comm
# model), emit --target=pps (plain, --align-bubbles, --fsdp) and sim
# --format=summary. Prints the inputs and commands whose output (stdout,
# stderr and exit code) differs, and a count; exits 1 if any differs.
set -u
abspath() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
OLD=$(abspath "$1")
NEW=$(abspath "$2")
OLD_STD=$(abspath "${3:-$(dirname "$OLD")/../share/pps/stdlib}")
NEW_STD=$(abspath "${4:-$(dirname "$NEW")/../share/pps/stdlib}")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/tree/std"
(cd "$SRC" && find examples tests/lit -name '*.pps' -o -name '*.csv' |
  sort >"$DIR/list")
(cd "$SRC" && tar cf - examples tests/lit) | (cd "$DIR/tree" && tar xf -)

# stdlib schedules: name, stages expression, placement (as bench_stdlib_gen)
while read -r NAME STAGES PLACE; do
  for P in 2 3 4 8; do
    for M in 1 2 3 4 8 13 32; do
      printf 'pipeline p { ranks %s; stages %s placement %s; microbatches %s; schedule %s(); }\n' \
        "$P" "$STAGES" "$PLACE" "$M" "$NAME" >"$DIR/tree/std/${NAME}_${P}_${M}.pps"
      echo "std/${NAME}_${P}_${M}.pps" >>"$DIR/list"
    done
  done
done <<'EOF'
gpipe P loop
one_f_one_b P loop
interleaved_1f1b 2*P loop
interleaved_1f1b_overlap 2*P loop
looped_bfs 2*P loop
zb_h1 P loop
zb_h2 P loop
zb_v 2*P v
v_half 2*P v
v_min 2*P v
dualpipe_v 2*P v
dualpipe 2*P v;directions 2
EOF

run() { # BIN STDLIB OUT FILE ARGS...
  B=$1
  L=$2
  O=$3
  F=$4
  shift 4
  ln -sfn "$L" "$DIR/stdlib"
  (cd "$DIR/tree/$(dirname "$F")" &&
    PPS_STDLIB_PATH="$DIR/stdlib" timeout 60 "$B" "$@" "$(basename "$F")" \
      >"$O.out" 2>"$O.err"
    echo "rc=$?" >>"$O.err")
}
DIFFS=0
CASES=0
while read -r F; do
  for CMD in "lint" "lint --diagnostics-format=json" "lint --comm-model=eager" \
    "lint --comm-model=batched" "emit --target=pps" \
    "emit --target=pps --align-bubbles" "emit --target=pps --fsdp" \
    "sim --format=summary"; do
    CASES=$((CASES + 1))
    # shellcheck disable=SC2086
    run "$OLD" "$OLD_STD" "$DIR/old" "$F" $CMD
    # shellcheck disable=SC2086
    run "$NEW" "$NEW_STD" "$DIR/new" "$F" $CMD
    if ! cmp -s "$DIR/old.out" "$DIR/new.out" ||
      ! cmp -s "$DIR/old.err" "$DIR/new.err"; then
      DIFFS=$((DIFFS + 1))
      echo "differs: ppsc $CMD $F"
    fi
  done
done <"$DIR/list"
echo "$CASES runs on $(wc -l <"$DIR/list") inputs, $DIFFS differ"
[ "$DIFFS" = 0 ]
