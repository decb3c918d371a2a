#!/usr/bin/env bash
# The project's test command: installs what the tests need when it is missing, then runs every
# test. Used as is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# As root this command installs everything the tests need, so there a test that would skip
# (missing engine, browser, cluster, mount) is a failure instead: the tests read `CI`.
if [ "$(id -u)" = 0 ]; then
  export CI=${CI:-1}
fi

# Fairy-Stockfish: the external engine of the perft cross-checks and the arena tests.
scripts/ensure-apt.sh fairy-stockfish fairy-stockfish -- the Fairy-Stockfish cross-checks
# A current Fairy-Stockfish, built to WebAssembly and run by node (pinned npm package in
# .local/fsf-wasm), for the variants 11.1 lacks and the NNUE tests; under CI a failed install
# fails the run.
scripts/ensure-apt.sh node nodejs -- the Fairy-Stockfish WebAssembly cross-checks
scripts/ensure-apt.sh npm npm -- the Fairy-Stockfish WebAssembly cross-checks
scripts/ensure-fsf-wasm.sh >/dev/null
# A one-node Slurm cluster for the cluster test (it skips without root or these).
scripts/ensure-apt.sh slurmctld slurm-wlm -- the Slurm test
scripts/ensure-apt.sh munged munge -- the Slurm test
# Headless Chromium for the report's browser test.
scripts/ensure-apt.sh chromium chromium -- the report browser test
# The Shogi Variants program's piece tables (the Shogi Association's rules), an independent
# reference for the large variants' moves, promotions and start positions.
scripts/ensure-apt.sh /usr/share/games/shogivar/Tai.dat shogivar-data -- the large-shogi cross-checks

# The pinned libtorch (PyTorch 2.11.0 wheel) in .local/, for the model crate and the binary.
scripts/setup-torch.sh >/dev/null

# Test binaries and the processes they start share the cores: libtorch's idle OpenMP threads
# must sleep, not spin (spinning made the multi-process tests several times slower).
export OMP_WAIT_POLICY=PASSIVE

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The binary built for the integration tests validates every variant config.
./target/debug/trainer check configs
