// Fairy-Stockfish's WebAssembly build as a UCI engine on stdin and stdout, for the Rust tests
// (tests/common/mod.rs, wasm_engine_or_skip).
//   node --no-experimental-fetch fsf-wasm-uci.js PACKAGE_DIR
// PACKAGE_DIR holds the build's stockfish.js and stockfish.wasm (the npm package
// fairy-stockfish-nnue.wasm). Unlike the package's own uci.js, this one:
// - copies the file named by `setoption name VariantPath value FILE` into the engine's
//   in-memory file system (the engine cannot read the host's files) and passes the copy on;
// - on `quit` or at the end of input exits at once; the caller waits for the answers it needs
//   (a `go perft` runs on an engine thread and would be cut short).
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const Stockfish = require(path.resolve(process.argv[2], "stockfish.js"));

async function main() {
  const engine = await Stockfish();
  const input = readline.createInterface({ input: process.stdin });
  let copies = 0;
  for await (const raw of input) {
    const line = raw.trim();
    if (line === "quit") {
      break;
    }
    const variantPath = /^setoption name VariantPath value (.+)$/.exec(line);
    if (variantPath) {
      copies += 1;
      const inside = `/variants-${copies}.ini`;
      engine.FS.writeFile(inside, fs.readFileSync(variantPath[1]));
      engine.postMessage(`setoption name VariantPath value ${inside}`);
      continue;
    }
    engine.postMessage(line);
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
