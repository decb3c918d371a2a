//! Players for `trainer arena` and `trainer play`: our search in-process ([`Searcher`]) and
//! external engines driven over USI or UCI ([`ExternalEngine`]), plus the notation conversions
//! Fairy-Stockfish's UCI dialect needs for shogi variants.
//!
//! Fairy-Stockfish (11.1, Debian 12) speaks UCI with its own coordinates for shogi variants:
//! files are letters `a..` from the left as seen by sente, ranks numbers `1..` from sente's side
//! (the bottom), so USI `7g7f` is `c3c4` and `2b3c+` is `h8g7+`; drops are `P@c4` (uppercase
//! letter for both sides); promotion is a trailing `+`. Its FEN is the SFEN board followed by
//! the hands in brackets, one letter per piece (`[PPp]`), then the side to move, where its `w`
//! is sente and `b` gote.

use anyhow::{bail, Context, Result};
use model::{check_encoding, load_model, parse_device, NetEvaluator};
use rules::{Color, Move, Position, Variant};
use search::{Algorithm, Evaluator, Search, SearchConfig, UniformEvaluator};
use selfplay::Encoder;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Time allowed for the handshake (`usi`/`uci` .. `readyok`), model loading included.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// Our MCTS in-process: a network from a model file, or the uniform evaluator.
pub(crate) struct Searcher {
    encoder: Encoder,
    net: Box<dyn Evaluator>,
    nodes: u32,
    seed: u64,
    input: Vec<f32>,
    logits: Vec<f32>,
}

impl Searcher {
    /// A searcher with `nodes` simulations per move; `model` None: uniform policy, even value.
    pub(crate) fn new(
        variant: &Arc<Variant>,
        model: Option<&Path>,
        nodes: u32,
        device: &str,
    ) -> Result<Searcher> {
        let encoder = Encoder::new(variant.clone());
        let net: Box<dyn Evaluator> = match model {
            None => Box::new(UniformEvaluator {
                input_len: encoder.input_len(),
                policy_len: encoder.policy_len(),
            }),
            Some(path) => {
                let device = parse_device(device).map_err(anyhow::Error::msg)?;
                let (vs, net, meta) = load_model(path, device)
                    .with_context(|| format!("loading {}", path.display()))?;
                check_encoding(&meta, &encoder.spec(), path).with_context(|| {
                    format!(
                        "{} is a {} model, not one for {}",
                        path.display(),
                        meta.variant,
                        variant.name
                    )
                })?;
                Box::new(NetEvaluator::new(vs, net))
            }
        };
        Ok(Searcher {
            encoder,
            net,
            nodes: nodes.max(1),
            seed: 0,
            input: Vec::new(),
            logits: Vec::new(),
        })
    }

    /// The move to play in `pos` (not a finished game): Gumbel search without noise, `nodes`
    /// simulations, stopped early at `time` if given.
    pub(crate) fn choose(&mut self, pos: &Position, time: Option<Duration>) -> Result<Move> {
        let legal = pos.legal_moves();
        match legal.len() {
            0 => bail!("no legal move"),
            1 => return Ok(legal[0]),
            _ => {}
        }
        let started = Instant::now();
        let config = SearchConfig {
            algorithm: Algorithm::Gumbel,
            simulations: self.nodes,
            reuse_tree: false,
            ..SearchConfig::default()
        };
        self.seed = self.seed.wrapping_add(1);
        let mut search = Search::new(config, pos.clone(), self.seed);
        search.start(self.nodes, false);
        while !search.finished() {
            if search.root_visits() > 0 && time.is_some_and(|t| started.elapsed() >= t) {
                break;
            }
            if search.select() {
                let leaf = search.leaf_position();
                self.input.resize(self.encoder.input_len(), 0.0);
                self.encoder.encode(leaf, &mut self.input);
                let out = self.net.evaluate(&self.input, 1)?;
                let e = out
                    .into_iter()
                    .next()
                    .context("the evaluator returned nothing")?;
                self.logits.clear();
                for &mv in search.leaf_moves() {
                    self.logits
                        .push(e.policy_logits[self.encoder.move_to_index(leaf, mv)]);
                }
                search.expand(&self.logits, e.wdl);
            }
        }
        Ok(search.result().best)
    }
}

/// The protocol of an external engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Protocol {
    /// USI (shogi engines): `usi`, `position sfen`, USI move notation.
    Usi,
    /// UCI as Fairy-Stockfish speaks it for shogi variants: `position fen`, its coordinates.
    Uci,
}

/// How an engine failed to produce a move.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Failure {
    /// The process exited, could not be started, or its pipe broke.
    Crash(String),
    /// No answer within the time allowed.
    Timeout(String),
    /// An answer that is not a move.
    Malformed(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Crash(s) => write!(f, "crash: {s}"),
            Failure::Timeout(s) => write!(f, "timeout: {s}"),
            Failure::Malformed(s) => write!(f, "malformed reply: {s}"),
        }
    }
}

/// The engine's answer to `go`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reply {
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
pub(crate) struct ExternalEngine {
    cmd: String,
    protocol: Protocol,
    options: Vec<(String, String)>,
    variant: Arc<Variant>,
    proc: Option<Proc>,
    /// `id name` of the engine, once started.
    pub(crate) id_name: Option<String>,
    /// Times the process was started.
    pub(crate) starts: u32,
}

