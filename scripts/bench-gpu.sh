#!/usr/bin/env bash
# The GPU figures of BENCHMARKS.md in one go: the network's forward at growing batches (f32 and
# bf16, counting what the search gets back), self-play on search threads with one inference
# server (shogi b6c64 and minishogi b4c32), and a short training run on CUDA whose log must not
# repeat any warning. Usage: scripts/bench-gpu.sh [TRAINER_BINARY] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/trainer}
out=${2:-bench-gpu}
mkdir -p "$out"
threads=$(nproc)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

for p in f32 bf16; do
  "$bin" bench nn --device cuda --model b6c64 --variants shogi,minishogi \
    --batches 256,1024,4096 --seconds 3 --precision "$p" | tee "$out/nn-$p.txt"
done
"$bin" bench selfplay --device cuda --variant shogi --model b6c64 --threads "$threads" \
  --parallel 128 --simulations 32 --seconds 30 | tee "$out/selfplay-shogi.txt"
"$bin" bench selfplay --device cuda --variant minishogi --model b4c32 --threads "$threads" \
  --parallel 256 --simulations 32 --seconds 30 | tee "$out/selfplay-minishogi.txt"

# A two-minute run on CUDA: no line of its output may repeat (a warning printed every step would).
cfg="$out/cuda-run.toml"
sed -e 's/^name = .*/name = "cuda-check"/' -e 's/^max_minutes = .*/max_minutes = 2/' \
  -e 's/^device = .*/device = "cuda"/' configs/runs/default.toml > "$cfg"
rm -rf "$out/runs"
"$bin" run --config "$cfg" --runs-dir "$out/runs" > "$out/cuda-run.log" 2>&1 || true
repeats=$(sed -E 's/^\[ *[0-9.]+s\] //' "$out/cuda-run.log" | grep -iE "warn|deprecat" | sort | uniq -c \
  | awk '$1 > 1' | wc -l)
echo "cuda run: $(grep -c 'published' "$out/cuda-run.log" || true) publications, $repeats repeated warning lines"
