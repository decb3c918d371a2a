#!/usr/bin/env python3
"""Reads a dlshogi hcpe file with cshogi and prints one line per record:
SFEN <tab> best move (USI) <tab> eval <tab> result (0 draw, 1 sente won, 2 gote won)."""
import sys

import cshogi
import numpy as np


def main():
    records = np.fromfile(sys.argv[1], dtype=cshogi.HuffmanCodedPosAndEval)
    board = cshogi.Board()
    for r in records:
        board.set_hcp(r["hcp"])
        move = board.move_from_move16(int(r["bestMove16"]))
        if not board.is_legal(move):
            print("illegal best move %d in %s" % (r["bestMove16"], board.sfen()), file=sys.stderr)
            return 1
        print("%s\t%s\t%d\t%d" % (board.sfen(), cshogi.move_to_usi(move), r["eval"], r["gameResult"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
