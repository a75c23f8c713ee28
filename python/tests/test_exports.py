"""The executable exports of the pps module (to_json, to_torch_csv) and the
fields every runtime reads: each export is proved as `ppsc lint` proves it
(a deadlock is refused with lint's findings; verify=False writes it
marked unverified), and says the same as `ppsc emit`; the routes, the
ranks that feed data and compute losses and the weight-sharing groups are
the compiler's (Schedule.routes and co., the JSON's fields)."""

import json
import os

import pytest

import pps
from conftest import SOURCE_DIR, run_ppsc, stdlib_pipeline

CYCLE = os.path.join(SOURCE_DIR, "tests", "lit", "export", "Inputs",
                     "rendezvous_cycle.pps")


def test_exports_of_a_deadlock_are_refused_with_lints_findings():
    s = pps.compile(CYCLE)  # compiles: compile() is not the proof
    assert pps.lint(CYCLE).errors > 0
    for export in (lambda: s.to_json(),
                   lambda: s.to_torch_csv(with_comms=True)):
        with pytest.raises(pps.CompileError) as info:
            export()
        first = info.value.diagnostics[0]
        assert first.kind == "deadlock"
        assert first.message == ("deadlock under the rendezvous model: ranks "
                                 "0 and 1 wait on each other")
        assert (first.line, first.column) == (9, 11)
    # The compute-only CSV carries no comms: its proof is of the computes
    # (with the comm order pps inserts), as ppsc's; these deadlock anyway.
    with pytest.raises(pps.CompileError) as info:
        s.to_torch_csv()
    assert info.value.diagnostics[0].message.startswith(
        "the compute order deadlocks")
    p = run_ppsc("emit", "--target=torch", CYCLE)
    assert p.returncode == 1
    assert info.value.diagnostics.text == p.stderr
    found = s.prove()
    assert found.errors == 1 and found[0].kind == "deadlock"
    # The proof is under the comm model asked for: PyTorch issue #172668's
    # hang deadlocks under rendezvous, not under eager.
    hang = pps.compile(os.path.join(SOURCE_DIR, "tests", "lit", "torch",
                                    "Inputs", "hang_172668.csv"))
    assert hang.prove("rendezvous").errors == 1
    assert len(hang.prove("eager")) == 0
    with pytest.raises(pps.CompileError):
        hang.to_json()  # under the schedule's model, rendezvous


def test_unverified_exports_say_so():
    s = pps.compile(CYCLE)
    doc = json.loads(s.to_json(verify=False))
    assert doc["verification"] == {
        "verified": False, "comm_model": "rendezvous",
        "comm_stream": {"scope": "none", "eager_threshold_bytes": None},
        "reason": "exported with to_json(verify=False); `ppsc lint` checks it"}
    csv = s.to_torch_csv(with_comms=True, verify=False)
    assert csv.startswith("# pps: UNVERIFIED: not checked for deadlock "
                          "(exported with to_torch_csv(verify=False)")
    # The rest is what ppsc writes with --no-verify.
    p = run_ppsc("emit", "--target=torch", "--with-comms", "--no-verify", CYCLE)
    assert p.returncode == 0, p.stderr
    assert csv.split("\n", 1)[1] == p.stdout.split("\n", 1)[1]


@pytest.mark.parametrize("name", ["one_f_one_b", "interleaved_1f1b",
                                  "dualpipe_v", "dualpipe"])
def test_layout_fields_match_the_json_and_ppsc(tmp_path, name):
    source = stdlib_pipeline(name)
    s = pps.compile(source)
    doc = json.loads(s.to_json())
    assert doc["schema_version"] == 1
    assert doc["verification"] == {"verified": True,
                                   "comm_model": s.comm_model,
                                   "comm_stream": doc["comm_stream"]}
    assert [list(r) for r in s.routes] == [
        [r["first_microbatch"], r["microbatches"], r["first_stage"],
         r["last_stage"], r["data_rank"], r["loss_rank"]]
        for r in doc["routes"]]
    assert s.data_ranks == doc["data_ranks"]
    assert s.loss_ranks == doc["loss_ranks"]
    assert s.weight_groups == doc["weight_groups"]
    # Every microbatch's route is Schedule.route's.
    for r in s.routes:
        for mb in range(r.first_microbatch,
                        r.first_microbatch + r.microbatches):
            assert s.route(mb) == (r.first_stage, r.last_stage)
    path = tmp_path / (name + ".pps")
    path.write_text(source)
    p = run_ppsc("emit", "--target=json", str(path))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == doc


def test_dualpipe_shares_weights_between_its_directions():
    s = pps.compile(stdlib_pipeline("dualpipe"))  # 4 ranks, 8 stages, V
    assert s.weight_groups == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert [tuple(r) for r in s.routes] == [(0, 4, 0, 3, 0, 3),
                                            (4, 4, 4, 7, 3, 0)]
    assert s.data_ranks == [0, 3] and s.loss_ranks == [0, 3]
    one = pps.compile(stdlib_pipeline("one_f_one_b"))
    assert one.weight_groups == [[0], [1], [2], [3]]
    assert one.data_ranks == [0] and one.loss_ranks == [3]
