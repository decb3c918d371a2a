#!/usr/bin/env python3
"""The units of a network's evaluation against Fairy-Stockfish's classical one.

    scripts/nnue-eval-scale.py NET.nnue DATA.plain [N] [VARIANT]

DATA.plain is `trainer export-data --format fsf-plain` output; N positions spread over it
(default 300) are loaded into the npm Fairy-Stockfish (scripts/fsf-wasm-uci.js) with
`EvalFile` NET, and its `eval` gives the classical and the NNUE evaluation of each. Printed:
their mean and median sizes, their correlation with each other and with the position's score
(our search's value), and for each the scale S (internal units per logit of win probability,
a pawn being 208 units in `eval`'s output) that best fits sigmoid(e / S) to the search's win
probability. `trainer nnue --eval-scale` sets the network's S.
"""
import math
import statistics as st
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAWN = 208  # Fairy-Stockfish's PawnValueEg: `eval` prints internal units over it
SCORE_SCALE = 410  # the fsf-plain score's units per logit (README, "Networks for Fairy-Stockfish")


def read_plain(path):
    fens, scores, fen = [], [], None
    for line in open(path):
        if line.startswith("fen "):
            fen = line[4:].strip()
        elif line.startswith("score "):
            fens.append(fen)
            scores.append(int(line.split()[1]))
    return fens, scores


def evals(net, fens, variant):
    """(classical, nnue) in pawns for the side to move, None for positions in check."""
    cmd = [
        "node",
        "--no-experimental-fetch",
        str(ROOT / "scripts/fsf-wasm-uci.js"),
        str(ROOT / ".local/fsf-wasm/node_modules/fairy-stockfish-nnue.wasm"),
    ]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(s):
        p.stdin.write(s + "\n")
        p.stdin.flush()

    def until(word):
        lines = []
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit("the engine stopped")
            lines.append(line)
            if word in line:
                return lines

    send("uci")
    send(f"setoption name UCI_Variant value {variant}")
    send(f"setoption name EvalFile value {net}")
    send("isready")
    until("readyok")
    out = []
    for fen in fens:
        send(f"position fen {fen}")
        send("eval")
        send("isready")
        c = n = None
        for line in until("readyok"):
            if line.startswith("Classical evaluation"):
                c = line.split()[2]
            elif line.startswith("NNUE evaluation"):
                n = line.split()[2]
        side = 1 if fen.split()[1] == "w" else -1
        try:
            out.append((float(c) * side, float(n) * side))
        except (TypeError, ValueError):
            out.append(None)
    send("quit")
    p.wait()
    return out


def best_scale(xs, probs):
    def err(s):
        return sum((1 / (1 + math.exp(-x * PAWN / s)) - p) ** 2 for x, p in zip(xs, probs))

    return min(range(100, 3001, 10), key=err)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    net, data = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    variant = sys.argv[4] if len(sys.argv) > 4 else "minishogi"
    fens, scores = read_plain(data)
    step = max(1, len(fens) // n)
    picked = list(range(0, len(fens), step))[:n]
    got = evals(net, [fens[i] for i in picked], variant)
    rows = [(g[0], g[1], scores[i]) for g, i in zip(got, picked) if g is not None]
    cl, nn, sc = (list(col) for col in zip(*rows))
    probs = [1 / (1 + math.exp(-s / SCORE_SCALE)) for s in sc]
    print(f"positions {len(rows)} (of {len(picked)}; the others are in check)")
    for name, xs in (("classical", cl), ("nnue", nn)):
        print(
            f"{name:9}: mean |e| {st.mean(map(abs, xs)):.2f} pawns, median {st.median(map(abs, xs)):.2f}, "
            f"correlation with the search's score {st.correlation(xs, sc):.3f}, "
            f"best S {best_scale(xs, probs)}"
        )
    print(f"correlation classical-nnue {st.correlation(cl, nn):.3f}")


if __name__ == "__main__":
    main()
