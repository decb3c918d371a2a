//! External engines driven over USI or UCI: a child process (`sh -c CMD`) on stdin/stdout.

use crate::error::Failure;
use crate::fsf::{fsf_to_usi, move_to_fsf, to_fsf_fen};
use crate::tally::Score;
use crate::ParseProtocolError;
use rules::{Move, Position, Variant};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::str::FromStr;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The protocol of an external engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    /// USI (shogi engines): `usi`, `position sfen`, USI move notation.
    #[default]
    Usi,
    /// UCI as Fairy-Stockfish speaks it for shogi variants: `position fen`, its coordinates.
    Uci,
}

impl FromStr for Protocol {
    type Err = ParseProtocolError;

    /// `usi` or `uci` (any case).
    fn from_str(s: &str) -> Result<Protocol, ParseProtocolError> {
        match s.to_ascii_lowercase().as_str() {
            "usi" => Ok(Protocol::Usi),
            "uci" => Ok(Protocol::Uci),
            _ => Err(ParseProtocolError(s.to_string())),
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protocol::Usi => "usi",
            Protocol::Uci => "uci",
        })
    }
}

/// Time allowed for the handshake (`usi`/`uci` .. `readyok`), model loading included.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The engine's answer to `go`.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A move, converted to USI notation (not yet checked for legality).
    Move(String),
    /// `bestmove resign` (or UCI `(none)`/`0000`).
    Resign,
    /// USI `bestmove win` (an entering-king declaration).
    Win,
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

/// An external engine: a child process (`sh -c CMD`) on stdin/stdout, restarted after a crash
/// or a timeout.
pub struct ExternalEngine {
    cmd: String,
    protocol: Protocol,
    options: Vec<(String, String)>,
    variant: Arc<Variant>,
    proc: Option<Proc>,
    /// `id name` of the engine, once started.
    id_name: Option<String>,
    /// Times the process was started.
    starts: u32,
}

impl ExternalEngine {
    /// An engine started (lazily) as `sh -c CMD`, speaking `protocol`, given `options` by
    /// `setoption` after the handshake; `USI_Variant`/`UCI_Variant` is set to `variant` when the
    /// engine offers it and `options` do not name it.
    pub fn new(
        cmd: &str,
        protocol: Protocol,
        options: Vec<(String, String)>,
        variant: Arc<Variant>,
    ) -> ExternalEngine {
        ExternalEngine {
            cmd: cmd.to_string(),
            protocol,
            options,
            variant,
            proc: None,
            id_name: None,
            starts: 0,
        }
    }

    /// The protocol it speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The engine's `id name`, once it has been started.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }

    /// How many times the process was started (more than once after crashes or timeouts).
    pub fn starts(&self) -> u32 {
        self.starts
    }

    fn send(&mut self, line: &str) -> Result<(), Failure> {
        let p = self
            .proc
            .as_mut()
            .ok_or_else(|| Failure::Crash("not running".into()))?;
        writeln!(p.stdin, "{line}")
            .and_then(|_| p.stdin.flush())
            .map_err(|e| Failure::Crash(format!("writing {line:?}: {e}")))
    }

    /// Reads lines until one for which `f` returns Some, within `timeout`.
    fn read_until<T>(
        &mut self,
        timeout: Duration,
        what: &str,
        mut f: impl FnMut(&str) -> Option<T>,
    ) -> Result<T, Failure> {
        let end = Instant::now() + timeout;
        let p = self
            .proc
            .as_mut()
            .ok_or_else(|| Failure::Crash("not running".into()))?;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match p.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(t) = f(line.trim()) {
                        return Ok(t);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Failure::Timeout(format!(
                        "no {what} within {} ms",
                        timeout.as_millis()
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = p
                        .child
                        .try_wait()
                        .ok()
                        .flatten()
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default();
                    return Err(Failure::Crash(format!(
                        "the engine exited while waiting for {what}{status}"
                    )));
                }
            }
        }
    }

