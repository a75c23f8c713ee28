"""pty_run.py CMD... - runs CMD with stdout and stderr on a pseudo-terminal
and prints what it wrote, escape characters spelt ESC (for colour tests)."""
import os
import subprocess
import sys

master, slave = os.openpty()
child = subprocess.Popen(sys.argv[1:], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
out = bytearray()
while True:
    try:
        data = os.read(master, 4096)
    except OSError:  # EIO: the child closed the terminal
        break
    if not data:
        break
    out.extend(data)
child.wait()
sys.stdout.write(out.decode("utf-8", "replace").replace("\x1b", "ESC").replace("\r", ""))
