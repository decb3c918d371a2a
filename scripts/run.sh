#!/usr/bin/env bash
# The main job: installs the pinned libtorch (and Fairy-Stockfish) when missing, builds the release binary, and runs
# the training loop on the default config (arguments are passed to `trainer run`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh >/dev/null
# The default run's evaluation plays Fairy-Stockfish as a fixed anchor.
scripts/ensure-apt.sh fairy-stockfish fairy-stockfish -- the evaluation anchor
cargo build --release --locked -p trainer
if [ $# -eq 0 ]; then
  set -- --config configs/runs/default.toml
fi
exec target/release/trainer run "$@"
