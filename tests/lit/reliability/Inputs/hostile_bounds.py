#!/usr/bin/env python3
"""Runs every hostile reproduction of the reliability findings, under bounds.

  hostile_bounds.py --ppsc PPSC --source SRC [--exec-dir DIR]
                    [--seconds S] [--rss-mb M] [--work DIR]

Each case is one command line from the findings (docs/reliability.md): a
tiny file declaring huge sizes, a huge cost, an endless stream, -o naming
the input, a full disk, terminal escapes, a bad executor option, a kernel
that never returns, ... It runs under /usr/bin/time, which measures its
wall time and peak resident memory, and passes if

  * it ends with the expected exit code (1 with a located error, 2 for a
    usage error, 3 for an executor's stall report, or 0 where the command
    is meant to run correctly),
  * its output has the expected located error (file:line:col: error: or,
    for a file that cannot be read or written, `ppsc CMD: error: ... 'FILE'`,
    always with its [kind]),
  * it took less than S seconds (default 5) and at most M MiB (default
    1024) of resident memory,
  * and the case's own check holds (the input file is unchanged, no control
    byte reached the terminal, ...).

A case still running after 60 s is killed. One line is printed per case
(seconds, peak MiB, exit code, verdict); the exit code is 1 if any case
failed. Executor cases need --exec-dir (the directory of the generated
test executors, build/tests/exec); without it they are listed as skipped.
The MPI partition case needs two hosts and root: it is the ctest test
exec.mpi.two_hosts (tests/exec/two_hosts.sh).
"""
import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading

HARD_LIMIT = 60.0
# ESC, BEL and the other C0 controls but tab and newline; DEL; C1 controls
# as UTF-8 (C2 80..C2 9F); the bidirectional overrides (U+202A..U+202E).
RAW_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|"
                         rb"\xe2\x80[\xaa-\xae]")
ESC = b"\x1b"
ATTACK = (ESC + b"[2J" + ESC + b"]0;pwned\x07all checks passed " +
          "\u009b".encode() + b"31m")

FILES = {
    # Finding 1: three lines declaring 65536 ranks and 2^24 microbatches.
    "huge_sizes.pps":
        b"pipeline p { ranks 65536; microbatches 16777216; rank 0: F0; }\n",
    "huge_sizes_64.pps":
        b"pipeline p { ranks 64; microbatches 16777216; rank 0: F0; }\n",
    "huge_sizes_8.pps":
        b"pipeline p { ranks 8; microbatches 16777216; rank 0: F0; }\n",
    # ... and a 23-byte PyTorch CSV naming microbatch 16777215.
    "huge_microbatch.csv": b"0F16777215,1F0,2F0,3F0\n",
    # Finding 2: costs past 2^31 (synth's exact search), and 1e300.
    "cost_3e9.pps": b"pipeline s { ranks 2; microbatches 4; "
                    b"cost { F = 3e9; I = 1; W = 1; } "
                    b"schedule synth(memory: 2); }\n",
    "cost_1e300.pps": b"pipeline s { ranks 2; microbatches 4; "
                      b"cost { F = 1e300; B = 1e300; } "
                      b"schedule one_f_one_b(); }\n",
    # Finding 3: under the action cap before send/recv insertion.
    "comms_cap.pps": b"pipeline p { ranks 65536; microbatches 256; "
                     b"schedule one_f_one_b(); }\n",
    # Findings 8-10: a valid file to emit.
    "in.pps": b"pipeline h { ranks 2; microbatches 2; "
              b"rank 0: F0 F1 B0 B1; rank 1: F0 B0 F1 B1; }\n",
    # Finding 11: an error on a line that carries terminal escapes.
    "escapes.pps": b"pipeline p { ranks 2; microbatches 2; "
                   b"rank 0: F0 F7 B0; rank 1: F0 B0; } // " + ATTACK + b"\n",
    "escapes.csv": b"0,F0" + ATTACK + b"\n1,F0\n",
    # Finding 12: an import that climbs out of the tree.
    "climb.pps": b"import \"../../../../../../../../etc/passwd\";\n"
                 b"pipeline p { ranks 1; microbatches 1; rank 0: F0 B0; }\n",
}


