#!/usr/bin/env python3
"""exitcode.py N CMD... - runs CMD and succeeds only if it exits with N
(lit's `not` accepts any failure; usage errors must be 2, findings 1).
Output passes through."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    sys.stderr.write("exitcode.py: %s exited %d, expected %d\n" % (sys.argv[2], got, want))
    sys.exit(1)