    /// Starts the process and runs the handshake if it is not running.
    pub fn ensure_started(&mut self) -> Result<(), Failure> {
        if self.proc.is_some() {
            return Ok(());
        }
        self.starts += 1;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Failure::Crash(format!("cannot start {:?}: {e}", self.cmd)))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        self.proc = Some(Proc {
            child,
            stdin,
            lines,
        });
        let r = self.handshake();
        if r.is_err() {
            self.kill();
        }
        r
    }

    fn handshake(&mut self) -> Result<(), Failure> {
        let (hello, ok, variant_option) = match self.protocol {
            Protocol::Usi => ("usi", "usiok", "USI_Variant"),
            Protocol::Uci => ("uci", "uciok", "UCI_Variant"),
        };
        self.send(hello)?;
        let mut advertised = HashSet::new();
        let mut id_name = None;
        self.read_until(HANDSHAKE_TIMEOUT, ok, |l| {
            if let Some(rest) = l.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                advertised.insert(name.to_ascii_lowercase());
            } else if let Some(n) = l.strip_prefix("id name ") {
                id_name = Some(n.to_string());
            }
            (l == ok).then_some(())
        })?;
        self.id_name = id_name;
        let mut options = self.options.clone();
        let given = options
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(variant_option));
        if !given && advertised.contains(&variant_option.to_ascii_lowercase()) {
            options.insert(0, (variant_option.to_string(), self.variant.name.clone()));
        }
        for (k, v) in options {
            self.send(&format!("setoption name {k} value {v}"))?;
        }
        self.ready(HANDSHAKE_TIMEOUT)
    }

    fn ready(&mut self, timeout: Duration) -> Result<(), Failure> {
        self.send("isready")?;
        self.read_until(timeout, "readyok", |l| (l == "readyok").then_some(()))
    }

    /// Prepares a new game (starting the engine if needed).
    pub fn new_game(&mut self) -> Result<(), Failure> {
        self.ensure_started()?;
        let cmd = match self.protocol {
            Protocol::Usi => "usinewgame",
            Protocol::Uci => "ucinewgame",
        };
        let r = self.send(cmd).and_then(|_| self.ready(HANDSHAKE_TIMEOUT));
        if r.is_err() {
            self.kill();
        }
        r
    }

    /// Asks for a move: `start` is the game's first position, `moves` the moves since, `go`
    /// the arguments of `go`; the answer must come within `timeout`. On a failure the process
    /// is killed (it is restarted for the next game).
    pub fn go(
        &mut self,
        start: &Position,
        moves: &[Move],
        go: &str,
        timeout: Duration,
    ) -> Result<Reply, Failure> {
        let r = self.go_inner(start, moves, go, timeout);
        if r.is_err() {
            self.kill();
        }
        r
    }

    fn go_inner(
        &mut self,
        start: &Position,
        moves: &[Move],
        go: &str,
        timeout: Duration,
    ) -> Result<Reply, Failure> {
        self.ensure_started()?;
        let v = self.variant.clone();
        let mut line = match self.protocol {
            Protocol::Usi => format!("position sfen {}", start.to_sfen()),
            Protocol::Uci => format!("position fen {}", to_fsf_fen(start)),
        };
        if !moves.is_empty() {
            line.push_str(" moves");
            for &mv in moves {
                line.push(' ');
                match self.protocol {
                    Protocol::Usi => line.push_str(&v.move_to_usi(mv)),
                    Protocol::Uci => line.push_str(&move_to_fsf(&v, mv)),
                }
            }
        }
        self.send(&line)?;
        self.send(&format!("go {go}"))?;
        let token = self.read_until(timeout, "bestmove", |l| {
            l.strip_prefix("bestmove")
                .map(|rest| rest.split_whitespace().next().unwrap_or("").to_string())
        })?;
        match (self.protocol, token.as_str()) {
            (_, "") => Err(Failure::Malformed("`bestmove` without a move".into())),
            (_, "resign") | (Protocol::Uci, "(none)" | "0000") => Ok(Reply::Resign),
            (Protocol::Usi, "win") => Ok(Reply::Win),
            (Protocol::Usi, t) => Ok(Reply::Move(t.to_string())),
            (Protocol::Uci, t) => fsf_to_usi(&v, t)
                .map(Reply::Move)
                .ok_or_else(|| Failure::Malformed(format!("bestmove {t:?} is not a move"))),
        }
    }

    /// Tells a USI engine how the game ended for it.
    pub fn game_over(&mut self, score: Score) {
        if self.protocol == Protocol::Usi && self.proc.is_some() {
            let r = match score {
                Score::Win => "win",
                Score::Draw => "draw",
                Score::Loss => "lose",
            };
            if self.send(&format!("gameover {r}")).is_err() {
                self.kill();
            }
        }
    }

    /// Kills the process (it is restarted on the next use).
    pub fn kill(&mut self) {
        if let Some(mut p) = self.proc.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }
}

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        if self.proc.is_some() {
            let _ = self.send("quit");
            if let Some(p) = self.proc.as_mut() {
                let end = Instant::now() + Duration::from_millis(500);
                while Instant::now() < end {
                    if let Ok(Some(_)) = p.child.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            self.kill();
        }
    }
}