class Case:
    def __init__(self, name, finding, argv, exit, match, feed=None,
                 stdout=None, check=None, executor=False):
        self.name, self.finding, self.argv = name, finding, argv
        self.exit, self.match, self.feed = exit, match, feed
        self.stdout, self.check, self.executor = stdout, check, executor


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cases(ppsc, src, exe):
    dual = os.path.join(src, "tests", "exec", "schedules", "dualpipe.pps")
    located = r"^{}:\d+:\d+: error: .*\[{}\]$"
    in_sum = digest("in.pps")

    def unchanged(path, want):
        return lambda out: (digest(path) == want,
                            f"{path} changed" if digest(path) != want else "")

    def no_controls(out):
        bad = RAW_CONTROL.search(out)
        return (bad is None, f"raw control byte {bad.group()!r} printed"
                if bad else "")

    c = [
        Case("huge sizes: check", 1, [ppsc, "check", "huge_sizes.pps"], 0,
             r"^huge_sizes.pps: checked: pipeline 'p', 65536 ranks"),
        Case("huge sizes: lint", 1, [ppsc, "lint", "huge_sizes.pps"], 1,
             located.format("huge_sizes.pps", "missing-action")),
        Case("huge sizes: sim", 1, [ppsc, "sim", "huge_sizes.pps"], 1,
             located.format("huge_sizes.pps", "missing-action")),
        Case("huge sizes: emit cpp", 1,
             [ppsc, "emit", "--target=cpp", "huge_sizes.pps", "-o", "x.cpp"],
             1, located.format("huge_sizes.pps", "missing-action")),
        Case("huge sizes, 64 ranks: lint", 1,
             [ppsc, "lint", "--error-limit=0", "huge_sizes_64.pps"], 1,
             located.format("huge_sizes_64.pps", "missing-action")),
        Case("huge sizes, 8 ranks: lint", 1,
             [ppsc, "lint", "huge_sizes_8.pps"], 1,
             located.format("huge_sizes_8.pps", "missing-action")),
        Case("23-byte csv: lint", 1, [ppsc, "lint", "huge_microbatch.csv"],
             1, located.format("huge_microbatch.csv", "missing-action")),
        Case("23-byte csv: sim", 1, [ppsc, "sim", "huge_microbatch.csv"],
             1, located.format("huge_microbatch.csv", "missing-action")),
        Case("cost 3e9: synth", 2, [ppsc, "synth", "cost_3e9.pps"], 1,
             located.format("cost_3e9.pps", "out-of-range")),
        Case("cost 3e9: synth flags", 2,
             [ppsc, "synth", "--ranks", "2", "--microbatches", "4",
              "--placement", "loop", "--cost", "F=3e9,B=1,W=1",
              "--memory-limit", "2"], 2,
             r"^ppsc synth: error: --cost: .*\[usage\]$"),
        Case("cost 1e300: sim", 2, [ppsc, "sim", "cost_1e300.pps"], 1,
             located.format("cost_1e300.pps", "out-of-range")),
        Case("cost 1e300: lint", 2, [ppsc, "lint", "cost_1e300.pps"], 1,
             located.format("cost_1e300.pps", "out-of-range")),
        Case("comms past the cap: sim", 3, [ppsc, "sim", "comms_cap.pps"], 1,
             located.format(r"\S+", "limit-exceeded")),
        Case("comms past the cap: emit cpp", 3,
             [ppsc, "emit", "--target=cpp", "comms_cap.pps", "-o", "x.cpp"],
             1, located.format(r"\S+", "limit-exceeded")),
        Case("/dev/zero: check", 4, [ppsc, "check", "/dev/zero"], 1,
             r"^ppsc check: error: cannot read '/dev/zero': .*\[file-error\]$"),
        Case("endless stdin: check -", 4, [ppsc, "check", "-"], 1,
             r"^ppsc check: error: cannot read '-': .*\[file-error\]$",
             feed=b"let\n"),
        Case("-o is the input", 8,
             [ppsc, "emit", "--target=pps", "in.pps", "-o", "in.pps"], 1,
             r"^ppsc emit: error: refusing to write 'in.pps'.*\[file-error\]$",
             check=unchanged("in.pps", in_sum)),
        Case("-o ././input", 8,
             [ppsc, "emit", "--target=pps", "in.pps", "-o", "././in.pps"], 1,
             r"error: refusing to write '\./\./in.pps'.*\[file-error\]$",
             check=unchanged("in.pps", in_sum)),
        Case("-o a symlink to the input", 8,
             [ppsc, "emit", "--target=pps", "in.pps", "-o", "link.pps"], 1,
             r"error: refusing to write 'link.pps'.*\[file-error\]$",
             check=unchanged("in.pps", in_sum)),
        Case("failing emit keeps -o", 9,
             [ppsc, "emit", "--target=torch", dual, "-o", "keep.txt"], 1,
             r"^\S+dualpipe.pps:\d+:\d+: error: the torch target cannot",
             check=unchanged("keep.txt", digest("keep.txt"))),
        Case("-o /dev/full", 10,
             [ppsc, "emit", "--target=pps", "in.pps", "-o", "/dev/full"], 1,
             r"^ppsc emit: error: cannot write '/dev/full': .*\[file-error\]$"),
        Case("stdout on /dev/full", 10,
             [ppsc, "emit", "--target=cpp", "in.pps"], 1,
             r"^ppsc emit: error: cannot write standard output: "
             r".*\[file-error\]$", stdout="/dev/full"),
        Case("escapes in a source line", 11, [ppsc, "lint", "escapes.pps"], 1,
             located.format("escapes.pps", "out-of-range"), check=no_controls),
        Case("escapes in json", 11,
             [ppsc, "lint", "--diagnostics-format=json", "escapes.pps"], 1,
             r'"kind": "out-of-range"', check=no_controls),
        Case("escapes in a csv cell", 11, [ppsc, "lint", "escapes.csv"], 1,
             located.format("escapes.csv", r"[\w-]+"), check=no_controls),
        Case("--ranks=-5", 12, [ppsc, "check", "--ranks=-5", "in.pps"], 2,
             r"^ppsc check: error: --ranks must be at least 1, got -5 "
             r"\[usage\]$"),
        Case("missing file", 12, [ppsc, "check", "nothere.pps"], 1,
             r"^ppsc check: error: cannot read 'nothere.pps': "
             r".*\[file-error\]$"),
        Case("import ../../etc/passwd, --import-root", 12,
             [ppsc, "check", "--import-root=.", "climb.pps"], 1,
             located.format("climb.pps", "import-outside-root"),
             check=lambda out: (b"root:" not in out, "passwd was echoed")),
    ]
    if exe:
        one = os.path.join(exe, "exec_one_f_one_b")
        hung = os.path.join(exe, "exec_hung")
        c += [
            Case("executor --steps=1e20", 7, [one, "--steps=1e20"], 2,
                 r"^error: bad value '1e20' for --steps", executor=True),
            Case("executor --time-scale=nan", 7, [one, "--time-scale=nan"], 2,
                 r"^error: bad value 'nan' for --time-scale", executor=True),
            Case("executor --trace=/dev/full", 7,
                 [one, "--time-scale=0.01", "--trace=/dev/full"], 1,
                 r"(?s)measured makespan: .*error: cannot write '/dev/full'",
                 executor=True),
            Case("kernel never returns (threads)", 6,
                 [hung, "--time-scale=0.05", "--watchdog=1"], 3,
                 r"rank 2 has been running `F3@2` for [0-9.]+ s, past the "
                 r"kernel timeout", executor=True),
        ]
    return c


