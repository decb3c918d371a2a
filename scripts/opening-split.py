#!/usr/bin/env python3
"""How much of a match the random openings decide.

Usage: scripts/opening-split.py GAMES.txt... [--ours SUBSTRING] [--plies N] [--movetime MS]
[--variant NAME] [--engine PATH]. GAMES.txt are `trainer arena --out` records of matches over
random N-ply openings (`--random-plies N`). Fairy-Stockfish (USI mode, one thread) evaluates
each distinct opening, the position after its N random plies, once for MS milliseconds; the
script then sorts our games (the player whose command holds SUBSTRING, default `trainer usi`)
by that evaluation from our side and prints each band's games and score, per file and for
all files together.
"""
import argparse
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("games", nargs="+")
ap.add_argument("--ours", default="trainer usi")
ap.add_argument("--plies", type=int, default=4)
ap.add_argument("--movetime", type=int, default=300)
ap.add_argument("--variant", default="minishogi")
ap.add_argument("--engine", default="/usr/games/fairy-stockfish")
a = ap.parse_args()
if a.plies < 0:
    ap.error("--plies must be at least 0")
if a.movetime < 1:
    ap.error("--movetime must be at least 1")

BANDS = [(-10**9, -300), (-300, -100), (-100, 100), (100, 300), (300, 10**9)]
RECORD = re.compile(r"sfen (.*?) moves ?(.*?) result (-?\d) sente (.*?) gote (.*?) reason")

try:
    fsf = subprocess.Popen([a.engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
except OSError as e:
    sys.exit(f"--engine {a.engine}: {e.strerror}")


def send(line):
    fsf.stdin.write(line + "\n")
    fsf.stdin.flush()


def wait(prefix):
    while True:
        line = fsf.stdout.readline()
        if not line:
            sys.exit(f"{a.engine} exited")
        if line.startswith(prefix):
            return line


send("usi")
wait("usiok")
# Fairy-Stockfish names the variant option UCI_Variant in USI mode too.
send(f"setoption name UCI_Variant value {a.variant}")
send("setoption name Threads value 1")
send("isready")
wait("readyok")


def evaluate(sfen, moves):
    """Centipawns for the side to move (mates as +-10000)."""
    send(f"position sfen {sfen} moves {' '.join(moves)}" if moves else f"position sfen {sfen}")
    send(f"go movetime {a.movetime}")
    last = ""
    while True:
        line = wait("")
        if " score " in line:
            last = line
        if line.startswith("bestmove"):
            break
    m = re.search(r"score (cp|mate) (-?\d+)", last)
    if not m:
        return 0
    if m.group(1) == "mate":
        return 10000 if int(m.group(2)) > 0 else -10000
    return int(m.group(2))


def show(name, table):
    n = sum(v[0] for v in table.values())
    s = sum(v[1] for v in table.values())
    print(f"{name}: {n} games, score {s:g} ({100 * s / max(n, 1):.1f}%)")
    for (lo, hi), (g, sc) in table.items():
        if g:
            lo_s = "-inf" if lo < -10**8 else str(lo)
            hi_s = "+inf" if hi > 10**8 else str(hi)
            print(f"  opening [{lo_s}, {hi_s}) cp for us: {g} games, score {sc:g} ({100 * sc / g:.1f}%)")


cache = {}
total = {band: [0, 0.0] for band in BANDS}
skipped = 0
for path in a.games:
    bands = {band: [0, 0.0] for band in BANDS}
    try:
        lines = open(path).read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: {getattr(e, 'strerror', None) or e}")
    for line in lines:
        m = RECORD.match(line)
        if not m:
            skipped += 1
            continue
        sfen, moves, result = m.group(1), m.group(2).split(), int(m.group(3))
        if len(moves) < a.plies or len(sfen.split()) < 2:
            skipped += 1
            continue
        ours_sente = a.ours in m.group(4)
        if ours_sente == (a.ours in m.group(5)):
            skipped += 1
            continue
        key = (sfen, tuple(moves[: a.plies]))
        if key not in cache:
            cache[key] = evaluate(sfen, moves[: a.plies])
        # The side to move after the opening: the sfen's side, flipped by an odd count.
        sente_to_move = (sfen.split()[1] == "b") == (a.plies % 2 == 0)
        ours = cache[key] if sente_to_move == ours_sente else -cache[key]
        score = 0.5 if result == 0 else float((result == 1) == ours_sente)
        band = next(b for b in BANDS if b[0] <= ours < b[1])
        for t in (bands, total):
            t[band][0] += 1
            t[band][1] += score
    show(path, bands)
if len(a.games) > 1:
    show("all", total)
print(f"{len(cache)} openings evaluated at {a.movetime} ms; {skipped} lines skipped")
send("quit")
