"""Checks the exports of every stdlib schedule against the export schema.

usage: check_exports.py PPSC SCHEMA SCHEDULES_DIR STDLIB_DIR [EXTRA.pps...]
       check_exports.py --self-test SCHEMA

For every pipeline in SCHEDULES_DIR (tests/exec/schedules: one per stdlib
schedule, plus variants) and every EXTRA pipeline (a `synth` result), as
written, with --fsdp and with --align-bubbles:
  * `ppsc emit --target=json` validates against SCHEMA (a JSON Schema,
    draft 2020-12, checked with python3-jsonschema), says it is verified,
    and its routes, data and loss ranks, weight groups and reduce_grad
    actions are consistent with its topology;
  * `ppsc emit --target=torch --with-comms` lists, rank by rank, the same
    actions as the JSON (REDUCE_GRAD included; idles are not cells), each
    JSON action spelled here the way PyTorch spells it, independently of
    pps's own spelling table; the compute-only CSV lists the computes;
  * a bidirectional schedule is refused by the torch target (torch-export).
Every stdlib schedule must be covered by some pipeline in SCHEDULES_DIR.

--self-test checks that the checker can fail: documents with a field
missing, of the wrong type or with an unknown action kind do not validate.
"""

import csv
import io
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("error: python3-jsonschema is not installed (apt-get install "
             "python3-jsonschema; .ci/deps.sh lists it)")

COMPUTE = ("F", "I", "W", "B")
COMMS = ("send_f", "recv_f", "send_b", "recv_b")
CONTROLS = ("unshard", "reshard", "reduce_grad")


def fail(message):
    sys.exit("error: " + message)


