//! External engines driven over USI or UCI: a child process (`sh -c CMD`) on stdin/stdout.

use crate::error::Failure;
use crate::fsf::{fsf_to_usi_at, fsf_variant_name, move_to_fsf_at, to_fsf_fen};
use crate::tally::Score;
use crate::ParseProtocolError;
use rules::{Move, Position, Variant};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::str::FromStr;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
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

/// The longest line kept from an engine's output, in bytes (64 KiB). The rest of a longer
/// line is read and dropped as it comes, so an engine cannot make us hold more; the line is
/// noted (see [`ExternalEngine::output_notes`]).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How many odd output lines are noted one by one; later ones are only counted.
const MAX_NOTES: usize = 8;

/// Output lines of an engine that were not UTF-8 or over [`MAX_LINE_BYTES`].
#[derive(Debug, Default)]
struct OutputNotes {
    /// Such lines, over all starts.
    count: u64,
    /// The first [`MAX_NOTES`] of them, described.
    first: Vec<String>,
}

/// Reads one line (up to `\n` or the end of the input) into `buf`, which is cleared first and
/// gets at most `max` bytes of it (without the `\n`); the rest of a longer line is consumed
/// and dropped. Returns the full length of the line in bytes, or None at the end of the input.
fn read_bounded_line(
    r: &mut impl BufRead,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<usize>> {
    buf.clear();
    let mut len = 0usize;
    let mut any = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(len));
        }
        any = true;
        let (n, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        let keep = n.min(max.saturating_sub(buf.len()));
        buf.extend_from_slice(&chunk[..keep]);
        len = len.saturating_add(n);
        r.consume(n + end as usize);
        if end {
            return Ok(Some(len));
        }
    }
}

/// Reads the engine's output line by line into `tx` until it ends (or the receiver is gone):
/// each line bounded by [`MAX_LINE_BYTES`] and decoded lossily (bytes that are not UTF-8
/// become U+FFFD), so odd output never ends the engine's game; such lines go to `notes`.
fn read_output(
    out: impl std::io::Read,
    tx: std::sync::mpsc::Sender<String>,
    notes: &Mutex<OutputNotes>,
    start: u32,
) {
    let mut r = BufReader::new(out);
    let mut buf = Vec::new();
    let mut number = 0u64;
    while let Ok(Some(len)) = read_bounded_line(&mut r, MAX_LINE_BYTES, &mut buf) {
        number += 1;
        let cut = len > buf.len();
        // A cut may split the last character: that alone is not bad UTF-8.
        let bad_utf8 = match std::str::from_utf8(&buf) {
            Ok(_) => false,
            Err(e) => !(cut && e.error_len().is_none()),
        };
        let text = String::from_utf8_lossy(&buf);
        if cut || bad_utf8 {
            let mut why = Vec::new();
            if bad_utf8 {
                why.push("is not UTF-8 (bytes replaced by U+FFFD)".to_string());
            }
            if cut {
                why.push(format!("has {len} bytes, cut to {MAX_LINE_BYTES}"));
            }
            let preview: String = text.chars().take(60).collect();
            let mut n = notes.lock().unwrap_or_else(|e| e.into_inner());
            n.count += 1;
            if n.first.len() < MAX_NOTES {
                n.first.push(format!(
                    "output line {number} (start {start}) {}: {preview:?}",
                    why.join(" and ")
                ));
            }
        }
        if tx.send(text.into_owned()).is_err() {
            break;
        }
    }
}

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

/// The last `score` an engine gave before its `bestmove`, from the side to move's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineScore {
    /// `score cp N`: N centipawns.
    Cp(i32),
    /// `score mate N`: the side to move mates in N plies (USI) or moves (UCI) when N > 0,
    /// is mated when N <= 0 (USI's bare `+` and `-` read as 1 and -1).
    Mate(i32),
}

/// The score of an `info` line, if it has one (`score cp N` or `score mate N`; a
/// `lowerbound`/`upperbound` score counts as well: the engine's last word before `bestmove`).
pub fn info_score(line: &str) -> Option<EngineScore> {
    let mut t = line.split_whitespace();
    if t.next() != Some("info") {
        return None;
    }
    // `string` takes the rest of the line (free text).
    t.by_ref()
        .find(|&w| w == "score" || w == "string")
        .filter(|&w| w == "score")?;
    match (t.next()?, t.next()?) {
        ("cp", n) => n.parse().ok().map(EngineScore::Cp),
        ("mate", "+") => Some(EngineScore::Mate(1)),
        ("mate", "-") => Some(EngineScore::Mate(-1)),
        ("mate", n) => n.parse().ok().map(EngineScore::Mate),
        _ => None,
    }
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
    /// Odd output lines (shared with the reader thread).
    notes: Arc<Mutex<OutputNotes>>,
}