impl ExternalEngine {
    pub(crate) fn new(
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
    pub(crate) fn protocol(&self) -> Protocol {
        self.protocol
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
    pub(crate) fn ensure_started(&mut self) -> Result<(), Failure> {
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
    pub(crate) fn new_game(&mut self) -> Result<(), Failure> {
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
    pub(crate) fn go(
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

    /// Tells a USI engine how the game ended (1 win, 0 draw, -1 loss for it).
    pub(crate) fn game_over(&mut self, score: i32) {
        if self.protocol == Protocol::Usi && self.proc.is_some() {
            let r = match score {
                1 => "win",
                0 => "draw",
                _ => "lose",
            };
            if self.send(&format!("gameover {r}")).is_err() {
                self.kill();
            }
        }
    }

    /// Kills the process (it is restarted on the next use).
    pub(crate) fn kill(&mut self) {
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

/// Fairy-Stockfish's name of a square: file letter from the left (sente's view), rank number
/// from the bottom.
pub(crate) fn fsf_square(v: &Variant, sq: usize) -> String {
    let (x, y) = v.coords(sq);
    format!("{}{}", (b'a' + x as u8) as char, v.ranks as usize - y)
}

/// A move in Fairy-Stockfish's UCI notation (`c3c4`, `h8g7+`, `P@e2`).
pub(crate) fn move_to_fsf(v: &Variant, mv: Move) -> String {
    match mv {
        Move::Normal { from, to, promote } => format!(
            "{}{}{}",
            fsf_square(v, from as usize),
            fsf_square(v, to as usize),
            if promote { "+" } else { "" }
        ),
        Move::Drop { kind, to } => format!(
            "{}@{}",
            v.kinds[kind as usize].letter.to_ascii_uppercase(),
            fsf_square(v, to as usize)
        ),
    }
}

/// Parses a Fairy-Stockfish square (`a1`, `i9`, `j10`).
fn parse_fsf_square(v: &Variant, s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (&f, digits) = b.split_first()?;
    if !f.is_ascii_lowercase() || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let x = (f - b'a') as usize;
    let r: usize = s[1..].parse().ok()?;
    if x >= v.files as usize || r == 0 || r > v.ranks as usize {
        return None;
    }
    Some(v.square(x, v.ranks as usize - r))
}

/// Converts a Fairy-Stockfish UCI move to USI text (syntax only; legality is the referee's).
pub(crate) fn fsf_to_usi(v: &Variant, token: &str) -> Option<String> {
    if let Some((piece, sq)) = token.split_once('@') {
        let mut chars = piece.chars();
        let (Some(l), None) = (chars.next(), chars.next()) else {
            return None;
        };
        let to = parse_fsf_square(v, sq)?;
        return Some(format!("{}*{}", l.to_ascii_uppercase(), v.square_name(to)));
    }
    let (body, promote) = match token.strip_suffix('+') {
        Some(b) => (b, true),
        None => (token, false),
    };
    // Split before the second letter.
    let second = body
        .char_indices()
        .skip(1)
        .find(|(_, c)| c.is_ascii_lowercase())
        .map(|(i, _)| i)?;
    let from = parse_fsf_square(v, &body[..second])?;
    let to = parse_fsf_square(v, &body[second..])?;
    Some(format!(
        "{}{}{}",
        v.square_name(from),
        v.square_name(to),
        if promote { "+" } else { "" }
    ))
}

/// Fairy-Stockfish's FEN of a position: the SFEN board, the hands in brackets (one letter
/// per piece, sente's uppercase), then its side letter (`w` for sente, `b` for gote).
pub(crate) fn to_fsf_fen(pos: &Position) -> String {
    let sfen = pos.to_sfen();
    let f: Vec<&str> = sfen.split(' ').collect();
    let mut hand = String::new();
    let mut count = 0usize;
    if f.get(2).is_some_and(|h| *h != "-") {
        for c in f[2].chars() {
            if let Some(d) = c.to_digit(10) {
                count = count * 10 + d as usize;
            } else {
                for _ in 0..count.max(1) {
                    hand.push(c);
                }
                count = 0;
            }
        }
    }
    let side = if pos.side_to_move() == Color::Sente {
        "w"
    } else {
        "b"
    };
    format!("{}[{}] {} - - 0 1", f[0], hand, side)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsf_notation() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let pos = Position::start(v.clone());
        assert_eq!(to_fsf_fen(&pos), "rbsgk/4p/5/P4/KGSBR[] w - - 0 1");
        // Sente's pawn 5d (x 0, y 3) is a2; the rook 1e is e1.
        assert_eq!(fsf_to_usi(&v, "a2a3").as_deref(), Some("5d5c"));
        assert_eq!(fsf_to_usi(&v, "e1e5+").as_deref(), Some("1e1a+"));
        assert_eq!(fsf_to_usi(&v, "P@c3").as_deref(), Some("P*3c"));
        assert_eq!(fsf_to_usi(&v, "f1f2"), None);
        assert_eq!(fsf_to_usi(&v, "a2"), None);
        let mv = pos.parse_usi("5d5c").unwrap();
        assert_eq!(move_to_fsf(&v, mv), "a2a3");
        let s = Arc::new(Variant::builtin("shogi").unwrap());
        assert_eq!(fsf_to_usi(&s, "c3c4").as_deref(), Some("7g7f"));
        assert_eq!(fsf_to_usi(&s, "h8g7+").as_deref(), Some("2b3c+"));
        let mut p = Position::start(s.clone());
        p.play_usi("7g7f 3c3d 8h2b+ 3a2b").unwrap();
        assert_eq!(
            to_fsf_fen(&p),
            "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL[Bb] w - - 0 1"
        );
        let drop = p.parse_usi("B*5e").unwrap();
        assert_eq!(move_to_fsf(&s, drop), "B@e5");
    }
}
