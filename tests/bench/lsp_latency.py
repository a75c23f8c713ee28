#!/usr/bin/env python3
"""Latency of `ppsc lsp`: didChange -> publishDiagnostics, and how fast the
server answers requests while a big schedule is being checked.

  /usr/bin/python3 tests/bench/lsp_latency.py build/bin/ppsc [--rounds N]

Cases: a small file (examples/one_f_one_b.pps), the largest stdlib
schedules at P=64, M=1024 (zb_v: 909,312 actions after lowering; v_min,
the slowest to evaluate), and a lowered file of ~100k explicit actions.
Each edit appends a comment (a full-text didChange); the time is from
sending it to receiving the diagnostics of that version, with the default
debounce and with --debounce-ms=0 (the check alone). While a big case is
being checked, completion and hover requests are sent and timed: they are
answered from the last finished analysis, not after the check.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "tests", "lit", "lsp", "Inputs"))
from lspclient import Client, file_uri  # noqa: E402


def cases(ppsc):
    small = open(os.path.join(root, "examples", "one_f_one_b.pps")).read()
    yield "small file (examples/one_f_one_b.pps)", small
    yield ("zb_v, P=64, M=1024 (909,312 actions)",
           "pipeline big {\n  ranks 64;\n  stages 2 * P placement v;\n"
           "  microbatches 1024;\n  schedule zb_v();\n}\n")
    yield ("v_min, P=64, M=1024 (909,312 actions)",
           "pipeline big {\n  ranks 64;\n  stages 2 * P placement v;\n"
           "  microbatches 1024;\n  schedule v_min();\n}\n")
    # A lowered file of ~100k actions, every one spelled out in rank lists.
    with tempfile.NamedTemporaryFile("w", suffix=".pps", delete=False) as f:
        f.write("pipeline l { ranks 8; microbatches 2272; "
                "schedule one_f_one_b(); }\n")
    lowered = subprocess.run([ppsc, "emit", "--target=pps", f.name],
                             check=True, capture_output=True,
                             text=True).stdout
    with open(f.name, "w") as g:
        g.write(lowered)
    lint = subprocess.run([ppsc, "lint", f.name], capture_output=True,
                          text=True).stderr
    os.unlink(f.name)
    actions = re.search(r"(\d+) actions", lint).group(1)
    yield ("lowered file of %s explicit actions (%d bytes)" %
           (actions, len(lowered)), lowered)


def measure(ppsc, text, debounce, rounds):
    args = [] if debounce is None else ["--debounce-ms=%d" % debounce]
    c = Client(ppsc, *args, stdlib=os.path.join(root, "stdlib"))
    c.initialize()
    uri = file_uri(os.path.join(tempfile.gettempdir(), "bench.pps"))
    t0 = time.perf_counter()
    c.open(uri, text, 1)
    d = c.diagnostics(uri, 1, timeout=300)
    first = time.perf_counter() - t0
    assert all(x["severity"] > 1 for x in d["diagnostics"]), d
    times, answers = [], []
    for v in range(2, rounds + 2):
        t0 = time.perf_counter()
        c.change(uri, v, text + "// edit %d\n" % v)
        # While it is being checked: a completion and a hover, timed.
        for method in ["textDocument/completion", "textDocument/hover"]:
            r0 = time.perf_counter()
            c.position_request(method, uri, 1, 3)
            answers.append(time.perf_counter() - r0)
        c.diagnostics(uri, v, timeout=300)
        times.append(time.perf_counter() - t0)
    c.shutdown_and_exit()
    return first, times, answers


def ms(x):
    return "%.1f ms" % (1000 * x)


def main():
    ppsc = sys.argv[1]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) \
        if "--rounds" in sys.argv else 5
    for name, text in cases(ppsc):
        print(name)
        for debounce in [None, 0]:
            first, times, answers = measure(ppsc, text, debounce, rounds)
            print("  debounce %-13s didOpen->diagnostics %s; "
                  "didChange->diagnostics median %s, max %s; requests "
                  "during the check answered in max %s" %
                  ("default (150)" if debounce is None else "0", ms(first),
                   ms(statistics.median(times)), ms(max(times)),
                   ms(max(answers))))


if __name__ == "__main__":
    main()
