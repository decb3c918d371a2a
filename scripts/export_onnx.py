#!/usr/bin/env python3
"""Convert a TorchScript model written by `trainer export --format torchscript` to ONNX.

Requirements (pip): torch==2.11.0 (scripts/setup-torch.sh installs it in .local/venv), onnx.
Optional check with onnxruntime: `--check` compares ONNX and TorchScript outputs.

Usage: export_onnx.py MODEL.pt OUT.onnx --planes C --ranks R --files F [--check]
Input: float32 [batch, C, R, F]; output "output": [batch, policy_len + 3] (policy logits, then
win/draw/loss probabilities for the side to move). The batch dimension is dynamic.
"""
import argparse
import os
import sys

import torch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--planes", type=int, required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--check", action="store_true", help="compare with onnxruntime")
    a = ap.parse_args()
    m = torch.jit.load(a.model, map_location="cpu").eval()
    x = torch.rand(2, a.planes, a.ranks, a.files)
    tmp = a.out + ".tmp%d" % os.getpid()
    torch.onnx.export(
        m,
        (x,),
        tmp,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    os.replace(tmp, a.out)
    if a.check:
        import numpy as np
        import onnxruntime as ort

        sess = ort.InferenceSession(a.out, providers=["CPUExecutionProvider"])
        x = torch.rand(3, a.planes, a.ranks, a.files)
        want = m(x).detach().numpy()
        got = sess.run(["output"], {"input": x.numpy()})[0]
        err = float(np.abs(want - got).max())
        print("onnxruntime max abs difference: %.3g" % err)
        if err > 1e-4:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
