#!/usr/bin/env python3
"""Simulations a move of `trainer usi` at a fixed time a move.

Usage: scripts/engine-nodes.py MODEL [--games N] [--movetime MS] [--option NAME=VALUE ...]
[--binary PATH]. The engine plays minishogi against itself from up to four first moves, each
game until a side has a mate in one (the search then stops at once); the script prints the
median, mean and quartiles of the `nodes` of each move's last `info` line. The environment
(e.g. TRAINER_CPU_BACKEND) reaches the engine.
"""
import argparse
import os
import re
import statistics
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("--games", type=int, default=4)
ap.add_argument("--movetime", type=int, default=100)
ap.add_argument("--plies", type=int, default=40)
ap.add_argument("--option", action="append", default=[])
ap.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "trainer"))
a = ap.parse_args()

p = subprocess.Popen([a.binary, "usi", "--model", a.model], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)


def send(line):
    p.stdin.write(line + "\n")
    p.stdin.flush()


def until(prefix):
    lines = []
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("the engine exited")
        lines.append(line.strip())
        if line.startswith(prefix):
            return lines


send("usi")
until("usiok")
for o in a.option:
    name, value = o.split("=", 1)
    send(f"setoption name {name} value {value}")
send("isready")
until("readyok")
nodes = []
for game in range(a.games):
    send("usinewgame")
    moves = [["5e4d", "2e3d", "4e3d", "1e2d"][game % 4]]
    for _ in range(a.plies):
        send("position startpos moves " + " ".join(moves))
        send(f"go movetime {a.movetime}")
        lines = until("bestmove")
        best = lines[-1].split()[1]
        n = [int(m.group(1)) for line in lines for m in [re.search(r"\bnodes (\d+)", line)] if m]
        if not n or n[-1] <= 1 or best in ("resign", "win"):
            break
        nodes.append(n[-1])
        moves.append(best)
send("quit")
p.wait()
nodes.sort()
print(f"moves {len(nodes)} median {statistics.median(nodes)} mean {statistics.mean(nodes):.0f} "
      f"q25 {nodes[len(nodes) // 4]} q75 {nodes[3 * len(nodes) // 4]}")
