//! A Fairy-Stockfish process driven over UCI, shared by the tests that compare our rules with
//! the engine (`fsf_crosscheck`, `fsf_export`): the native binary (Debian's 11.1), or a current
//! release built to WebAssembly and run by `node` (see [`wasm_engine_or_skip`]).
// Each test file uses the parts it needs.
#![allow(dead_code)]

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// How to start an engine: a program and its arguments.
#[derive(Clone, Debug)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Whether the engine's stderr reaches the test output (the node wrapper reports its
    /// failures there); a native engine's is discarded.
    pub stderr: bool,
}

impl Launch {
    /// A native engine binary, started without arguments.
    pub fn native(bin: &Path) -> Launch {
        Launch {
            program: bin.to_path_buf(),
            args: Vec::new(),
            stderr: false,
        }
    }

    /// What the messages of a test call the engine.
    pub fn describe(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }
}

/// A running engine.
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Engine {
    /// Starts the engine and completes the UCI handshake; also returns its `UCI_Variant`
    /// option line (the variants it offers).
    pub fn spawn(bin: &Path) -> (Engine, String) {
        Engine::launch(&Launch::native(bin))
    }

    /// [`Engine::spawn`] for any [`Launch`].
    pub fn launch(launch: &Launch) -> (Engine, String) {
        let mut child = Command::new(&launch.program)
            .args(&launch.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if launch.stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", launch.describe()));
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut e = Engine {
            child,
            stdin,
            lines,
        };
        e.send("uci");
        let variants = e.wait("option name UCI_Variant ");
        e.wait("uciok");
        (e, variants)
    }

    /// Sends one command line.
    pub fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").unwrap();
    }

    /// Reads lines until one starts with `prefix`, and returns it.
    pub fn wait(&mut self, prefix: &str) -> String {
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            if line.starts_with(prefix) {
                return line;
            }
        }
        panic!("engine exited before {prefix:?}");
    }

    /// Reads lines until `last` (included), and returns those before it.
    pub fn lines_until(&mut self, last: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            if line.starts_with(last) {
                return out;
            }
            out.push(line);
        }
        panic!("engine exited before {last:?}");
    }

    /// `go perft depth` from a FEN.
    pub fn perft(&mut self, fen: &str, depth: u32) -> u64 {
        self.send(&format!("position fen {fen}"));
        self.send(&format!("go perft {depth}"));
        let line = self.wait("Nodes searched");
        line.rsplit(' ').next().unwrap().trim().parse().unwrap()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.wait();
    }
}

/// The engine binary: `$FAIRY_STOCKFISH`, else `fairy-stockfish` on the PATH or in /usr/games.
/// Without one the caller's test says so and passes, except under CI (`CI` set), where the
/// test command installs it and its absence is a failure.
pub fn engine_or_skip() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("FAIRY_STOCKFISH") {
        return Some(PathBuf::from(bin));
    }
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("fairy-stockfish is not installed (the test command installs it)");
        }
        eprintln!("skipped: fairy-stockfish not installed (apt-get install fairy-stockfish)");
    }
    found
}

/// The npm package of the WebAssembly build that the test command installs (pinned in
/// scripts/ensure-fsf-wasm.sh), relative to the workspace root.
pub const WASM_PACKAGE: &str = ".local/fsf-wasm/node_modules/fairy-stockfish-nnue.wasm";

/// A current Fairy-Stockfish: the WebAssembly build of the npm package `fairy-stockfish-nnue.wasm`
/// (large boards, every built-in variant, pieces defined by Betza in `variants.ini`), run by
/// `node` through `scripts/fsf-wasm-uci.js`, which speaks UCI on stdin and stdout and
/// copies the file of `setoption name VariantPath` into the engine's in-memory file system.
/// `$FAIRY_STOCKFISH_WASM` names another build's folder (its `stockfish.js` and
/// `stockfish.wasm`), `$NODE` another node. Without the package or node the caller's test says
/// so and passes, except under CI (`CI` set), where the test command installs both and their
/// absence is a failure.
pub fn wasm_engine_or_skip() -> Option<Launch> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.ancestors().nth(2).unwrap();
    let (package, chosen) = match std::env::var_os("FAIRY_STOCKFISH_WASM") {
        Some(dir) => (PathBuf::from(dir), true),
        None => (root.join(WASM_PACKAGE), false),
    };
    let node = std::env::var_os("NODE").map(PathBuf::from).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("node"))
            .find(|p| p.is_file())
    });
    let missing = if !package.join("stockfish.js").is_file() {
        Some(format!(
            "no Fairy-Stockfish WebAssembly build at {} (scripts/ensure-fsf-wasm.sh installs it)",
            package.display()
        ))
    } else if node.is_none() {
        Some("node is not installed (it runs the Fairy-Stockfish WebAssembly build)".to_string())
    } else {
        None
    };
    if let Some(missing) = missing {
        if chosen || std::env::var_os("CI").is_some() {
            panic!("{missing}");
        }
        eprintln!("skipped: {missing}");
        return None;
    }
    let wrapper = crate_dir.join("../../scripts/fsf-wasm-uci.js");
    Some(Launch {
        program: node.unwrap(),
        // Node 18 and later fetch the .wasm file with `fetch` unless told not to, which fails
        // on a file path.
        args: vec![
            "--no-experimental-fetch".into(),
            wrapper.into(),
            package.canonicalize().unwrap().into(),
        ],
        stderr: true,
    })
}
