#!/usr/bin/env python3
"""Two engines' scores over the same opening book, paired by opening.

Usage: scripts/book-pair.py --a GAMES.txt... --b GAMES.txt... [--ours SUBSTRING] [--plies N]

GAMES.txt are `trainer arena --out` records. Arm A's files hold the games of one engine (the
player whose command holds SUBSTRING, default `trainer usi`), arm B's another's, over the same
openings (the start position and the first N plies, default 4, the length of the book's lines)
with the same opponent; an arm may hold several matches. Prints each arm's wins, draws and
losses and its score, then A's score minus B's in points with its standard error, the openings
as clusters: per opening, A's points there over A's games minus B's over B's, summed, with the
variance of that sum estimated from the spread of the openings' terms. Lines that are not
records, and records without our player, are skipped and counted.
"""
import argparse
import math
import re
import sys
from collections import defaultdict

RECORD = re.compile(r"^sfen (.*?) moves ?(.*?) result (-?1|0) sente (.*?) gote (.*?) reason")

ap = argparse.ArgumentParser()
ap.add_argument("--a", nargs="+", required=True, metavar="GAMES")
ap.add_argument("--b", nargs="+", required=True, metavar="GAMES")
ap.add_argument("--ours", default="trainer usi")
ap.add_argument("--plies", type=int, default=4)
a = ap.parse_args()
if a.plies < 0:
    ap.error("--plies must be at least 0")


def arm(files):
    """Points per opening, games, wins, draws, losses and skipped lines of one arm."""
    per = defaultdict(float)
    wins = draws = losses = skipped = 0
    for path in files:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            sys.exit(f"{path}: {getattr(e, 'strerror', None) or e}")
        for line in lines:
            m = RECORD.match(line)
            if not m:
                skipped += 1
                continue
            sfen, moves, result, sente, gote = m.groups()
            if a.ours in sente:
                ours = int(result)
            elif a.ours in gote:
                ours = -int(result)
            else:
                skipped += 1
                continue
            key = sfen + " moves " + " ".join(moves.split()[: a.plies])
            per[key] += (1 + ours) / 2
            wins += ours == 1
            draws += ours == 0
            losses += ours == -1
    games = wins + draws + losses
    if games == 0:
        sys.exit("no game of our player (--ours %r) in %s" % (a.ours, " ".join(files)))
    return per, games, wins, draws, losses, skipped


results = {}
for name, files in (("A", a.a), ("B", a.b)):
    per, games, w, d, l, skipped = arm(files)
    results[name] = (per, games)
    score = (w + d / 2) / games
    note = f"; {skipped} lines skipped" if skipped else ""
    print(f"{name}: {w}-{d}-{l} of {games}, {100 * score:.2f}%{note}")

(pa, na), (pb, nb) = results["A"], results["B"]
openings = sorted(set(pa) | set(pb))
terms = [pa.get(o, 0.0) / na - pb.get(o, 0.0) / nb for o in openings]
diff = sum(terms)
if len(terms) < 2:
    print(f"A - B: {100 * diff:+.2f} points (one opening: no standard error)")
    sys.exit(0)
mean = diff / len(terms)
var = len(terms) / (len(terms) - 1) * sum((t - mean) ** 2 for t in terms)
print(f"A - B: {100 * diff:+.2f} points, SE {100 * math.sqrt(var):.2f} "
      f"({len(terms)} openings as clusters)")
