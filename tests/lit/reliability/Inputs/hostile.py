#!/usr/bin/env python3
"""Writes the hostile inputs of the terminal-safety tests into a directory.

  hostile.py DIR

Each file carries bytes that a terminal acts on (ESC sequences that clear
the screen or set the window title, BEL, a C1 CSI, a right-to-left
override) where an error makes ppsc echo them: the source line of a
diagnostic, a CSV cell, an import path, a schedule's error() message.
"""
import os
import sys

ESC = b"\x1b"
# Clear the screen, set the title, ring the bell, then a fake verdict.
ATTACK = ESC + b"[2J" + ESC + b"]0;pwned" + b"\x07" + b"all checks passed"
C1_CSI = "\u009b".encode()  # UTF-8 C2 9B
RLO = "\u202e".encode()     # right-to-left override

FILES = {
    # An out-of-range microbatch on a line whose comment holds the attack.
    "line.pps": b"pipeline p { ranks 2; microbatches 2; rank 0: F0 F7 B0; "
                b"rank 1: F0 B0; } // " + ATTACK + b" " + C1_CSI + b"31m" +
                RLO + b"x\n",
    # A message the schedule itself raises, from a string.
    "message.pps": b"schedule s() { error(\"" + ESC + b"[31mred " + C1_CSI +
                   b"0m\"); }\n"
                   b"pipeline p { ranks 1; microbatches 1; schedule s(); }\n",
    # An import path, quoted back in import-not-found.
    "import.pps": b"import \"" + ESC + b"]0;t\x07x.pps\";\n"
                  b"pipeline p { ranks 1; microbatches 1; rank 0: F0 B0; }\n",
    # CSV cells.
    "cells.csv": b"0,F0" + ATTACK + b"\n1,F0\n",
    # A byte that is not UTF-8 and a DEL in a cell.
    "bytes.csv": b"0,F0\xff\x7f\n",
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in FILES.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    # A file name with an escape in it.
    with open(os.path.join(out, "name\x1b[2J.pps"), "wb") as f:
        f.write(b"pipeline p { ranks 1; microbatches 1; rank 0: F0 F0 B0; }\n")


if __name__ == "__main__":
    main()
