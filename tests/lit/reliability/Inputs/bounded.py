#!/usr/bin/env python3
"""Runs a command under a time and memory bound, for the hostile-input tests.

  bounded.py [--seconds S] [--rss-mb M] [--exit CODE] [--feed TEXT]
             [--signal-after T:SIG] -- COMMAND ARGS...

The command's stdout and stderr pass through. The run fails (exit 124) if
it takes longer than S seconds (it is killed), and (exit 125) if its peak
resident memory goes over M MiB. Otherwise the command's exit code is
returned (128 + N for a signal N), or, with --exit, 0 if it is CODE and 1
(with a message) if not: a bound that is broken never passes for the
expected failure, as it would under `not`. --feed writes TEXT to the command's stdin
over and over until the command stops reading: a stream that never ends,
like `yes let | ppsc check -`. --signal-after sends signal SIG (a name such
as INT or TERM) T seconds after the start.

In a sanitizer build the lit configuration sets PPS_BOUNDS=asan: the
bounds are then 6x the time and 4x the memory (ASan's slowdown and shadow
memory, as hostile_bounds_asan.test loosens them); exit codes and outputs
are checked the same.
"""
import argparse
import os
import resource
import signal
import subprocess
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rss-mb", type=float, default=1024.0)
    ap.add_argument("--exit", type=int)
    ap.add_argument("--feed")
    ap.add_argument("--signal-after")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if os.environ.get("PPS_BOUNDS") == "asan":
        args.seconds *= 6
        args.rss_mb *= 4
    cmd = args.command
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        ap.error("no command")

    start = time.monotonic()
    # A test runner may start us with SIGINT ignored (as a shell does for a
    # background job); the command gets the default, as at a terminal.
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE if args.feed is not None else None,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def feed():
        chunk = (args.feed.encode() + b"\n") * 4096
        try:
            while proc.poll() is None:
                proc.stdin.write(chunk)
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    if args.feed is not None:
        threading.Thread(target=feed, daemon=True).start()
    if args.signal_after:
        after, name = args.signal_after.split(":")
        sig = getattr(signal, "SIG" + name)

        def send():
            time.sleep(float(after))
            if proc.poll() is None:
                proc.send_signal(sig)

        threading.Thread(target=send, daemon=True).start()

    try:
        code = proc.wait(timeout=args.seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        print(f"bounded: {' '.join(cmd)} ran longer than {args.seconds} s",
              file=sys.stderr)
        return 124
    elapsed = time.monotonic() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    if peak_mb > args.rss_mb:
        print(f"bounded: {' '.join(cmd)} used {peak_mb:.0f} MiB, more than "
              f"{args.rss_mb:.0f} MiB", file=sys.stderr)
        return 125
    if os.environ.get("PPS_BOUNDED_VERBOSE"):
        print(f"bounded: {elapsed:.2f} s, {peak_mb:.0f} MiB", file=sys.stderr)
    code = 128 - code if code < 0 else code
    if args.exit is None:
        return code
    if code != args.exit:
        print(f"bounded: {' '.join(cmd)} exited with {code}, expected "
              f"{args.exit}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