impl ExternalEngine {
    /// An engine started (lazily) as `sh -c CMD`, speaking `protocol`, given `options` by
    /// `setoption` after the handshake; `USI_Variant`/`UCI_Variant` is set to `variant` (for UCI,
    /// Fairy-Stockfish's name of it: `kyotoshogi`) when the engine offers it and `options` do
    /// not name it.
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
            notes: Arc::default(),
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

    /// The engine's output lines that were not UTF-8 or longer than [`MAX_LINE_BYTES`] (read
    /// lossily or cut, and played on), over all its starts: the first few described, then a
    /// count of the rest. Empty when all its output was well formed.
    pub fn output_notes(&self) -> Vec<String> {
        let n = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = n.first.clone();
        let more = n.count - n.first.len() as u64;
        if more > 0 {
            out.push(format!("{more} more such output lines"));
        }
        out
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
        let (notes, start) = (self.notes.clone(), self.starts);
        std::thread::spawn(move || read_output(stdout, tx, &notes, start));
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
            let name = match self.protocol {
                Protocol::Usi => self.variant.name.clone(),
                Protocol::Uci => fsf_variant_name(&self.variant).to_string(),
            };
            options.insert(0, (variant_option.to_string(), name));
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
        self.go_scored(start, moves, go, timeout).map(|(r, _)| r)
    }

