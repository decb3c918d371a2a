#!/usr/bin/env bash
# The project's test command: installs what the tests need when it is missing, then runs every
# test. Used as is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Fairy-Stockfish: the external engine the perft cross-checks and benchmarks compare with.
scripts/install-fsf.sh

# The pinned libtorch (PyTorch 2.11.0 wheel) in .local/, for the model crate and the binary.
scripts/setup-torch.sh >/dev/null

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The binary built for the integration tests validates every variant config.
./target/debug/trainer check configs
