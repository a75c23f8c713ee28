"""Reads a lowered .pps (ppsc emit --target=pps) on stdin and prints the
SHA-256 of its compute order: each rank's computes (F3@5, W0@2, or F3
with one stage per rank) in program order, without the sends and receives
insert-comms placed, so the digest pins the order a schedule builds and
nothing of how it is printed."""
import hashlib
import re
import sys

ranks = {}
rank = None
skip = False  # a comm's compute reference may sit on the next line
for line in sys.stdin:
    m = re.match(r"\s*rank (\d+):(.*)", line)
    if m:
        rank = int(m.group(1))
        ranks[rank] = []
        line = m.group(2)
    elif rank is None or not line.startswith("    "):
        rank = None
        continue
    for tok in re.sub(r"[;(),]", " ", line).split():
        if tok in ("send", "recv"):
            skip = True  # the comm's own compute reference follows
        elif tok == "overlap":
            ranks[rank].append(tok)  # the two computes that follow overlap
        elif re.fullmatch(r"[FIWB]\d+(@\d+)?", tok):
            if not skip:
                ranks[rank].append(tok)
            skip = False
text = "\n".join("rank %d: %s" % (r, " ".join(ranks[r])) for r in sorted(ranks))
print("%d ranks, %d computes, sha256 %s" % (
    len(ranks), sum(len(v) - v.count("overlap") for v in ranks.values()),
    hashlib.sha256(text.encode()).hexdigest()))
