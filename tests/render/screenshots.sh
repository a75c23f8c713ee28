#!/bin/sh
# screenshots.sh - remakes the pictures of the interactive timeline in
# docs/img (linked from README.md and docs/simulation.md) from the examples:
#
#   tests/render/screenshots.sh [BUILD_DIR]
#
# Needs Debian `chromium` (see render.sh). Look at the PNGs before
# committing them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
ppsc=$build/bin/ppsc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shot() { # example, png, height, view
  "$ppsc" sim --format=html -o "$tmp/$1.html" "$root/examples/$1.pps" 2>/dev/null || true
  "$here/render.sh" "$tmp/$1.html" "$root/docs/img/$2" 1400 "$3" "$4"
}
shot interleaved_1f1b timeline_interleaved.png 600 '#messages'
shot zb_v timeline_zb_v.png 600 ''
shot dualpipe timeline_dualpipe.png 600 ''
shot blocking_1f1b timeline_deadlock.png 690 ''
