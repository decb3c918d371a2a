// Fairy-Stockfish's WebAssembly build as a UCI engine on stdin and stdout, with variant files
// and networks read from the host (the perft cross-checks and the NNUE tests run it):
//   node --no-experimental-fetch scripts/fsf-wasm-uci.js .local/fsf-wasm/node_modules/fairy-stockfish-nnue.wasm
// PACKAGE_DIR holds the build's stockfish.js and stockfish.wasm (the npm package
// fairy-stockfish-nnue.wasm). The engine reads files from its in-memory file system only, so
// this copies the file named by `setoption name VariantPath value FILE` or
// `setoption name EvalFile value FILE` into it and passes the copy's name on. An EvalFile
// keeps its base name (Fairy-Stockfish uses a network only if that name starts with the
// variant's); each copy goes to a folder of its own. At `quit` or the end of input it exits at
// once: the caller waits for the answers it needs first (a search runs on an engine thread).
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
    const file = /^setoption name (VariantPath|EvalFile) value (.+)$/.exec(line);
    if (file && fs.existsSync(file[2])) {
      copies += 1;
      const dir = `/copies-${copies}`;
      engine.FS.mkdir(dir);
      const inside = `${dir}/${path.basename(file[2])}`;
      engine.FS.writeFile(inside, fs.readFileSync(file[2]));
      engine.postMessage(`setoption name ${file[1]} value ${inside}`);
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
