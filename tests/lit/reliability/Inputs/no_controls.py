#!/usr/bin/env python3
"""Passes its stdin through to stdout, failing if it holds a character a
terminal acts on: C0 controls other than tab and newline, DEL, C1 controls
(raw bytes or UTF-8), bidirectional controls, line separators, or bytes
that are not UTF-8."""
import sys

data = sys.stdin.buffer.read()
sys.stdout.buffer.write(data)
bad = [b for b in data if (b < 0x20 and b not in (9, 10)) or b == 0x7F]
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print(f"no_controls: not UTF-8: {e}", file=sys.stderr)
    sys.exit(1)
bad += [c for c in text if 0x80 <= ord(c) <= 0x9F or ord(c) in
        (0x061C, 0x200E, 0x200F, 0x2028, 0x2029) or
        0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]
if bad:
    print(f"no_controls: {len(bad)} control characters in the output: "
          f"{bad[:8]!r}", file=sys.stderr)
    sys.exit(1)
