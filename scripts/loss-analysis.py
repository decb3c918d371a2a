#!/usr/bin/env python3
"""Where our engine loses its games, by Fairy-Stockfish's evaluation.

Usage: scripts/loss-analysis.py GAMES.txt [--ours SUBSTRING] [--games N] [--depth D]
[--variant NAME] [--engine PATH]. GAMES.txt is a `trainer arena --out` record. For the first N
games that our engine (the player whose command holds SUBSTRING, default `trainer usi`) lost,
Fairy-Stockfish (USI mode, one thread, `go depth D`) evaluates every position of the game;
the script prints the evaluations from our side, then, per game, the first of our moves that
took a position rated -200 cp or better to -500 or worse (both the position after it and the
one after the reply), as one of:
  mate<=7, mate<=11, mate>11: after it the opponent mates, in that many plies;
  material: rated -500 or worse without a mate;
and a summary: lost games, games with such a move, and the counts by kind. The other lost games
went down by steps (no single move of ours took them from -200 to -500).
"""
import argparse
import re
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("games")
ap.add_argument("--ours", default="trainer usi")
ap.add_argument("--games", type=int, default=60, dest="n")
ap.add_argument("--depth", type=int, default=12)
ap.add_argument("--variant", default="minishogi")
ap.add_argument("--engine", default="/usr/games/fairy-stockfish")
a = ap.parse_args()
if a.n < 1 or a.depth < 1:
    ap.error("--games and --depth must be at least 1")

MATE = 30000  # a mate in n plies is scored MATE - n
fsf = subprocess.Popen([a.engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(line):
    fsf.stdin.write(line + "\n")
    fsf.stdin.flush()


def until(prefix):
    out = []
    while True:
        line = fsf.stdout.readline()
        if not line:
            raise SystemExit(f"{a.engine} ended before {prefix!r}")
        out.append(line)
        if line.startswith(prefix):
            return out


def score(sfen, moves):
    """Fairy-Stockfish's score for the side to move (mates as MATE - plies)."""
    send(f"position sfen {sfen}" + (" moves " + " ".join(moves) if moves else ""))
    send(f"go depth {a.depth}")
    s = 0
    for line in until("bestmove"):
        t = line.split()
        if "score" in t:
            i = t.index("score")
            if t[i + 1] == "cp":
                s = int(t[i + 2])
            elif t[i + 1] == "mate":
                n = int(t[i + 2])
                s = (MATE - abs(n)) * (1 if n > 0 else -1)
    return s


send("usi")
until("usiok")
send(f"setoption name UCI_Variant value {a.variant}")
send("setoption name Threads value 1")
send("isready")
until("readyok")

RECORD = re.compile(r"sfen (.*?) moves (.*) result (-?\d) sente (.*) gote (.*) reason (\S+)")
kinds = {"mate<=7": 0, "mate<=11": 0, "mate>11": 0, "material": 0}
lost = 0
for line in open(a.games):
    m = RECORD.match(line.strip())
    if not m:
        continue
    sfen, moves, result, sente, gote, reason = m.groups()
    moves, result = moves.split(), int(result)
    if (a.ours in sente) == (a.ours in gote):
        continue
    our = 0 if a.ours in sente else 1
    if result == 0 or (result == 1) == (our == 0):
        continue
    lost += 1
    # evs[k]: the position after k plies, from our side.
    evs = []
    for k in range(len(moves) + 1):
        s = score(sfen, moves[:k])
        evs.append(s if k % 2 == our else -s)
    found = None
    for k in range(our, len(moves), 2):
        before, after = evs[k], evs[k + 1]
        reply = evs[k + 2] if k + 2 < len(evs) else after
        if before >= -200 and after <= -500 and reply <= -500:
            if after <= -(MATE - 100):
                plies = MATE + after
            elif reply <= -(MATE - 100):
                plies = MATE + reply + 1
            else:
                plies = None
            if plies is None:
                found = "material"
            else:
                found = "mate<=7" if plies <= 7 else ("mate<=11" if plies <= 11 else "mate>11")
            kinds[found] += 1
            print(f"game {lost}: our move {moves[k]} (ply {k + 1}): {before} -> {after} -> {reply}: {found}")
            break
    if not found:
        print(f"game {lost}: no single move of ours from -200 to -500 ({reason}, {len(moves)} plies)")
    print("  evaluations: " + " ".join(str(e) for e in evs), flush=True)
    if lost >= a.n:
        break
send("quit")
fsf.wait()
print(f"{lost} lost games; {sum(kinds.values())} with one of our moves from -200 or better to -500 or worse: {kinds}")
