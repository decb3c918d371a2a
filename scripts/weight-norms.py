#!/usr/bin/env python3
"""Mean L2 norm of a network's trunk convolutions, for each generation named.

Usage: scripts/weight-norms.py RUN_DIR GEN [GEN ...]

Reads RUN_DIR/models/NNNNNN.safetensors (standard library only) and prints, per generation,
the mean norm of the tower's convolution weights (`tower.*.weight` of rank 4). Each of them
feeds a batch norm, so the norm sets how far one optimizer step turns it: a norm that keeps
growing anneals the trunk's effective learning rate (BENCHMARKS.md, "Weight decay that holds
the trunk's scale").
"""
import array
import json
import math
import struct
import sys


def tower_norm(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    norms = []
    for name, t in header.items():
        if name == "__metadata__" or not name.startswith("tower."):
            continue
        if not name.endswith(".weight") or len(t["shape"]) != 4:
            continue
        if t["dtype"] != "F32":
            sys.exit(f"{path}: {name} is {t['dtype']}, not F32")
        start, end = t["data_offsets"]
        values = array.array("f")
        values.frombytes(data[8 + n + start : 8 + n + end])
        norms.append(math.sqrt(sum(x * x for x in values)))
    if not norms:
        sys.exit(f"{path}: no tower convolutions")
    return sum(norms) / len(norms)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    run = sys.argv[1]
    for gen in sys.argv[2:]:
        if not gen.isdigit():
            sys.exit(f"generation {gen!r}: not a number")
        path = f"{run}/models/{int(gen):06d}.safetensors"
        try:
            norm = tower_norm(path)
        except (OSError, ValueError, KeyError, struct.error) as e:
            sys.exit(f"{path}: cannot read the network: {e}")
        print(f"generation {int(gen)}: {norm:.1f}")


if __name__ == "__main__":
    main()
