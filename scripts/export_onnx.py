#!/usr/bin/env python3
"""Convert a TorchScript model written by `trainer export --format torchscript` to ONNX.

Requirements (pip): torch==2.11.0 (scripts/setup-torch.sh installs it in .local/venv), onnx.
Optional check with onnxruntime: `--check` compares ONNX and TorchScript outputs.

Usage: export_onnx.py MODEL.pt OUT.onnx --planes C --ranks R --files F [--check]
                     [--dlshogi --policy-len 2187]
Input: float32 [batch, C, R, F]; output "output": [batch, policy_len + 3] (policy logits, then
win/draw/loss probabilities for the side to move). The batch dimension is dynamic.

With --dlshogi (a model trained in dlshogi's encoding, 62 + 57 = 119 planes) the file is laid out
as dlshogi and FukauraOu load it: inputs "input1" [batch, 62, 9, 9] and "input2" [batch, 57, 9, 9]
(cshogi.dlshogi.make_input_features), outputs "output_policy" [batch, 2187] (logits, index
cshogi.dlshogi.make_move_label) and "output_value" [batch, 1] (win + draw / 2 for the side to
move, the probability dlshogi's value head gives after its sigmoid).
"""
import argparse
import os
import sys

import warnings

import torch

FEATURES1 = 62


class Dlshogi(torch.nn.Module):
    """dlshogi's two inputs and two outputs around a network of ours."""

    def __init__(self, net, policy_len):
        super().__init__()
        self.net = net
        self.policy_len = policy_len

    def forward(self, x1, x2):
        y = self.net(torch.cat([x1, x2], 1))
        wdl = y[:, self.policy_len :]
        return y[:, : self.policy_len], wdl[:, 0:1] + 0.5 * wdl[:, 1:2]


def inputs(a, batch):
    x = torch.rand(batch, a.planes, a.ranks, a.files)
    return (x[:, :FEATURES1], x[:, FEATURES1:]) if a.dlshogi else (x,)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--planes", type=int, required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--check", action="store_true", help="compare with onnxruntime")
    ap.add_argument("--dlshogi", action="store_true", help="dlshogi's input and output layout")
    ap.add_argument("--policy-len", type=int, help="policy logits before the WDL (--dlshogi)")
    a = ap.parse_args()
    m = torch.jit.load(a.model, map_location="cpu").eval()
    if a.dlshogi:
        if a.policy_len is None or a.planes <= FEATURES1:
            ap.error("--dlshogi needs --policy-len and more than %d planes" % FEATURES1)
        m = torch.jit.script(Dlshogi(m, a.policy_len).eval())
        in_names, out_names = ["input1", "input2"], ["output_policy", "output_value"]
        batch = "batch_size"
    else:
        in_names, out_names, batch = ["input"], ["output"], "batch"
    tmp = a.out + ".tmp%d" % os.getpid()
    # The TorchScript exporter is the one that reads a traced file; its deprecation notes are noise.
    warnings.simplefilter("ignore")
    torch.onnx.export(
        m,
        inputs(a, 2),
        tmp,
        input_names=in_names,
        output_names=out_names,
        dynamic_axes={n: {0: batch} for n in in_names + out_names},
        opset_version=17,
        dynamo=False,
    )
    os.replace(tmp, a.out)
    if a.check:
        import numpy as np
        import onnxruntime as ort

        sess = ort.InferenceSession(a.out, providers=["CPUExecutionProvider"])
        xs = inputs(a, 3)
        with torch.no_grad():
            want = m(*xs)
        want = want if isinstance(want, tuple) else (want,)
        got = sess.run(out_names, {n: x.numpy() for n, x in zip(in_names, xs)})
        err = max(float(np.abs(w.numpy() - g).max()) for w, g in zip(want, got))
        print("onnxruntime max abs difference: %.3g" % err)
        if err > 1e-4:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
