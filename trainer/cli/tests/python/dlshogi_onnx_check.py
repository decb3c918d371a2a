#!/usr/bin/env python3
"""Checks a `trainer export --format dlshogi-onnx` file against dlshogi's own feature and label
code (cshogi.dlshogi) and against `trainer eval --json` on the same model.

Random standard-shogi positions (seeded playouts with cshogi) are encoded with
cshogi.dlshogi.make_input_features and run through the ONNX file in onnxruntime. For each one,
the softmax of output_policy over the legal moves' labels (cshogi.dlshogi.make_move_label) and
output_value must equal `trainer eval`'s move probabilities and win + draw / 2.

Usage: dlshogi_onnx_check.py TRAINER MODEL.safetensors MODEL.onnx [--positions N] [--seed S]
Prints "positions N max policy difference X max value difference Y"; exits 1 above 1e-5 (float32 arithmetic in two libraries, which differs with the CPU's vector width; measured: 8e-7 to 2.3e-6).
"""
import argparse
import json
import random
import subprocess
import sys
import tempfile

import cshogi
import numpy as np
import onnxruntime as ort
from cshogi.dlshogi import FEATURES1_NUM, FEATURES2_NUM, make_input_features, make_move_label

TOLERANCE = 1e-5


def random_positions(n, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        board = cshogi.Board()
        for _ in range(rng.randrange(0, 160)):
            moves = list(board.legal_moves)
            if not moves or board.is_draw() == cshogi.REPETITION_DRAW:
                break
            board.push(rng.choice(moves))
        if any(True for _ in board.legal_moves):
            out.append(board.sfen())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trainer")
    ap.add_argument("model")
    ap.add_argument("onnx")
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    sfens = random_positions(a.positions, a.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".sfen") as f:
        f.write("\n".join(sfens) + "\n")
        f.flush()
        out = subprocess.run(
            [a.trainer, "eval", "--model", a.model, "--positions", f.name, "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
    reports = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(reports) == len(sfens), (len(reports), len(sfens))

    x1 = np.zeros((len(sfens), FEATURES1_NUM, 9, 9), dtype=np.float32)
    x2 = np.zeros((len(sfens), FEATURES2_NUM, 9, 9), dtype=np.float32)
    boards = []
    for i, sfen in enumerate(sfens):
        board = cshogi.Board(sfen)
        make_input_features(board, x1[i], x2[i])
        boards.append(board)
    sess = ort.InferenceSession(a.onnx, providers=["CPUExecutionProvider"])
    policy, value = sess.run(["output_policy", "output_value"], {"input1": x1, "input2": x2})
    assert policy.shape == (len(sfens), 2187) and value.shape == (len(sfens), 1)

    max_p = max_v = 0.0
    moves_checked = 0
    for i, (board, report) in enumerate(zip(boards, reports)):
        legal = list(board.legal_moves)
        logits = np.array([policy[i, make_move_label(m, board.turn)] for m in legal], dtype=np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        ours = {m["usi"]: m["prob"] for m in report["moves"]}
        if len(ours) != len(legal):
            print("legal moves differ in %s: %d against %d" % (sfens[i], len(ours), len(legal)))
            return 1
        for m, p in zip(legal, probs):
            usi = cshogi.move_to_usi(m)
            if usi not in ours:
                print("%s: %s is not among trainer eval's moves" % (sfens[i], usi))
                return 1
            max_p = max(max_p, abs(ours[usi] - p))
            moves_checked += 1
        w, d, _ = report["wdl"]
        max_v = max(max_v, abs(w + d / 2 - float(value[i, 0])))
    print("positions %d moves %d max policy difference %.3g max value difference %.3g"
          % (len(sfens), moves_checked, max_p, max_v))
    return 0 if max_p <= TOLERANCE and max_v <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
