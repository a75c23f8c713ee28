#!/usr/bin/env python3
"""check_timeline.py - the pictures `ppsc sim` writes, checked as a browser
sees them.

  check_timeline.py --format html|svg|chrome --ppsc build/bin/ppsc --source .

html: each example's interactive timeline is loaded in headless Chromium
  (Debian `chromium`) with #selfcheck; the page exercises itself (wheel
  zoom, drag pan, fit, the + button, message arrows, the critical path,
  tooltips, legend) and writes the outcome into the DOM, which
  `chromium --dump-dom` returns. The test also requires: no JavaScript error
  (the page records them on <html data-js-errors>), one lane per rank, every
  compute that ran drawn (counted independently from `--format=csv`), a
  legend of exactly the kinds that ran, the summary tables, and for a
  deadlock the blocked marks, the cycle and the explanation.
svg: the SVG is well-formed XML, loads in Chromium as an SVG document, has
  a box with a tooltip for every compute that ran (from the CSV again), and
  a legend of only what occurs; for a deadlock the blocked marks.
chrome: the Chrome trace parses as JSON, has a complete event per action
  that ran, and every flow arrow starts and ends.

Chromium runs as the brief for this machine says: headless, no sandbox
(root), no GPU, QUIC, first-run, background networking, component updates
or sync, and a fresh profile, so that it never waits on the closed network.
Exit 77 (ctest's skip) with a message when chromium is not installed.
"""

import argparse
import csv
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77

# (example, expected exit code of ppsc sim)
CASES = [
    ("examples/interleaved_1f1b.pps", 0),
    ("examples/zb_v.pps", 0),
    ("examples/dualpipe.pps", 0),
    ("examples/demo.pps", 0),
    ("examples/deadlock.pps", 1),
    ("examples/blocking_1f1b.pps", 1),
]

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
]


