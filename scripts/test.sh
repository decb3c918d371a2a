#!/usr/bin/env bash
# The project's test command: installs what the tests need when it is missing, then runs every
# test. Used as is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Fairy-Stockfish: the external engine the perft cross-checks and benchmarks compare with.
if ! command -v fairy-stockfish >/dev/null 2>&1 && [ ! -x /usr/games/fairy-stockfish ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing fairy-stockfish (apt-get)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fairy-stockfish >/dev/null) \
      || echo "warning: could not install fairy-stockfish; its cross-checks will be skipped"
  else
    echo "warning: fairy-stockfish missing and apt-get unavailable; its cross-checks will be skipped"
  fi
fi

# The pinned libtorch (PyTorch 2.11.0 wheel) in .local/, for the model crate and the binary.
scripts/setup-torch.sh >/dev/null

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The binary built for the integration tests validates every variant config.
./target/debug/trainer check configs
