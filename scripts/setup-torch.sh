#!/usr/bin/env bash
# Installs the pinned PyTorch (libtorch for tch) into .local/venv when it is missing.
# Prints the libtorch directory on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION=2.11.0
VENV=.local/venv
PY=${PYTHON:-python3}
site() { "$VENV/bin/python" -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null; }
have=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
if [ "${have%%+*}" != "$TORCH_VERSION" ]; then
  echo "installing torch==$TORCH_VERSION into $VENV (about 4.7 GB, once)" >&2
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$TORCH_VERSION" >&2
fi
# ONNX export (scripts/export_onnx.py) and its check need these two small packages.
if ! "$VENV/bin/python" -c 'import onnx, onnxruntime' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check onnx onnxruntime >&2
fi
# cshogi (dlshogi's features, labels and hcpe reader) is the reference of the dlshogi export tests.
if ! "$VENV/bin/python" -c 'import cshogi' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check cshogi==1.1.0 >&2
fi
# A stable path for the build (.cargo/config.toml points LIBTORCH at it).
ln -sfn "$(site)" .local/libtorch
echo "$PWD/.local/libtorch"