def find_chromium():
    for name in [os.environ.get("CHROMIUM"), "chromium", "chromium-browser"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_ppsc(ppsc, src, fmt, out, expect):
    p = subprocess.run([ppsc, "sim", "--format=" + fmt, "-o", out, src],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != expect:
        raise AssertionError("ppsc sim --format=%s %s exited %d, expected %d:\n%s"
                             % (fmt, src, p.returncode, expect, p.stderr))
    return p.stderr


def ran_actions(ppsc, src, tmp):
    """The actions that ran, from the CSV: (rank, kind, name) per row with
    an end time."""
    out = os.path.join(tmp, "actions.csv")
    subprocess.run([ppsc, "sim", "--format=csv", "-o", out, src],
                   capture_output=True, text=True, timeout=120)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    return [r for r in rows if r["end"] != "" and r["kind"] != "idle"]


def dump_dom(chromium, url, tmp):
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    p = subprocess.run([chromium] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile,
                                                      "--window-size=1400,900",
                                                      "--dump-dom", url],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not p.stdout.strip():
        raise AssertionError("chromium --dump-dom %s failed (exit %d):\n%s"
                             % (url, p.returncode, p.stderr[-2000:]))
    return p.stdout


class Dom(html.parser.HTMLParser):
    """Collects elements (tag, attributes) and the text of one element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.selfcheck = None
        self._in_check = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if a.get("id") == "pps-selfcheck":
            self.selfcheck = {"status": a.get("data-status"), "text": ""}
            self._in_check = True

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_check = False

    def handle_data(self, data):
        if self._in_check:
            self.selfcheck["text"] += data

    def having(self, tag=None, cls=None, **attrs):
        out = []
        for t, a in self.elements:
            if tag and t != tag:
                continue
            if cls and cls not in (a.get("class") or "").split():
                continue
            if any(a.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(a)
        return out


def check(cond, what, failures):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def check_html(args, chromium, src, expect, tmp, failures):
    page = os.path.join(tmp, os.path.basename(src) + ".html")
    run_ppsc(args.ppsc, src, "html", page, expect)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    # One self-contained file: nothing fetched.
    check(not re.search(r'\b(src|href)\s*=\s*"(https?:)?//', text) and "@import" not in text,
          src + ": no external script, style or link", failures)
    dom_text = dump_dom(chromium, "file://" + page + "#selfcheck", tmp)
    dom = Dom()
    dom.feed(dom_text)
    html_el = dom.having("html")
    errors = html_el[0].get("data-js-errors") if html_el else "no <html>"
    check(not errors, src + ": no JavaScript errors" + (": " + errors if errors else ""), failures)
    sc = dom.selfcheck
    check(sc is not None and sc["status"] == "ok",
          src + ": the page's self-check passes" +
          ("" if sc is None or sc["status"] == "ok"
           else "\n      " + sc["text"].replace("\n", "\n      ")), failures)
    acts = ran_actions(args.ppsc, src, tmp)
    computes = [r for r in acts if r["kind"] in ("F", "I", "W", "B", "unshard", "reshard", "reduce_grad")]
    ranks = {int(r["rank"]) for r in ran_actions(args.ppsc, src, tmp)}
    data = json.loads(re.search(r'<script type="application/json" id="pps-data">(.*?)</script>',
                                text, re.S).group(1))
    check(len(dom.having("text", cls="rank-label")) == data["ranks"],
          src + ": one lane per rank (%d)" % data["ranks"], failures)
    check(len(dom.having("rect", cls="act")) == len(computes),
          src + ": a box per compute that ran (%d)" % len(computes), failures)
    legend = {a["data-kind"] for a in dom.having(cls="item") if "data-kind" in a}
    kinds = {r["kind"] for r in computes}
    check(legend == kinds, src + ": the legend lists exactly %s (has %s)"
          % (sorted(kinds), sorted(legend)), failures)
    check(len(dom.having("table", cls="sum")) >= 2, src + ": summary tables", failures)
    check(len(dom.having("g", cls="mem-row")) == data["ranks"],
          src + ": a memory curve per rank", failures)
    if expect == 1:
        check(len(dom.having(id="deadlock")) == 1, src + ": the deadlock explained", failures)
        blocked = dom.having("rect", cls="blocked")
        check(len(blocked) == len(data["blocked"]) > 0,
              src + ": every blocked rank marked (%d)" % len(data["blocked"]), failures)
        check(len(dom.having("path", cls="waitfor")) == len(data["cycle"]) > 0,
              src + ": the cycle drawn (%s)" % data["cycle"], failures)
        check(len([a for a in dom.having("text", cls="rank-label")
                   if "cycle" in a.get("class", "").split()]) == len(data["cycle"]),
              src + ": the ranks of the cycle highlighted", failures)
    else:
        check(not dom.having("rect", cls="blocked"), src + ": no blocked marks", failures)
        # Chunk or direction shading wherever a rank holds several stages.
        if data["shading"]:
            fills = {}
            for r in data["lanes"]:
                a = r["a"]
                for i in range(0, len(a), 9):
                    fills.setdefault((a[i], a[i + 7]), data["kinds"][a[i]]["c"][a[i + 7]])
            by_kind = {}
            for (k, ch), c in fills.items():
                by_kind.setdefault(k, set()).add(c)
            check(all(len(c) >= 2 for k, c in by_kind.items() if data["kinds"][k]["cls"] == "compute"),
                  src + ": the chunks (or directions) of each kind have shades of their own", failures)


def check_svg(args, chromium, src, expect, tmp, failures):
    pic = os.path.join(tmp, os.path.basename(src) + ".svg")
    run_ppsc(args.ppsc, src, "svg", pic, expect)
    try:
        root = ET.parse(pic).getroot()
        wellformed = root.tag.endswith("svg")
    except ET.ParseError as e:
        wellformed = False
        print("      " + str(e))
    check(wellformed, src + ": the SVG is well-formed XML", failures)
    acts = ran_actions(args.ppsc, src, tmp)
    computes = [r for r in acts if r["kind"] in ("F", "I", "W", "B", "unshard", "reshard", "reduce_grad")]
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text or "" for t in root.iter(ns + "title")]
    boxes = [t for t in titles if " on rank " in t and not t.startswith(("waiting", "send", "recv"))
             and not t.startswith("rank ")]
    check(len(boxes) == len(computes), src + ": a box with a tooltip per compute that ran (%d, found %d)"
          % (len(computes), len(boxes)), failures)
    long = [t for t in titles if re.search(r"\d\.\d{4,}", t)]
    check(not long, src + ": numbers rounded" + (": " + long[0] if long else ""), failures)
    texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
    words = {"F": "forward", "I": "input gradient", "W": "weight gradient", "B": "backward"}
    ran = {r["kind"] for r in computes}
    for k, w in words.items():
        check((k + " " + w in texts) == (k in ran),
              src + ": the legend %s %s" % ("lists" if k in ran else "omits", k + " " + w), failures)
    if expect == 1:
        check("DEADLOCK" in texts and "blocked at" in texts, src + ": the deadlock marked", failures)
    dom_text = dump_dom(chromium, "file://" + pic, tmp)
    check("<svg" in dom_text and dom_text.count("<rect") >= len(computes),
          src + ": Chromium loads the SVG document", failures)


def check_chrome(args, src, expect, tmp, failures):
    out = os.path.join(tmp, os.path.basename(src) + ".json")
    run_ppsc(args.ppsc, src, "chrome", out, expect)
    with open(out) as f:
        try:
            trace = json.load(f)
        except json.JSONDecodeError as e:
            check(False, src + ": the trace parses as JSON (%s)" % e, failures)
            return
    events = trace["traceEvents"]
    acts = ran_actions(args.ppsc, src, tmp)
    complete = [e for e in events if e.get("ph") == "X" and e.get("cat") != "wait"]
    check(len(complete) == len(acts), src + ": a complete event per action that ran (%d)" % len(acts), failures)
    check(all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in complete),
          src + ": times are numbers, durations >= 0", failures)
    starts = {e["id"] for e in events if e.get("ph") == "s"}
    ends = {e["id"] for e in events if e.get("ph") == "f"}
    check(starts == ends, src + ": every message arrow starts and ends (%d)" % len(starts), failures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", required=True, choices=["html", "svg", "chrome"])
    ap.add_argument("--ppsc", required=True)
    ap.add_argument("--source", required=True, help="the pps source tree")
    args = ap.parse_args()
    chromium = None
    if args.format != "chrome":
        chromium = find_chromium()
        if not chromium:
            print("skipped: chromium is not installed (apt-get install --no-install-recommends chromium)")
            return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="pps-render-") as tmp:
        for rel, expect in CASES:
            src = os.path.join(args.source, rel)
            try:
                if args.format == "html":
                    check_html(args, chromium, src, expect, tmp, failures)
                elif args.format == "svg":
                    check_svg(args, chromium, src, expect, tmp, failures)
                else:
                    check_chrome(args, src, expect, tmp, failures)
            except (AssertionError, subprocess.TimeoutExpired) as e:
                check(False, "%s: %s" % (rel, e), failures)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
