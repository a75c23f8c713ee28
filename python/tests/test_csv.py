"""PyTorch schedule CSV: export equal to ppsc's, import, round trips, and
located errors."""

import pytest

import pps
from conftest import run_ppsc, stdlib_names, stdlib_pipeline


def computes(s):
    return [[a[:3] for a in s.actions(r) if a.is_compute] for r in range(s.ranks)]


def forward_first(s):
    """computes(s) with every overlap pair forward first, as the CSV writes
    it (PyTorch's OVERLAP_F_B order; the pair's actions are independent)."""
    out = []
    for r in range(s.ranks):
        acts = [a for a in s.actions(r) if a.is_compute]
        row = [a[:3] for a in acts]
        i = 0
        while i + 1 < len(acts):
            if acts[i].overlap_next:
                if acts[i + 1].kind == "F" and acts[i].kind != "F":
                    row[i], row[i + 1] = row[i + 1], row[i]
                i += 1
            i += 1
        out.append(row)
    return out


@pytest.mark.parametrize("name", [n for n in stdlib_names() if n != "dualpipe"])
def test_round_trip(name, tmp_pps):
    path = str(tmp_pps(stdlib_pipeline(name), name + ".pps"))
    s = pps.compile(path)
    for with_comms in (False, True):
        csv = s.to_torch_csv(with_comms=with_comms)
        flags = ["--with-comms"] if with_comms else []
        assert csv == run_ppsc("emit", "--target=torch", *flags, path).stdout
        t = pps.from_torch_csv(csv, stages=s.stages, microbatches=s.microbatches,
                               placement=s.placement)
        assert (t.ranks, t.stages, t.microbatches) == (s.ranks, s.stages,
                                                        s.microbatches)
        assert t.stage_to_rank == s.stage_to_rank
        assert computes(t) == forward_first(s)
        assert not t.lint()


def test_file_import_and_compile_of_csv(tmp_pps):
    s = pps.compile(stdlib_pipeline("zb_h1"))
    path = tmp_pps(s.to_torch_csv(), "zb.csv")
    t = pps.from_torch_csv(str(path))
    assert t.name == "zb"
    assert computes(t) == computes(s)
    # compile() reads a .csv path through the same importer, as ppsc does.
    assert pps.compile(str(path)).to_pps() == t.to_pps()
    assert t.simulate().to_json() == run_ppsc("sim", "--format=json",
                                              str(path)).stdout


def test_csv_errors_are_located(tmp_pps):
    path = str(tmp_pps("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1XB1\n", "bad.csv"))
    with pytest.raises(pps.CompileError) as info:
        pps.from_torch_csv(path)
    (d,) = info.value.diagnostics
    assert d.kind == "csv-syntax" and (d.file, d.line) == (path, 2)
    cell = len("1F0,1B0,1F1,") + 1
    assert cell <= d.column < cell + len("1XB1")
    assert str(info.value) == run_ppsc("lint", path).stderr


def test_bidirectional_schedule_cannot_be_exported():
    s = pps.compile(stdlib_pipeline("dualpipe"))
    with pytest.raises(pps.CompileError) as info:
        s.to_torch_csv()
    assert info.value.diagnostics[0].kind == "torch-export"
    assert "directions 2" in info.value.diagnostics[0].message


def test_import_arguments():
    with pytest.raises(ValueError, match="placement"):
        pps.from_torch_csv("0F0,0B0\n", placement="zigzag")
    with pytest.raises(TypeError):
        pps.from_torch_csv("0F0,0B0\n", ranks="2")
    with pytest.raises(ValueError):
        pps.from_torch_csv("0F0,0B0\n", stages=0)
    t = pps.from_torch_csv("0F0,,0B0\n", keep_idle=True)
    assert [a.kind for a in t.actions(0)] == ["F", "IDLE", "B"]
    assert t.actions(0)[1].idle_time == 1.0


def test_lint_of_a_csv_file(tmp_pps):
    # Rank 1 runs a backward before its forward.
    path = str(tmp_pps("0F0,0F1,0B0,0B1\n1B0,1F0,1F1,1B1\n", "swap.csv"))
    findings = pps.lint(path)
    assert findings.text == run_ppsc("lint", path).stderr
    assert findings and all(f.file == path for f in findings)
    ok = str(tmp_pps("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "ok.csv"))
    assert pps.lint(ok) == [] and run_ppsc("lint", ok).returncode == 0
