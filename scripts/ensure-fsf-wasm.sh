#!/usr/bin/env bash
# Installs the pinned Fairy-Stockfish WebAssembly build (npm package fairy-stockfish-nnue.wasm,
# a current release with large boards) into .local/fsf-wasm when it is missing, for the perft
# cross-checks of the variants Debian's Fairy-Stockfish 11.1 lacks (trainer/rules/tests/
# fsf_crosscheck.rs); `node` runs it. Quiet when present; prints the package directory on its
# last line. Without node, npm or the registry it warns and exits 0, and the tests say what they
# skip; under CI (`CI` set) it fails instead, since the tests require the engine there.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.1.12
PREFIX=.local/fsf-wasm
PKG=$PREFIX/node_modules/fairy-stockfish-nnue.wasm

installed() {
  [ -f "$PKG/stockfish.wasm" ] && [ -f "$PKG/stockfish.js" ] &&
    grep -q "\"version\": *\"$VERSION\"" "$PKG/package.json" 2>/dev/null
}

fail() {
  if [ -n "${CI:-}" ]; then
    echo "error: $*" >&2
    exit 1
  fi
  echo "warning: $*; the Fairy-Stockfish WebAssembly cross-checks will be skipped" >&2
  exit 0
}

if ! installed; then
  command -v node >/dev/null 2>&1 || fail "node is not installed (Debian package nodejs)"
  command -v npm >/dev/null 2>&1 || fail "npm is not installed (Debian package npm)"
  echo "installing fairy-stockfish-nnue.wasm@$VERSION (npm) into $PREFIX" >&2
  mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error \
    "fairy-stockfish-nnue.wasm@$VERSION" >&2 ||
    fail "npm install fairy-stockfish-nnue.wasm@$VERSION failed"
  installed || fail "npm installed no fairy-stockfish-nnue.wasm@$VERSION at $PKG"
fi
echo "$PWD/$PKG"
