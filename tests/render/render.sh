#!/bin/sh
# render.sh - render a `ppsc sim` SVG or HTML timeline headless in Chromium
# and save a PNG, so a person (or a reviewer) can look at the picture.
#
#   tests/render/render.sh INPUT.svg|INPUT.html OUTPUT.png [WIDTH HEIGHT [#VIEW]]
#   tests/render/render.sh --pps FILE.pps OUTPUT.png [ppsc sim options...]
#
# With --pps the script runs `ppsc sim --format=html` first (PPSC names the
# binary, default build/bin/ppsc). An SVG is shot at its own size, an HTML
# page at 1400 x 900 unless WIDTH and HEIGHT are given; #VIEW opens the
# interactive timeline with a view (#messages, #critical, #view=10,40, joined
# with '&'). Chromium (Debian package `chromium`) runs with a fresh empty
# profile and no network or background services. Exit 0 when the PNG exists
# and is not empty. tests/render/screenshots.sh makes the ones in docs/img.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
chrome=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chrome" ]; then
  echo "render.sh: chromium not found (apt-get install chromium)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--pps" ]; then
  [ $# -ge 3 ] || { echo "usage: render.sh --pps FILE.pps OUT.png [sim options]" >&2; exit 2; }
  pps=$1; shift; pps=$1; out=$2; shift 2
  ppsc=${PPSC:-$root/build/bin/ppsc}
  "$ppsc" sim --format=html "$@" -o "$tmp/page.html" "$pps"
  input=$tmp/page.html
  width=0; height=0; view=
else
  [ $# -ge 2 ] || { echo "usage: render.sh INPUT.svg|.html OUT.png [W H]" >&2; exit 2; }
  input=$1; out=$2; width=${3:-0}; height=${4:-0}; view=${5:-}
fi

# Size the window to the picture: read width/height from the <svg> tag.
case "$input" in *.html) [ "$width" = 0 ] && width=1400 && height=900;; esac
if [ "$width" = 0 ]; then
  dims=$(grep -o '<svg[^>]*' "$input" | head -1 |
         sed -n 's/.*width="\([0-9.]*\)".*height="\([0-9.]*\)".*/\1 \2/p')
  width=$(echo "$dims" | cut -d' ' -f1 | cut -d. -f1)
  height=$(echo "$dims" | cut -d' ' -f2 | cut -d. -f1)
  [ -n "$width" ] || width=1600
  [ -n "$height" ] || height=900
fi

abs=$(cd "$(dirname "$input")" && pwd)/$(basename "$input")
outabs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -f "$outabs"
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$tmp/profile" --hide-scrollbars \
  --window-size="$width,$height" --screenshot="$outabs" "file://$abs$view" \
  >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
if [ ! -s "$outabs" ]; then
  cat "$tmp/log" >&2
  echo "render.sh: no screenshot written" >&2
  exit 1
fi
echo "render.sh: wrote $out (${width}x${height})"
