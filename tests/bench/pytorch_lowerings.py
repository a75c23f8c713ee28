#!/usr/bin/env python3
"""PyTorch's own lowering of every stdlib schedule, timed as NCCL runs it,
before and after `ppsc lint --fix`.

For each stdlib schedule at a few sizes: export the compute order
(`emit --target=torch`), lower it as PyTorch's _add_send_recv does
(`--comm-placement=pytorch`), then with the pipeline's costs (`--costs`:
F 1, B 2, I 1, W 1, a message 0.1) and under `--comm-model=nccl` (one in-order
stream per rank, sends of up to 64 KiB eager, message sizes 16 MiB so every
send rendezvous) report whether that lowering hangs, its makespan, and the
makespan after `lint --fix` (which must never be slower and never hang: the
script fails if it is). The abstract model's makespan of the same lowering
is shown for comparison, and whether the receive deferral proposed for
PyTorch #172668 (PR #178815: each receive just before its consumer, the
lower rank of a pair flushing its deferred receives before sending to it)
hangs or mismatches under rendezvous.

    tests/bench/pytorch_lowerings.py [BUILD_DIR]        # table + summary
    tests/bench/pytorch_lowerings.py BUILD_DIR --quick  # fewer sizes (ctest)
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
PPSC = os.path.join(BUILD, "bin", "ppsc")

# DualPipe's two directions cannot be written as a PyTorch CSV.
PLACEMENT = {
    "gpipe": "stages P", "one_f_one_b": "stages P", "zb_h1": "stages P",
    "zb_h2": "stages P", "interleaved_1f1b": "stages 2 * P",
    "interleaved_1f1b_overlap": "stages 2 * P", "looped_bfs": "stages 2 * P",
    "zb_v": "stages 2 * P placement v", "v_half": "stages 2 * P placement v",
    "v_min": "stages 2 * P placement v",
    "dualpipe_v": "stages 2 * P placement v",
}
SIZES = [(4, 8), (8, 16)] if QUICK else [(2, 4), (4, 8), (4, 16), (8, 16), (8, 32)]
COSTS = ("cost { F = 1; B = 2; I = 1; W = 1; overlap = 2.5; } "
         "comm { latency 0.1; activation 16 MiB; }")


def ppsc(*args, ok=(0,)):
    r = subprocess.run([PPSC, *args], capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1"))
    if r.returncode not in ok:
        raise RuntimeError("ppsc %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


def makespan(path, model, costs):
    r = ppsc("sim", "--format=json", "--comm-model=" + model, "--costs=" + costs,
             path, ok=(0, 1))
    if r.returncode != 0:
        return None  # refused: deadlock or another error
    d = json.loads(r.stdout)
    return None if d["deadlocked"] else d["makespan"]


def defer_receives(rows):
    """The fix proposed for PyTorch #172668 (PR #178815): each RECV moved to
    just before the compute that consumes it, and, for rank-parity deadlock
    avoidance, the lower-ranked side of a pair flushing its deferred RECVs
    from that peer before each SEND to it. rows: one list of cells per rank
    (PyTorch's CSV spelling). Written from the PR's description."""
    def parse(cell):
        i = 0
        while cell[i].isdigit():
            i += 1
        j = len(cell)
        while j > i and cell[j - 1].isdigit():
            j -= 1
        return int(cell[:i]), cell[i:j], cell[j:]
    rank_of = {}
    for r, row in enumerate(rows):
        for c in row:
            if not c.startswith("("):
                st, kind, _ = parse(c)
                if kind in ("F", "B", "I", "W"):
                    rank_of[st] = r
    out = []
    for r, row in enumerate(rows):
        deferred, new = [], []
        def peer_of(st, kind):
            return rank_of.get(st - 1 if kind in ("RECV_F", "SEND_B") else st + 1)
        for c in row:
            if c.startswith("("):
                new.append(c)
                continue
            st, kind, mb = parse(c)
            if kind in ("RECV_F", "RECV_B"):
                deferred.append(c)
                continue
            if kind in ("F", "B", "I"):
                want = "%dRECV_%s%s" % (st, "F" if kind == "F" else "B", mb)
                if want in deferred:
                    deferred.remove(want)
                    new.append(want)
            if kind in ("SEND_F", "SEND_B"):
                q = peer_of(st, kind)
                if q is not None and r < q:
                    for d in list(deferred):
                        dst, dkind, _ = parse(d)
                        if peer_of(dst, dkind) == q:
                            deferred.remove(d)
                            new.append(d)
            new.append(c)
        out.append(new + deferred)
    return out


def main():
    rows, failures = [], []
    hangs = mismatches = deferred_hangs = deferred_mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, place in PLACEMENT.items():
            for p, m in SIZES:
                if name == "dualpipe_v" and m < 2 * p:
                    continue
                src = os.path.join(tmp, "%s_%d_%d.pps" % (name, p, m))
                with open(src, "w") as f:
                    f.write("pipeline %s { ranks %d; %s; microbatches %d; %s schedule %s(); }\n"
                            % (name, p, place, m, COSTS, name))
                comp = src[:-4] + ".compute.csv"
                pt = src[:-4] + ".pytorch.csv"
                fixed = src[:-4] + ".fixed.csv"
                ppsc("emit", "--target=torch", src, "-o", comp)
                r = ppsc("emit", "--target=torch", "--with-comms", "--no-verify",
                         "--comm-placement=pytorch", comp, ok=(0, 1))
                if r.returncode != 0:
                    rows.append((name, p, m, "lowering stops", "", "", ""))
                    continue
                with open(pt, "w") as f:
                    f.write("\n".join(l for l in r.stdout.splitlines() if not l.startswith("#")) + "\n")
                lint = ppsc("lint", "--comm-model=nccl", "--costs=" + src, pt, ok=(0, 1))
                hang = "[deadlock]" in lint.stderr
                mismatch = "[fifo-mismatch]" in lint.stderr
                hangs += hang
                mismatches += mismatch
                before = makespan(pt, "nccl", src)
                abstract = makespan(pt, "rendezvous", src)
                # The deferral proposed for #172668, on the same lowering.
                with open(pt) as f:
                    lowered = [l.split(",") for l in f.read().splitlines()]
                deferred = src[:-4] + ".deferred.csv"
                with open(deferred, "w") as f:
                    f.write("\n".join(",".join(row) for row in defer_receives(lowered)) + "\n")
                dl = ppsc("lint", "--costs=" + src, deferred, ok=(0, 1))
                d_hang = "[deadlock]" in dl.stderr or "[unmatched-" in dl.stderr
                d_mismatch = "[fifo-mismatch]" in dl.stderr
                deferred_hangs += d_hang
                deferred_mismatches += d_mismatch
                with open(pt) as f, open(fixed, "w") as g:
                    g.write(f.read())
                fix = ppsc("lint", "--fix", "--comm-model=nccl", "--costs=" + src,
                           fixed, ok=(0, 1))
                after = makespan(fixed, "nccl", src)
                if after is None:
                    failures.append("%s P=%d M=%d: the fixed order does not run:\n%s"
                                    % (name, p, m, fix.stderr))
                elif before is not None and after > before + 1e-9:
                    failures.append("%s P=%d M=%d: --fix made it slower (%s -> %s)"
                                    % (name, p, m, before, after))
                rows.append((name, p, m,
                             ("hangs" if hang else ("FIFO mismatch" if mismatch else "-"))
                             + " / " + ("hangs" if d_hang else ("mismatch" if d_mismatch else "ok")),
                             "-" if abstract is None else "%g" % abstract,
                             "-" if before is None else "%g" % before,
                             "-" if after is None else "%g" % after))
    print("%-26s %3s %3s  %-22s %10s %12s %12s" % (
        "schedule", "P", "M", "nccl / deferred+parity", "abstract", "pytorch", "--fix"))
    gains = []
    for name, p, m, verdict, abstract, before, after in rows:
        print("%-26s %3d %3d  %-22s %10s %12s %12s" % (name, p, m, verdict, abstract, before, after))
        if before not in ("", "-") and after not in ("", "-"):
            gains.append((float(before) - float(after)) / float(before))
    print("\n%d lowerings: %d hang under nccl, %d have a FIFO mismatch; with the "
          "receives deferred by rank parity (PyTorch PR #178815): %d hang under "
          "rendezvous, %d have a FIFO mismatch; --fix: never slower, %d of %d "
          "faster, mean gain %.1f%%, largest %.1f%%"
          % (len(rows), hangs, mismatches, deferred_hangs, deferred_mismatches,
             sum(g > 1e-9 for g in gains), len(gains),
             100 * sum(gains) / max(len(gains), 1), 100 * max(gains, default=0)))
    if failures:
        print("\n".join(["FAIL:"] + failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
