"""The runtime tables pps.torch walks (Schedule's runtime_table: the action
schema's rules per action) agree with the compiler's analyses on every
stdlib schedule: replaying the memory effects gives the memory analysis'
peaks, every comm's partner is the action FIFO matching pairs it with,
and producers and consumers follow the routes. No PyTorch needed."""

import pytest

import pps
from pps import _pps
from conftest import stdlib_names, stdlib_pipeline

KINDS = [k[0] for k in _pps.runtime_kinds()]
EFFECTS = _pps.MEMORY_EFFECTS


def table(s, rank):
    return [dict(zip(("kind", "mb", "stage", "peer", "overlap", "effect",
                      "producer", "consumer", "partner_stage", "text",
                      "partner"), row))
            for row in s._unit.runtime_table(rank)]


@pytest.mark.parametrize("name", stdlib_names())
def test_runtime_table_agrees_with_the_analyses(name):
    s = pps.compile(stdlib_pipeline(name))
    tables = [table(s, r) for r in range(s.ranks)]
    sends, recvs = {}, {}
    for rank, rows in enumerate(tables):
        actions = s.actions(rank)
        live = peak = 0
        for row, a in zip(rows, actions):
            kind = KINDS[row["kind"]]
            assert (kind, row["mb"], row["stage"], row["text"]) == (
                a.kind, a.microbatch, a.stage, a.text)
            effect = EFFECTS[row["effect"]]
            if effect == "acquire":
                live += 1
                peak = max(peak, live)
            elif effect == "release":
                live -= 1
            first, last = s.route(row["mb"]) if row["mb"] >= 0 else (0, 0)
            if kind == "F":
                assert row["producer"] == (row["stage"] - 1 if row["stage"] > first else -1)
                assert row["consumer"] == (row["stage"] + 1 if row["stage"] < last else -1)
            elif kind in ("I", "B"):
                assert row["producer"] == (row["stage"] + 1 if row["stage"] < last else -1)
                assert row["consumer"] == (row["stage"] - 1 if row["stage"] > first else -1)
            if a.is_send:
                sends.setdefault((rank, a.peer), []).append(row)
            elif a.is_recv:
                recvs.setdefault((a.peer, rank), []).append(row)
        assert live == 0
        assert peak == s.peak_memory_per_rank[rank]
    # FIFO: the n-th send on a channel names the n-th receive as its
    # partner, and the other way round.
    assert set(sends) == set(recvs)
    for channel in sends:
        assert len(sends[channel]) == len(recvs[channel])
        for snd, rcv in zip(sends[channel], recvs[channel]):
            assert snd["partner"] == rcv["text"]
            assert rcv["partner"] == snd["text"]
            assert snd["partner_stage"] == rcv["stage"]
    assert s._unit.fifo_mismatch() is None


def test_action_text_is_the_schemas():
    cases = {("SEND_F", 3, 5, 2): "send F3@5 -> 2",
                   ("RECV_B", 3, 6, 1): "recv B3@6 <- 1",
                   ("W", 0, 1, -1): "W0@1", ("UNSHARD", -1, 5, -1): "unshard 5"}
    for (kind, mb, stage, peer), text in cases.items():
        assert _pps.action_text(KINDS.index(kind), mb, stage, peer) == text
    with pytest.raises(ValueError):
        _pps.action_text(len(KINDS), 0, 0, 0)
