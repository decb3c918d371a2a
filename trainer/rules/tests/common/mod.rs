//! A Fairy-Stockfish process driven over UCI, shared by the tests that compare our rules with
//! the engine (`fsf_crosscheck`, `fsf_export`).
// Each test file uses the parts it needs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

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
        let mut child = Command::new(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fairy-stockfish");
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