    /// As [`ExternalEngine::go`], with the last score the engine gave before its answer (None
    /// when it gave none).
    pub fn go_scored(
        &mut self,
        start: &Position,
        moves: &[Move],
        go: &str,
        timeout: Duration,
    ) -> Result<(Reply, Option<EngineScore>), Failure> {
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
    ) -> Result<(Reply, Option<EngineScore>), Failure> {
        self.ensure_started()?;
        let v = self.variant.clone();
        let mut line = match self.protocol {
            Protocol::Usi => format!("position sfen {}", start.to_sfen()),
            Protocol::Uci => format!("position fen {}", to_fsf_fen(start)),
        };
        // Fairy-Stockfish's moves depend on the position (a flipping piece's turn is written).
        let mut pos = start.clone();
        if !moves.is_empty() {
            line.push_str(" moves");
            for &mv in moves {
                line.push(' ');
                match self.protocol {
                    Protocol::Usi => line.push_str(&v.move_to_usi(mv)),
                    Protocol::Uci => line.push_str(&move_to_fsf_at(&pos, mv)),
                }
                pos.make_move(mv);
            }
        }
        self.send(&line)?;
        self.send(&format!("go {go}"))?;
        let mut score = None;
        let token = self.read_until(timeout, "bestmove", |l| {
            score = info_score(l).or(score);
            l.strip_prefix("bestmove")
                .map(|rest| rest.split_whitespace().next().unwrap_or("").to_string())
        })?;
        let reply = match (self.protocol, token.as_str()) {
            (_, "") => Err(Failure::Malformed("`bestmove` without a move".into())),
            (_, "resign") | (Protocol::Uci, "(none)" | "0000") => Ok(Reply::Resign),
            (Protocol::Usi, "win") => Ok(Reply::Win),
            (Protocol::Usi, t) => Ok(Reply::Move(t.to_string())),
            (Protocol::Uci, t) => fsf_to_usi_at(&pos, t)
                .map(Reply::Move)
                .ok_or_else(|| Failure::Malformed(format!("bestmove {t:?} is not a move"))),
        }?;
        Ok((reply, score))
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

    /// Ends the process the polite way: `quit`, up to 500 ms for it to exit, then
    /// [`kill`](Self::kill). Killing at once would kill only the `sh` that runs the command
    /// and leave the engine to be reaped by whichever process adopts it. The next request
    /// starts a fresh process.
    pub fn quit(&mut self) {
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

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        self.quit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn info_lines_give_their_score() {
        let cases = [
            (
                "info depth 12 seldepth 14 score cp -35 nodes 100 pv 7g7f",
                Some(EngineScore::Cp(-35)),
            ),
            (
                "info depth 9 score cp 120 lowerbound nodes 5",
                Some(EngineScore::Cp(120)),
            ),
            (
                "info depth 3 score mate 5 pv a b c",
                Some(EngineScore::Mate(5)),
            ),
            ("info score mate -2", Some(EngineScore::Mate(-2))),
            ("info depth 1 score mate +", Some(EngineScore::Mate(1))),
            ("info depth 1 score mate -", Some(EngineScore::Mate(-1))),
            ("info string score cp 5", None),
            ("info depth 4 nodes 100", None),
            ("info depth 4 score cp x", None),
            ("info depth 4 score", None),
            ("bestmove 7g7f", None),
        ];
        for (line, want) in cases {
            assert_eq!(info_score(line), want, "{line}");
        }
    }

    #[test]
    fn lines_are_bounded_and_the_rest_dropped() {
        let mut input = b"short\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100_000));
        input.extend(b"\nnext\r\n\ntail");
        // A small buffer: lines come in many chunks.
        let mut r = BufReader::with_capacity(7, Cursor::new(input));
        let mut buf = Vec::new();
        let mut read = |r: &mut BufReader<Cursor<Vec<u8>>>| {
            read_bounded_line(r, 1000, &mut buf)
                .unwrap()
                .map(|n| (n, String::from_utf8(buf.clone()).unwrap()))
        };
        assert_eq!(read(&mut r), Some((5, "short".into())));
        assert_eq!(read(&mut r), Some((100_000, "x".repeat(1000))));
        assert_eq!(read(&mut r), Some((5, "next\r".into())));
        assert_eq!(read(&mut r), Some((0, String::new())));
        assert_eq!(read(&mut r), Some((4, "tail".into())));
        assert_eq!(read(&mut r), None);
    }

    /// A USI engine (sh) that prints a line that is not UTF-8 and a 1 MB line before each
    /// answer: its moves are still read, and the odd lines noted.
    #[test]
    fn odd_output_lines_do_not_end_the_game() {
        let cmd = "while read l; do case \"$l\" in \
            usi) echo 'id name fake'; printf 'id author \\377\\376\\n'; echo usiok;; \
            isready) echo readyok;; \
            go*) head -c 1000000 /dev/zero | tr '\\000' x; echo; \
                 printf 'info string \\351t\\351\\n'; echo 'bestmove 5d5c';; \
            quit) exit 0;; esac; done";
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut e = ExternalEngine::new(cmd, Protocol::Usi, Vec::new(), v.clone());
        e.new_game().unwrap();
        assert_eq!(e.id_name(), Some("fake"));
        let start = Position::start(v);
        for _ in 0..2 {
            let r = e.go(&start, &[], "btime 0 wtime 0", Duration::from_secs(20));
            assert_eq!(r, Ok(Reply::Move("5d5c".into())));
        }
        assert_eq!(e.starts(), 1);
        let notes = e.output_notes();
        assert_eq!(notes.len(), 5, "{notes:?}");
        assert!(notes[0].contains("not UTF-8"), "{notes:?}");
        assert!(notes[0].contains("\u{FFFD}"), "{notes:?}");
        assert!(
            notes[1].contains("has 1000000 bytes, cut to 65536"),
            "{notes:?}"
        );
        assert!(
            notes[2].contains("info string \u{FFFD}t\u{FFFD}"),
            "{notes:?}"
        );
    }

    /// More odd lines than are described: the rest are counted.
    #[test]
    fn odd_lines_beyond_the_first_are_counted() {
        let notes = Mutex::new(OutputNotes::default());
        let (tx, rx) = channel();
        let input: Vec<u8> = b"a\xffb\n".repeat(MAX_NOTES + 3);
        read_output(Cursor::new(input), tx, &notes, 1);
        let lines: Vec<String> = rx.iter().collect();
        assert_eq!(lines.len(), MAX_NOTES + 3);
        assert!(lines.iter().all(|l| l == "a\u{FFFD}b"), "{lines:?}");
        let n = notes.into_inner().unwrap();
        assert_eq!((n.count, n.first.len()), (MAX_NOTES as u64 + 3, MAX_NOTES));
        // A cut through a character alone is not bad UTF-8.
        let notes = Mutex::new(OutputNotes::default());
        let (tx, rx) = channel();
        // "a" then two-byte characters: the cut falls inside one.
        let input = format!("a{}", "é".repeat(MAX_LINE_BYTES)).into_bytes();
        read_output(Cursor::new(input), tx, &notes, 1);
        assert_eq!(rx.iter().count(), 1);
        let n = notes.into_inner().unwrap();
        assert_eq!(n.first.len(), 1);
        assert!(!n.first[0].contains("UTF-8"), "{:?}", n.first);
    }
}
