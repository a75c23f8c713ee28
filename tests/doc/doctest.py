#!/usr/bin/env python3
"""doctest.py - runs every command shown in README.md and docs/*.md.

  doctest.py --source SRC --build BUILD [FILE.md ...]

A fenced block tagged `sh` is a script: it runs with bash -e. A block tagged
`console` is a transcript: each line starting with `$ ` is a command (a
trailing backslash continues it), the lines after it are what it prints;
every such line must appear in the output, in order (`...` on a line of its
own skips any lines; inside a line it matches any text). An untagged block
whose lines look like commands is an error: tag it (`text` for a synopsis or
output that is not run), or say why it is not run. HTML comments right before a block steer it:

  <!-- doctest: skip REASON -->     not run (needs MPI, the network, root...)
  <!-- doctest: exit N -->          the block's last command exits with N
  <!-- doctest: setup COMMANDS -->  run first, unseen by readers; exit 77
                                    skips the block (a tool is missing)
  <!-- doctest: output varies REASON -->  console output not compared
  <!-- doctest: file NAME -->       not run: the block is the file NAME
                                    that later blocks of the document use

Blocks run in a fresh directory holding a copy of the source tree's
folders (examples, stdlib, tests, ...), `build` linked to the build tree,
an empty docs/img to write into, HOME pointing into it, BUILD/bin first
on PATH and the build's pps module on PYTHONPATH, so commands run as a reader at the top of a checkout would type
them and cannot touch the checkout. A block that would change the machine
or the build (installing, configuring or building, package managers,
sudo) is refused unless it is marked skip. Exit 0 when every block passes;
skipped blocks are listed with their reasons.
"""

import argparse
import atexit
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

COPIED = ["examples", "stdlib", "tests", "python", "runtime", "compiler",
          "grammar", "editors", "README.md"]
# What a block must not do unless it is marked skip: it would change the
# machine, the user's home or the build tree.
UNSAFE = re.compile(r"\b(apt-get|apt|dpkg|sudo|pip3?\s+install|-m\s+pip|npm\s+(install|ci)|"
                    r"venv|cmake\s+(--install|--build|-S|-B)|cpack|ln\s+-s|make\s+install)\b"
                    r"|\bcd\s+build\b|~/|\$HOME")
COMMANDISH = re.compile(r"^\s*(\$ |ppsc |\./|tests/|build[-\w]*/|cmake |mpirun |python3 )")
DIRECTIVE = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")


class Block:
    def __init__(self, path, line, lang, body, directives):
        self.path, self.line, self.lang, self.body = path, line, lang, body
        self.skip = self.exit = self.setup = self.varies = self.file = None
        for d in directives:
            key, _, rest = d.partition(" ")
            if key == "skip":
                self.skip = rest or "no reason given"
            elif key == "exit":
                self.exit = int(rest)
            elif key == "setup":
                self.setup = rest
            elif key == "file" and rest:
                self.file = rest
            elif key == "output" and rest.startswith("varies"):
                self.varies = rest[len("varies"):].strip() or "varies"
            else:
                raise ValueError("%s:%d: unknown doctest directive '%s'" % (path, line, d))

    def where(self):
        return "%s:%d" % (self.path, self.line)