def run(case, seconds, rss_mb):
    """Returns (ok, seconds, peak MiB, exit code, why)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        argv = ["/usr/bin/time", "-q", "-f", "%e %M", "-o", tf.name]
        argv += case.argv
        out = open(case.stdout, "wb") if case.stdout else subprocess.PIPE
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.PIPE if case.stdout else
            subprocess.STDOUT,
            stdin=subprocess.PIPE if case.feed else subprocess.DEVNULL)
        if case.feed:
            # A stream that never ends, like `yes let | ppsc check -` (not
            # communicate(), which would close it at once).
            def feed():
                chunk = case.feed * 16384
                try:
                    while proc.poll() is None:
                        proc.stdin.write(chunk)
                except (BrokenPipeError, OSError, ValueError):
                    pass
            threading.Thread(target=feed, daemon=True).start()
        pipe = proc.stderr if case.stdout else proc.stdout
        chunks = []
        reader = threading.Thread(target=lambda: chunks.append(pipe.read()),
                                  daemon=True)
        reader.start()
        try:
            proc.wait(timeout=HARD_LIMIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return False, HARD_LIMIT, 0.0, None, "killed after 60 s"
        finally:
            if case.stdout:
                out.close()
        reader.join()
        text = b"".join(chunks)
        fields = tf.read().split()
    code = proc.returncode
    try:
        elapsed, peak = float(fields[-2]), int(fields[-1]) / 1024.0
    except (IndexError, ValueError):
        return False, 0.0, 0.0, code, "no /usr/bin/time figures"
    why = []
    if code != case.exit:
        why.append(f"exit {code}, expected {case.exit}")
    if not re.search(case.match.encode(), text, re.M):
        why.append(f"no line matching {case.match!r}")
    if re.search(rb"LLVM ERROR|Segmentation|terminate called|"
                 rb"AddressSanitizer|runtime error:|<unknown>:", text):
        why.append("crash, sanitizer report or unlocated error")
    if elapsed >= seconds:
        why.append(f"took {elapsed:.2f} s, limit {seconds:g} s")
    if peak > rss_mb:
        why.append(f"used {peak:.0f} MiB, limit {rss_mb:g} MiB")
    if case.check:
        ok, msg = case.check(text)
        if not ok:
            why.append(msg)
    if why:
        sys.stdout.buffer.write(b"    output: " +
                                text[:2000].replace(b"\n", b"\n    ") + b"\n")
    return not why, elapsed, peak, code, "; ".join(why)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ppsc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--exec-dir")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rss-mb", type=float, default=1024.0)
    ap.add_argument("--work")
    args = ap.parse_args()
    if not os.access("/usr/bin/time", os.X_OK):
        print("hostile_bounds: /usr/bin/time is missing (Debian package "
              "`time`)", file=sys.stderr)
        return 2
    ppsc = os.path.abspath(args.ppsc)
    source = os.path.abspath(args.source)
    exe = os.path.abspath(args.exec_dir) if args.exec_dir else None
    work = args.work or tempfile.mkdtemp(prefix="pps-hostile-")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    for name, data in FILES.items():
        with open(name, "wb") as f:
            f.write(data)
    for name, data in (("keep.txt", b"keep\n"),):
        with open(name, "wb") as f:
            f.write(data)
    if os.path.lexists("link.pps"):
        os.remove("link.pps")
    os.symlink("in.pps", "link.pps")
    if exe and not os.path.exists(os.path.join(exe, "exec_hung")):
        exe = None
    failed = 0
    print(f"{'case':<40} {'finding':>7} {'exit':>4} {'seconds':>7} "
          f"{'peak MiB':>8}  verdict")
    for case in cases(ppsc, source, exe):
        ok, elapsed, peak, code, why = run(case, args.seconds, args.rss_mb)
        failed += not ok
        print(f"{case.name:<40} {case.finding:>7} {str(code):>4} "
              f"{elapsed:>7.2f} {peak:>8.0f}  {'ok' if ok else 'FAIL: ' + why}",
              flush=True)
    if not exe:
        print("executor cases (findings 6, 7) skipped: no --exec-dir with "
              "the test executors")
    print("finding 5 (network partition) is the ctest test "
          "exec.mpi.two_hosts (root)")
    print(f"hostile_bounds: {failed} failed, limits {args.seconds:g} s and "
          f"{args.rss_mb:g} MiB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
