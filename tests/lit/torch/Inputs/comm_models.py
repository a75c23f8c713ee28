"""comm_models.py - an independent oracle for the torch hang tests.

Runs a compute+comms PyTorch schedule CSV under two comm models and prints,
per model, whether every rank reaches the end and, if not, the action each
rank is stuck at. Deliberately naive (a fixpoint over per-rank program
counters, no happens-before graph), so the lit tests do not rest on the
deadlock pass alone.

  rendezvous: a send and its receive complete together, when both are at the
              head of their ranks and are the n-th of their channel
  eager:      a send completes at once; a receive completes when the n-th
              send of its channel has been issued

Channels are FIFO per (source rank, destination rank); peers come from the
stage -> rank map given by the compute cells.
"""
import re
import sys

CELL = re.compile(r"(\d+)(F|I|W|B|SEND_F|RECV_F|SEND_B|RECV_B|UNSHARD|RESHARD|REDUCE_GRAD)(\d*)")


def load(path):
    with open(path, newline="") as f:
        rows = [line.rstrip("\r\n") for line in f]
    return [[c.strip() for c in row.split(",") if c.strip()] for row in rows]


def run(rows, model):
    acts = [[CELL.fullmatch(c).groups() for c in row] for row in rows]
    rank_of = {}
    for r, row in enumerate(acts):
        for stage, kind, _ in row:
            if kind in ("F", "I", "W", "B"):
                rank_of[int(stage)] = r

    def peer(stage, kind):
        up = kind in ("SEND_F", "RECV_B")
        return rank_of[int(stage) + 1 if up else int(stage) - 1]

    pc = [0] * len(acts)
    sent, received = {}, {}

    def head(r):
        return acts[r][pc[r]] if pc[r] < len(acts[r]) else None

    progress = True
    while progress:
        progress = False
        for r in range(len(acts)):
            while head(r):
                stage, kind, mb = head(r)
                if kind.startswith("SEND"):
                    b = peer(stage, kind)
                    ch = (r, b)
                    if model == "eager":
                        sent[ch] = sent.get(ch, 0) + 1
                        pc[r] += 1
                    else:
                        other = head(b)
                        if not (other and other[1].startswith("RECV")
                                and peer(other[0], other[1]) == r
                                and sent.get(ch, 0) == received.get(ch, 0)):
                            break
                        sent[ch] = sent.get(ch, 0) + 1
                        received[ch] = received.get(ch, 0) + 1
                        pc[r] += 1
                        pc[b] += 1
                elif kind.startswith("RECV"):
                    a = peer(stage, kind)
                    ch = (a, r)
                    if model == "eager":
                        if sent.get(ch, 0) <= received.get(ch, 0):
                            break
                        received[ch] = received.get(ch, 0) + 1
                        pc[r] += 1
                    else:
                        other = head(a)
                        if not (other and other[1].startswith("SEND")
                                and peer(other[0], other[1]) == r
                                and sent.get(ch, 0) == received.get(ch, 0)):
                            break
                        sent[ch] = sent.get(ch, 0) + 1
                        received[ch] = received.get(ch, 0) + 1
                        pc[r] += 1
                        pc[a] += 1
                else:
                    pc[r] += 1
                progress = True
    stuck = ["rank %d at %s" % (r, "".join(head(r))) for r in range(len(acts)) if head(r)]
    return "finishes" if not stuck else "stuck: " + ", ".join(stuck)


if __name__ == "__main__":
    rows = load(sys.argv[1])
    for model in ("rendezvous", "eager"):
        print("%s: %s" % (model, run(rows, model)))