def blocks_of(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        # Directives: the HTML comment lines just before the fence.
        directives, k = [], i - 1
        while k >= 0 and lines[k].strip().startswith("<!--"):
            d = DIRECTIVE.match(lines[k].strip())
            if d:
                directives.insert(0, d.group(1))
            k -= 1
        j = i + 1
        body = []
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        out.append(Block(rel, i + 1, lang, body, directives))
        i = j + 1
    return out


def workdir(src, build):
    d = tempfile.mkdtemp(prefix="pps-doctest-")
    for name in COPIED:
        p = os.path.join(src, name)
        if os.path.isdir(p):
            shutil.copytree(p, os.path.join(d, name), symlinks=True,
                            ignore=shutil.ignore_patterns("node_modules", "__pycache__", "build"))
        elif os.path.exists(p):
            shutil.copy(p, os.path.join(d, name))
    os.symlink(build, os.path.join(d, "build"))
    os.makedirs(os.path.join(d, "docs", "img"))
    os.makedirs(os.path.join(d, "home"))
    return d


# Seconds a block may run, times the build's PPS_SUITE_TIME_SCALE (set by
# CMake: 5 in a sanitized build, where instrumented code runs slower).
BLOCK_TIMEOUT = 300 * int(os.environ.get("PPS_SUITE_TIME_SCALE", "1"))


def run(cmd, cwd, env):
    env = dict(env, HOME=os.path.join(cwd, "home"))
    # Its own session, so that a block that runs out of time is ended with
    # everything it started (torchrun's workers, mpirun's ranks).
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise subprocess.TimeoutExpired(cmd, BLOCK_TIMEOUT, output=out)
    return p.returncode, out.decode("utf-8", "replace")


def matches(expected, actual):
    """Every expected line, in order, equals an actual line ('...' lines
    skip, '...' inside a line matches anything). Returns the first expected
    line not found, or None."""
    out = [l.rstrip() for l in actual.split("\n")]
    pos = 0
    for e in expected:
        e = e.rstrip()
        if e.strip() in ("", "..."):
            continue
        rx = re.compile("^" + ".*".join(re.escape(p) for p in e.split("...")) + "$")
        while pos < len(out) and not rx.match(out[pos]):
            pos += 1
        if pos == len(out):
            return e
        pos += 1
    return None


def check_block(b, src, build, env, files):
    """Returns None if the block passes, else why not. `files` maps names
    to the text of the document's earlier `file` blocks."""
    cwd = workdir(src, build)
    for name, text in files.items():
        with open(os.path.join(cwd, name), "w", encoding="utf-8") as f:
            f.write(text)
    try:
        if b.setup:
            rc, text = run(b.setup, cwd, env)
            if rc == 77:
                return "SKIP " + (text.strip() or "its setup says so")
            if rc != 0:
                return "setup failed (%d): %s" % (rc, text[-1500:])
        if b.lang == "sh":
            rc, text = run("set -e\n" + "\n".join(b.body), cwd, env)
            want = b.exit or 0
            if rc != want:
                return "exit %d, expected %d:\n%s" % (rc, want, text[-3000:])
            return None
        # console: commands and their output.
        cmds, i = [], 0
        while i < len(b.body):
            line = b.body[i]
            if line.startswith("$ "):
                cmd = line[2:]
                while cmd.endswith("\\") and i + 1 < len(b.body):
                    i += 1
                    cmd += "\n" + b.body[i]
                cmds.append((cmd, []))
            elif cmds:
                cmds[-1][1].append(line)
            i += 1
        if not cmds:
            return "a console block without a `$ ` command"
        for n, (cmd, expected) in enumerate(cmds):
            rc, text = run(cmd, cwd, env)
            want = b.exit if (b.exit is not None and n == len(cmds) - 1) else 0
            if rc != want:
                return "`%s` exited %d, expected %d:\n%s" % (cmd, rc, want, text[-3000:])
            if b.varies is None:
                missing = matches(expected, text)
                if missing is not None:
                    return "`%s` did not print\n    %s\n  it printed:\n%s" % (cmd, missing, text[-3000:])
        return None
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--sanitized", metavar="PRELOAD",
                    help="the build is sanitized (.ci/sanitize): what the "
                         "uninstrumented interpreter that imports the module "
                         "must preload (ASan's runtime, then libstdc++; "
                         "leak checking off for it, as in the pytest test), "
                         "and compile with the sanitizers (`c++` links "
                         "archives that call them)")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    src, build = os.path.abspath(args.source), os.path.abspath(args.build)
    files = args.files or (["README.md"] + sorted(
        os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs", "*.md"))))
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
    # The reader has the pps module on the path (one of docs/python.md's
    # ways of getting it): the build's.
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(build, "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("NO_COLOR", None)
    env["NO_COLOR"] = "1"
    if args.sanitized:
        # Shims: `c++` and `g++` link the sanitizers; the interpreter (not
        # instrumented) gets the preload, and only it, so that other
        # programs the docs run (Chromium) start as usual.
        shims = tempfile.mkdtemp(prefix="pps-doctest-shims-")
        atexit.register(shutil.rmtree, shims, True)
        asan = ":".join([p for p in [env.get("ASAN_OPTIONS")] if p] + ["detect_leaks=0"])
        preloaded = ('LD_PRELOAD="%s${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS="%s" exec '
                     % (args.sanitized, asan)).replace("%", "%%")

        def shim(name, line):
            real = shutil.which(name, path=env["PATH"])
            if real:
                path = os.path.join(shims, name)
                with open(path, "w") as f:
                    f.write("#!/bin/sh\n" + line % real + "\n")
                os.chmod(path, 0o755)

        for name in ("c++", "g++"):
            shim(name, 'exec %s -fsanitize=address,undefined "$@"')
        for name in ("python3", "python"):
            shim(name, preloaded + '%s "$@"')
        # torchrun runs under its own interpreter (its #! line: Debian's
        # torch is for /usr/bin/python3), and its workers are that
        # interpreter again: they inherit the preload from its environment.
        torchrun = shutil.which("torchrun", path=env["PATH"])
        if torchrun:
            with open(torchrun, "rb") as f:
                first = f.readline().decode("utf-8", "replace")
            interp = first[2:].strip() if first.startswith("#!") else "python3"
            shim("torchrun", preloaded + interp.replace("%", "%%") + ' %s "$@"')
        env["PATH"] = shims + os.pathsep + env["PATH"]
    ran = skipped = 0
    failures = []
    for rel in files:
        try:
            blocks = blocks_of(os.path.join(src, rel), rel)
        except ValueError as e:
            failures.append(str(e))
            continue
        files = {}
        for b in blocks:
            if b.file:
                files[b.file] = "\n".join(b.body) + "\n"
                continue
            if b.lang not in ("sh", "console"):
                looks = [l for l in b.body if COMMANDISH.match(l)]
                if looks and b.lang == "" and not b.skip:
                    failures.append("%s: an untagged block with commands (`%s`): tag it "
                                    "```sh or ```console, or add <!-- doctest: skip REASON -->"
                                    % (b.where(), looks[0].strip()))
                continue
            if b.skip:
                skipped += 1
                print("skip  %s: %s" % (b.where(), b.skip))
                continue
            unsafe = [l for l in b.body + [b.setup or ""] if UNSAFE.search(l)]
            if unsafe:
                failures.append("%s: `%s` would change the machine or the build: mark the "
                                "block <!-- doctest: skip REASON -->" % (b.where(), unsafe[0].strip()))
                continue
            ran += 1
            try:
                why = check_block(b, src, build, env, files)
            except subprocess.TimeoutExpired as e:
                why = "timed out after %d s; it printed:\n%s" % (
                    e.timeout, (e.output or b"").decode("utf-8", "replace")[-3000:])
            if why is not None and why.startswith("SKIP "):
                ran -= 1
                skipped += 1
                print("skip  %s: %s" % (b.where(), why[5:]))
                continue
            print(("ok    " if why is None else "FAIL  ") + b.where())
            if why is not None:
                failures.append("%s: %s" % (b.where(), why))
    print("%d blocks run, %d skipped" % (ran, skipped))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