def validator(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def ppsc(tool, *args, ok=True):
    r = subprocess.run([tool, *args], capture_output=True, text=True)
    if ok and r.returncode != 0:
        fail("ppsc %s failed (%d):\n%s" % (" ".join(args), r.returncode,
                                           r.stderr))
    return r


def cell(a):
    """A JSON action in PyTorch's spelling (`<stage><TYPE><microbatch>`)."""
    kind = a["kind"]
    if kind in COMPUTE:
        return "%d%s%d" % (a["stage"], kind, a["microbatch"])
    if kind in COMMS:
        return "%d%s%d" % (a["stage"], kind.upper(), a["microbatch"])
    if kind in CONTROLS:
        return "%d%s" % (a["stage"], kind.upper())
    fail("no PyTorch spelling for %r" % (a,))


def json_cells(actions, with_comms):
    """The cells the torch CSV should have for a rank's JSON actions."""
    out = []
    i = 0
    while i < len(actions):
        a = actions[i]
        if a["kind"] == "idle" or (not with_comms and a["kind"] not in COMPUTE):
            i += 1
            continue
        if a.get("overlap_next"):
            b = actions[i + 1]
            # PyTorch's OVERLAP_F_B: the forward first.
            x, y = (b, a) if b["kind"] == "F" and a["kind"] != "F" else (a, b)
            out.append("(%s;%s)OVERLAP_F_B" % (cell(x), cell(y)))
            i += 2
            continue
        out.append(cell(a))
        i += 1
    return out


def csv_rows(text):
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        if row and row[0].startswith("#"):
            fail("a verified CSV starts with a comment line: %r" % row[0])
    return rows


def check_layout(doc, where):
    """Routes, data/loss ranks, weight groups and reduce_grads agree with the
    topology."""
    topo = doc["topology"]
    S, M, D = topo["stages"], topo["microbatches"], topo["directions"]
    s2r = topo["stage_to_rank"]
    if len(s2r) != S:
        fail("%s: stage_to_rank has %d entries for %d stages" % (where,
                                                              len(s2r), S))
    routes = doc["routes"]
    if len(routes) != D:
        fail("%s: %d routes for %d directions" % (where, len(routes), D))
    mb = 0
    for r in routes:
        if r["first_microbatch"] != mb:
            fail("%s: routes do not cover the microbatches in order" % where)
        mb += r["microbatches"]
        if r["data_rank"] != s2r[r["first_stage"]] or \
                r["loss_rank"] != s2r[r["last_stage"]]:
            fail("%s: a route's data or loss rank is not its stage's" % where)
    if mb != M:
        fail("%s: routes cover %d of %d microbatches" % (where, mb, M))
    if doc["data_ranks"] != sorted({r["data_rank"] for r in routes}) or \
            doc["loss_ranks"] != sorted({r["loss_rank"] for r in routes}):
        fail("%s: data_ranks / loss_ranks are not the routes'" % where)
    groups = doc["weight_groups"]
    if sorted(st for g in groups for st in g) != list(range(S)):
        fail("%s: weight_groups are not a partition of the stages" % where)
    # Layer k is the k-th stage of every route.
    for k, g in enumerate(groups):
        want = [r["first_stage"] + k for r in routes
                if r["first_stage"] + k <= r["last_stage"]]
        if g != want:
            fail("%s: weight group %d is %s, the routes say %s" % (where, k, g,
                                                                  want))
    if D == 2 and any(len(g) != 2 for g in groups):
        fail("%s: a bidirectional schedule's stages come in pairs" % where)
    # One reduce_grad per stage, on the stage's rank.
    reduces = [0] * S
    for rank in doc["ranks"]:
        for a in rank["actions"]:
            if a["kind"] == "reduce_grad":
                if s2r[a["stage"]] != rank["rank"]:
                    fail("%s: reduce_grad %d on rank %d" % (where, a["stage"],
                                                           rank["rank"]))
                reduces[a["stage"]] += 1
    if reduces != [1] * S:
        fail("%s: reduce_grad per stage %s" % (where, reduces))


def check_pipeline(tool, v, path, extra):
    where = os.path.basename(path) + (" " + " ".join(extra) if extra else "")
    doc = json.loads(ppsc(tool, "emit", "--target=json", *extra, path).stdout)
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        fail("%s: the JSON does not validate: %s at %s" % (
            where, errors[0].message, "/".join(map(str, errors[0].path))))
    if doc["verification"] != {"verified": True,
                               "comm_model": doc["comm_model"],
                               "comm_stream": doc["comm_stream"]}:
        fail("%s: not verified: %r" % (where, doc["verification"]))
    check_layout(doc, where)
    by_rank = {r["rank"]: r["actions"] for r in doc["ranks"]}
    if doc["topology"]["directions"] != 1:
        r = ppsc(tool, "emit", "--target=torch", *extra, path, ok=False)
        if r.returncode != 1 or "[torch-export]" not in r.stderr:
            fail("%s: the torch target did not refuse two directions" % where)
        return "json"
    for with_comms in (True, False):
        flag = ["--with-comms"] if with_comms else []
        rows = csv_rows(ppsc(tool, "emit", "--target=torch", *flag, *extra,
                             path).stdout)
        if len(rows) != len(by_rank):
            fail("%s: %d CSV rows for %d ranks" % (where, len(rows),
                                                   len(by_rank)))
        for rank, row in enumerate(rows):
            want = json_cells(by_rank[rank], with_comms)
            got = row if with_comms else [c for c in row if c]
            if got != want:
                k = next((i for i, (a, b) in enumerate(zip(got, want))
                          if a != b), min(len(got), len(want)))
                fail("%s: rank %d: the CSV%s and the JSON differ at action "
                     "%d: %r vs %r" % (where, rank,
                                       " with comms" if with_comms else "", k,
                                       got[k:k + 3], want[k:k + 3]))
    return "json, csv"


def stdlib_schedules(stdlib):
    names = []
    for f in sorted(os.listdir(stdlib)):
        stem, ext = os.path.splitext(f)
        if ext == ".pps":
            with open(os.path.join(stdlib, f)) as fh:
                if re.search(r"\bschedule %s\(" % re.escape(stem), fh.read()):
                    names.append(stem)
    return names


def self_test(schema_path):
    v = validator(schema_path)
    good = {
        "schema_version": 1, "name": "t",
        "verification": {"verified": True, "comm_model": "rendezvous"},
        "topology": {"ranks": 1, "stages": 1, "microbatches": 1,
                     "placement": "loop", "directions": 1,
                     "stage_to_rank": [0]},
        "routes": [{"first_microbatch": 0, "microbatches": 1,
                    "first_stage": 0, "last_stage": 0, "data_rank": 0,
                    "loss_rank": 0}],
        "data_ranks": [0], "loss_ranks": [0], "weight_groups": [[0]],
        "cost": {"default": {"F": 1, "I": 1, "W": 1, "B": 2},
                 "per_stage": [], "overlap": None, "latency": 0,
                 "bandwidth_bytes_per_ms": 0, "activation_bytes": 0,
                 "gradient_bytes": -1, "async_comm": True},
        "comm_model": "rendezvous", "memory_limit": None,
        "fsdp": {"enabled": False, "prefetch": 1},
        "ranks": [{"rank": 0, "actions": [
            {"kind": "F", "microbatch": 0, "stage": 0},
            {"kind": "B", "microbatch": 0, "stage": 0},
            {"kind": "reduce_grad", "stage": 0}]}]}
    v.validate(good)
    bad = []
    d = json.loads(json.dumps(good))
    del d["weight_groups"]
    bad.append(("no weight_groups", d))
    d = json.loads(json.dumps(good))
    d["verification"] = {"verified": False, "comm_model": "rendezvous"}
    bad.append(("unverified without a reason", d))
    d = json.loads(json.dumps(good))
    d["ranks"][0]["actions"].append({"kind": "OVERLAP_F_B", "stage": 0})
    bad.append(("an unknown action kind", d))
    d = json.loads(json.dumps(good))
    d["ranks"][0]["actions"][2]["microbatch"] = 0
    bad.append(("a microbatch on reduce_grad", d))
    d = json.loads(json.dumps(good))
    d["schema_version"] = 2
    bad.append(("another schema version", d))
    for what, doc in bad:
        if v.is_valid(doc):
            fail("a document with %s validates" % what)
    print("ok: the schema rejects %d broken documents" % len(bad))


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        self_test(argv[2])
        return
    if len(argv) < 5:
        fail(__doc__)
    tool, schema_path, folder, stdlib = argv[1:5]
    v = validator(schema_path)
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.endswith(".pps")) + argv[5:]
    covered = set()
    for path in files:
        with open(path) as fh:
            covered.update(re.findall(r"\bschedule (\w+)\(", fh.read()))
        for extra in ([], ["--fsdp"], ["--align-bubbles"]):
            what = check_pipeline(tool, v, path, extra)
            print("%s%s: %s" % (os.path.basename(path),
                                "".join(" " + x for x in extra), what))
    missing = sorted(set(stdlib_schedules(stdlib)) - covered)
    if missing:
        fail("no pipeline in %s uses %s" % (folder, ", ".join(missing)))
    print("ok: %d pipelines, every stdlib schedule" % len(files))


if __name__ == "__main__":
    main(sys.argv)
