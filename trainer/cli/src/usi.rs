//! `trainer usi`: a USI engine on a trained model (or, without one, on a uniform policy), so
//! that GUIs and tournament tools can play against it.
//!
//! The main thread reads commands from stdin; `go` runs the search on a worker thread, so that
//! `stop`, `quit` and `isready` are answered while it thinks. Every line written is flushed.
//!
//! Choices where the protocol leaves room:
//!
//! * **Score**: `score cp` is the logistic inverse used by shogi engines (win rate
//!   `1 / (1 + exp(-cp / 600))`): `cp = 600 * ln(s / (1 - s))` with `s = (1 + q) / 2` the
//!   expected score of the best move, `q` its mean value in [-1, 1] for the side to move
//!   (equivalently `1200 * atanh(q)`), `s` clamped to [1e-4, 1 - 1e-4] (|cp| <= 5526). A best
//!   move that mates at once is reported as `score mate 1`.
//! * **Depth**: `depth` is the mean depth (in plies below the root) of the leaves the search
//!   evaluated, rounded, at least 1; `seldepth` the deepest. The PV is the best move only (the
//!   search exposes root statistics, not the tree).
//! * **Budget**: `go nodes N` runs N simulations; a `go` without any limit runs `Simulations`;
//!   `movetime`, `btime/wtime`, `byoyomi` and `binc/winc` limit the search by time (`nodes`, if
//!   also given, caps it); `infinite` searches until `stop`. A time- or stop-limited search
//!   keeps at most [`MAX_TREE_SIMULATIONS`] simulations in its tree (then stops expanding).
//! * **Time management**: with `movetime T` the search stops at `T - 100 ms`. With a clock, the
//!   target is `remaining / 30 + increment + byoyomi`, never more than `remaining + byoyomi -
//!   100 ms` (with no time left: `byoyomi - 100 ms`), at least 10 ms. The clock is read between
//!   simulations. PUCT also stops early once the runner-up cannot catch the best move's visits
//!   in the time left (at the current speed).
//! * `bestmove resign` when the side to move has no legal move (after `info depth 0 score mate
//!   0`); a position already drawn by rule (repetition, ply limit) gets the network's first
//!   choice without search.
//! * `ponderhit` ends the search like `stop` (`USI_Ponder` is accepted and ignored); `go mate`
//!   answers `checkmate notimplemented`; `gameover` stops a running search.
//! * Errors (malformed commands, bad tokens, illegal moves, model loading) are reported as
//!   `info string error: <what>`; the engine keeps running and its state is unchanged.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use model::{check_encoding, load_model, parse_device, read_meta, ModelMeta, NetEvaluator};
use rules::{Color, Move, Position, Variant, VariantSpec};
use search::{Algorithm, Evaluator, Search, SearchConfig, SearchResult, UniformEvaluator};
use selfplay::Encoder;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most simulations a time- or stop-limited search adds to its tree (memory bound: a shogi
/// node with its edges takes a few KB).
pub const MAX_TREE_SIMULATIONS: u64 = 400_000;
/// Safety margin kept on the clock.
const MARGIN_MS: u64 = 100;
/// Fraction of the remaining time spent on one move (1 / this).
const TIME_DIVISOR: u64 = 30;
/// Shortest time search.
const MIN_THINK_MS: u64 = 10;
/// Interval between `info` lines during a long search.
const INFO_INTERVAL: Duration = Duration::from_millis(1000);
/// Scale of the cp <-> win-rate logistic.
const CP_SCALE: f64 = 600.0;
/// Default of the `Simulations` option.
const DEFAULT_SIMULATIONS: u32 = 200;
/// Upper bound of the `Simulations` option.
const MAX_SIMULATIONS_OPTION: u32 = 100_000_000;

/// A network (or the uniform stand-in) that can move to the search thread.
type Net = Box<dyn Evaluator + Send>;

/// Writes one line to stdout and flushes (errors, e.g. a closed pipe, are ignored).
fn send(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn send_error(what: &str) {
    send(&format!("info string error: {what}"));
}

/// `trainer usi [--model M] [--variant V]`: runs the engine until `quit` or end of input.
pub fn run(model: Option<&Path>, variant: Option<&str>) -> Result<()> {
    let mut engine = Engine::new(model, variant)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                send_error(&format!("reading input: {e}"));
                break;
            }
        }
        let line = String::from_utf8_lossy(&buf);
        if !engine.command(line.trim()) {
            return Ok(());
        }
    }
    // End of input: let a bounded search finish (its bestmove is still useful), stop an
    // infinite one.
    let infinite = engine.search.as_ref().is_some_and(|r| r.infinite);
    engine.finish_search(infinite);
    Ok(())
}

/// Engine options (`setoption`).
#[derive(Clone, Debug)]
struct Options {
    simulations: u32,
    threads: u32,
    device: String,
    algorithm: Algorithm,
}

/// A search running on the worker thread.
struct Running {
    handle: JoinHandle<Net>,
    stop: Arc<AtomicBool>,
    /// Set by the worker just before it prints `bestmove`.
    done: Arc<AtomicBool>,
    infinite: bool,
}

/// What `go` asked for.
#[derive(Clone, Debug, Default, PartialEq)]
struct GoParams {
    btime: Option<u64>,
    wtime: Option<u64>,
    byoyomi: Option<u64>,
    binc: Option<u64>,
    winc: Option<u64>,
    nodes: Option<u64>,
    movetime: Option<u64>,
    infinite: bool,
    ponder: bool,
    mate: bool,
}

/// Limits of one search, resolved from [`GoParams`] and the options.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Limits {
    /// Simulations to add at most.
    simulations: u64,
    /// Stop when this much time has passed since `go`.
    time: Option<Duration>,
    /// Search until `stop` (bestmove only after it).
    infinite: bool,
}

struct Engine {
    variant: Arc<Variant>,
    encoder: Arc<Encoder>,
    /// The model file and its sidecar (None: uniform evaluator).
    model: Option<(PathBuf, ModelMeta)>,
    /// The loaded evaluator (None until `isready`/`go`, and while a search holds it).
    net: Option<Net>,
    opts: Options,
    position: Position,
    search: Option<Running>,
}

impl Engine {
    fn new(model: Option<&Path>, variant: Option<&str>) -> Result<Engine> {
        let (variant, model) = match model {
            None => (load_variant(variant.unwrap_or("shogi"))?, None),
            Some(path) => {
                let meta = read_meta(path)
                    .with_context(|| format!("reading the sidecar of {}", path.display()))?;
                let v = Arc::new(
                    Variant::compile_named(
                        meta.variant_spec.clone(),
                        &format!("{} (sidecar)", path.display()),
                    )
                    .with_context(|| format!("compiling the variant of {}", path.display()))?,
                );
                if let Some(want) = variant {
                    let same = want == meta.variant
                        || want == v.name
                        || load_variant(want).is_ok_and(|w| w.name == meta.variant);
                    if !same {
                        bail!(
                            "--variant {want} does not match the model: {} is a {} model (the \
                             variant comes from the model's sidecar; omit --variant or give {})",
                            path.display(),
                            meta.variant,
                            meta.variant
                        );
                    }
                }
                let enc = Encoder::new(v.clone());
                check_encoding(&meta, &enc.spec(), path)?;
                (v, Some((path.to_path_buf(), meta)))
            }
        };
        Ok(Engine {
            encoder: Arc::new(Encoder::new(variant.clone())),
            position: Position::start(variant.clone()),
            variant,
            model,
            net: None,
            opts: Options {
                simulations: DEFAULT_SIMULATIONS,
                threads: 1,
                device: "auto".into(),
                algorithm: Algorithm::Gumbel,
            },
            search: None,
        })
    }

    /// Handles one command line; false on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return true;
        };
        self.reap();
        if matches!(cmd, "go" | "setoption") {
            // Not while searching: a bounded search is waited for (a GUI sends these after
            // the bestmove anyway); an infinite one needs `stop` first.
            self.finish_search(false);
        }
        match cmd {
            "usi" => self.cmd_usi(),
            "isready" => {
                if self.search.is_none() {
                    if let Err(e) = self.ensure_net() {
                        send_error(&format!("{e:#}"));
                    }
                }
                send("readyok");
            }
            "setoption" => {
                if self.search.is_some() {
                    send_error("setoption: not during an infinite search (send stop first)");
                } else if let Err(e) = self.cmd_setoption(args) {
                    send_error(&format!("setoption: {e:#}"));
                }
            }
            "usinewgame" => self.position = Position::start(self.variant.clone()),
            "position" => match self.parse_position(args) {
                Ok(p) => self.position = p,
                Err(e) => send_error(&format!("position: {e:#}")),
            },
            "go" => {
                if self.search.is_some() {
                    send_error("go: an infinite search is running (send stop first)");
                } else {
                    match parse_go(args) {
                        Ok(p) if p.mate => send("checkmate notimplemented"),
                        Ok(p) => self.cmd_go(&p, Instant::now()),
                        Err(e) => send_error(&format!("go: {e}")),
                    }
                }
            }
            "stop" | "ponderhit" => self.finish_search(true),
            "gameover" => {
                match args {
                    [r] if matches!(*r, "win" | "lose" | "draw") => {}
                    _ => send_error("gameover: expected win, lose or draw"),
                }
                self.finish_search(true);
            }
            "quit" => {
                self.finish_search(true);
                return false;
            }
            _ => send_error(&format!("unknown command {cmd:?}")),
        }
        true
    }

    fn cmd_usi(&self) {
        let what = match &self.model {
            Some((p, _)) => format!(
                "{}, {}",
                self.variant.name,
                p.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => format!("{}, no network", self.variant.name),
        };
        send(&format!(
            "id name trainer {} ({what})",
            env!("CARGO_PKG_VERSION")
        ));
        send("id author the shogi-variant trainer authors");
        let variants = self.variant_names();
        let mut line = format!(
            "option name USI_Variant type combo default {}",
            self.variant.name
        );
        for v in &variants {
            line.push_str(&format!(" var {v}"));
        }
        send(&line);
        send(&format!(
            "option name Simulations type spin default {} min 1 max {MAX_SIMULATIONS_OPTION}",
            self.opts.simulations
        ));
        send(&format!(
            "option name Threads type spin default {} min 1 max 256",
            self.opts.threads
        ));
        send(&format!(
            "option name Device type string default {}",
            self.opts.device
        ));
        send(&format!(
            "option name Algorithm type combo default {} var gumbel var puct",
            algorithm_name(self.opts.algorithm)
        ));
        send("option name USI_Hash type spin default 256 min 1 max 1048576");
        send("option name USI_Ponder type check default false");
        send("usiok");
    }

    /// The variants `USI_Variant` offers: the model's, or the built-ins plus the current one.
    fn variant_names(&self) -> Vec<String> {
        if self.model.is_some() {
            return vec![self.variant.name.clone()];
        }
        let mut names: Vec<String> = VariantSpec::builtin_names()
            .into_iter()
            .map(String::from)
            .collect();
        if !names.contains(&self.variant.name) {
            names.insert(0, self.variant.name.clone());
        }
        names
    }

    fn cmd_setoption(&mut self, args: &[&str]) -> Result<()> {
        if args.first() != Some(&"name") {
            bail!("expected `setoption name <id> [value <x>]`");
        }
        let rest = &args[1..];
        let (name, value) = match rest.iter().position(|&t| t == "value") {
            Some(i) => (rest[..i].join(" "), Some(rest[i + 1..].join(" "))),
            None => (rest.join(" "), None),
        };
        if name.is_empty() {
            bail!("missing option name");
        }
        let value = value.as_deref();
        let need = |v: Option<&str>| -> Result<String> {
            match v {
                Some(s) if !s.is_empty() => Ok(s.to_string()),
                _ => bail!("option {name} needs a value"),
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "usi_variant" => {
                let v = need(value)?;
                if let Some((_, meta)) = &self.model {
                    if v != meta.variant && v != self.variant.name {
                        bail!(
                            "USI_Variant {v}: the model plays {} only",
                            self.variant.name
                        );
                    }
                } else if v != self.variant.name {
                    let nv = load_variant(&v).with_context(|| format!("USI_Variant {v}"))?;
                    self.encoder = Arc::new(Encoder::new(nv.clone()));
                    self.position = Position::start(nv.clone());
                    self.variant = nv;
                    self.net = None;
                }
            }
            "simulations" => {
                self.opts.simulations = parse_spin(&need(value)?, 1, MAX_SIMULATIONS_OPTION)?
            }
            "threads" => {
                self.opts.threads = parse_spin(&need(value)?, 1, 256)?;
                if self.model.is_some() {
                    model::tch::set_num_threads(self.opts.threads as i32);
                }
            }
            "device" => {
                let d = need(value)?.to_ascii_lowercase();
                parse_device(&d).map_err(anyhow::Error::msg)?;
                if d != self.opts.device {
                    self.opts.device = d;
                    self.net = None;
                }
            }
            "algorithm" => {
                self.opts.algorithm = match need(value)?.to_ascii_lowercase().as_str() {
                    "gumbel" => Algorithm::Gumbel,
                    "puct" => Algorithm::Puct,
                    other => bail!("Algorithm {other:?}: expected gumbel or puct"),
                }
            }
            "usi_hash" => {
                parse_spin(&need(value)?, 0, u32::MAX)?;
            }
            "usi_ponder" => {
                let v = need(value)?;
                if v != "true" && v != "false" {
                    bail!("USI_Ponder {v:?}: expected true or false");
                }
            }
            _ => bail!("unknown option {name:?}"),
        }
        Ok(())
    }

    /// Loads the network (or sets up the uniform evaluator) if not loaded yet.
    fn ensure_net(&mut self) -> Result<()> {
        if self.net.is_some() {
            return Ok(());
        }
        let net: Net = match &self.model {
            None => Box::new(UniformEvaluator {
                input_len: self.encoder.input_len(),
                policy_len: self.encoder.policy_len(),
            }),
            Some((path, _)) => {
                let device = parse_device(&self.opts.device).map_err(anyhow::Error::msg)?;
                model::tch::set_num_threads(self.opts.threads as i32);
                let (vs, net, meta) = load_model(path, device)
                    .with_context(|| format!("loading {}", path.display()))?;
                check_encoding(&meta, &self.encoder.spec(), path)?;
                send(&format!(
                    "info string loaded {} ({} for {}) on {device:?}",
                    path.display(),
                    meta.model.name,
                    meta.variant
                ));
                Box::new(NetEvaluator::new(vs, net))
            }
        };
        self.net = Some(net);
        Ok(())
    }

    fn parse_position(&self, args: &[&str]) -> Result<Position> {
        let moves_at = args.iter().position(|&t| t == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &args[args.len()..]),
        };
        let mut pos = match setup.split_first() {
            Some((&"startpos", [])) => Position::start(self.variant.clone()),
            Some((&"startpos", extra)) => bail!("unexpected {:?} after startpos", extra[0]),
            Some((&"sfen", [])) => bail!("sfen: missing the SFEN fields"),
            Some((&"sfen", fields)) => {
                let sfen = fields.join(" ");
                Position::from_sfen(&self.variant, &sfen)
                    .with_context(|| format!("bad SFEN {sfen:?}"))?
            }
            Some((other, _)) => bail!("expected startpos or sfen, got {other:?}"),
            None => bail!("expected startpos or sfen"),
        };
        for (i, tok) in moves.iter().enumerate() {
            let mv = pos
                .parse_usi(tok)
                .with_context(|| format!("move {} {tok:?}", i + 1))?;
            pos.make_move(mv);
        }
        Ok(pos)
    }

    fn cmd_go(&mut self, p: &GoParams, started: Instant) {
        if let Err(e) = self.ensure_net() {
            send_error(&format!("go: {e:#}"));
            send("bestmove resign");
            return;
        }
        let net = self.net.take().expect("loaded");
        let limits = resolve_limits(p, self.opts.simulations, self.position.side_to_move());
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let job = Job {
            position: self.position.clone(),
            encoder: self.encoder.clone(),
            config: SearchConfig {
                algorithm: self.opts.algorithm,
                reuse_tree: false,
                ..SearchConfig::default()
            },
            base_simulations: self.opts.simulations.max(1),
            limits,
            started,
        };
        let (s, d) = (stop.clone(), done.clone());
        let spawned = std::thread::Builder::new()
            .name("usi-search".into())
            .spawn(move || search_thread(job, net, s, d));
        match spawned {
            Ok(handle) => {
                self.search = Some(Running {
                    handle,
                    stop,
                    done,
                    infinite: limits.infinite,
                })
            }
            Err(e) => {
                send_error(&format!("go: cannot start the search thread: {e}"));
                send("bestmove resign");
            }
        }
    }

    /// Joins a search whose worker has already printed its bestmove.
    fn reap(&mut self) {
        if self
            .search
            .as_ref()
            .is_some_and(|r| r.done.load(Ordering::Acquire))
        {
            self.join();
        }
    }

    /// Ends the running search, if any, and waits for its bestmove: `force` stops it now;
    /// otherwise a bounded search runs to its end and an infinite one is left running.
    fn finish_search(&mut self, force: bool) {
        if let Some(r) = &self.search {
            if force {
                r.stop.store(true, Ordering::Release);
            } else if r.infinite {
                return;
            }
            self.join();
        }
    }

    fn join(&mut self) {
        if let Some(r) = self.search.take() {
            match r.handle.join() {
                Ok(net) => self.net = Some(net),
                Err(_) => {
                    // The worker died before its bestmove: report it, reload the net lazily.
                    if !r.done.load(Ordering::Acquire) {
                        send_error("the search failed");
                        send("bestmove resign");
                    }
                }
            }
        }
    }
}

fn algorithm_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Gumbel => "gumbel",
        Algorithm::Puct => "puct",
    }
}

fn parse_spin(v: &str, min: u32, max: u32) -> Result<u32> {
    match v.parse::<u64>() {
        Ok(n) if n >= min as u64 && n <= max as u64 => Ok(n as u32),
        _ => bail!("{v:?}: expected an integer from {min} to {max}"),
    }
}

/// Parses the arguments of `go`.
fn parse_go(args: &[&str]) -> std::result::Result<GoParams, String> {
    let mut p = GoParams::default();
    let mut it = args.iter();
    while let Some(&tok) = it.next() {
        let mut value = |name: &str| -> std::result::Result<u64, String> {
            let v = it.next().ok_or_else(|| format!("{name}: missing value"))?;
            // Some GUIs send negative clock times when a player is over time: treat as 0.
            match v.parse::<i64>() {
                Ok(n) => Ok(n.max(0) as u64),
                Err(_) => Err(format!("{name}: bad value {v:?} (expected an integer)")),
            }
        };
        match tok {
            "btime" => p.btime = Some(value(tok)?),
            "wtime" => p.wtime = Some(value(tok)?),
            "byoyomi" => p.byoyomi = Some(value(tok)?),
            "binc" => p.binc = Some(value(tok)?),
            "winc" => p.winc = Some(value(tok)?),
            "movetime" => p.movetime = Some(value(tok)?),
            "nodes" => p.nodes = Some(value(tok)?),
            "infinite" => p.infinite = true,
            "ponder" => p.ponder = true,
            "mate" => {
                // `go mate <ms|infinite>`
                it.next();
                p.mate = true;
            }
            other => return Err(format!("unknown token {other:?}")),
        }
    }
    if p.nodes == Some(0) {
        return Err("nodes: must be at least 1".into());
    }
    Ok(p)
}

/// Turns `go` parameters into search limits for the side to move.
fn resolve_limits(p: &GoParams, default_simulations: u32, side: Color) -> Limits {
    let infinite = p.infinite || p.ponder;
    let (remaining, inc) = match side {
        Color::Sente => (p.btime, p.binc),
        Color::Gote => (p.wtime, p.winc),
    };
    let byoyomi = p.byoyomi.unwrap_or(0);
    let time_ms = if infinite {
        None
    } else if let Some(mt) = p.movetime {
        Some(mt.saturating_sub(MARGIN_MS).max(MIN_THINK_MS))
    } else if remaining.is_some() || p.byoyomi.is_some() || inc.is_some() {
        let remaining = remaining.unwrap_or(0);
        let inc = inc.unwrap_or(0);
        let target = remaining / TIME_DIVISOR + inc + byoyomi;
        let hard = (remaining + byoyomi).saturating_sub(MARGIN_MS);
        Some(target.min(hard).max(MIN_THINK_MS))
    } else {
        None
    };
    let simulations = match p.nodes {
        Some(n) => n,
        None if infinite || time_ms.is_some() => MAX_TREE_SIMULATIONS,
        None => default_simulations as u64,
    };
    Limits {
        simulations: simulations.min(u32::MAX as u64 - 1),
        time: time_ms.map(Duration::from_millis),
        infinite,
    }
}

/// Everything the worker needs for one search.
struct Job {
    position: Position,
    encoder: Arc<Encoder>,
    config: SearchConfig,
    /// Gumbel rounds under a time limit start at this many simulations, doubling.
    base_simulations: u32,
    limits: Limits,
    started: Instant,
}

fn search_thread(job: Job, mut net: Net, stop: Arc<AtomicBool>, done: Arc<AtomicBool>) -> Net {
    let best = match think(&job, net.as_mut(), &stop) {
        Ok(b) => b,
        Err(e) => {
            send_error(&format!("search: {e:#}"));
            "resign".to_string()
        }
    };
    if job.limits.infinite {
        // USI: in infinite mode the bestmove waits for `stop`.
        while !stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    done.store(true, Ordering::Release);
    send(&format!("bestmove {best}"));
    net
}

/// Evaluates `pos` and writes the policy logits of `moves` into `logits`; returns the WDL.
fn evaluate(
    net: &mut dyn Evaluator,
    enc: &Encoder,
    pos: &Position,
    moves: &[Move],
    input: &mut Vec<f32>,
    logits: &mut Vec<f32>,
) -> Result<[f32; 3]> {
    input.resize(enc.input_len(), 0.0);
    enc.encode(pos, input);
    let out = net.evaluate(input, 1)?;
    let e = out
        .into_iter()
        .next()
        .context("the evaluator returned nothing")?;
    logits.clear();
    logits.extend(
        moves
            .iter()
            .map(|&mv| e.policy_logits[enc.move_to_index(pos, mv)]),
    );
    Ok(e.wdl)
}

/// Leaf depth statistics (plies below the root).
#[derive(Default)]
struct DepthStats {
    sum: u64,
    count: u64,
    max: u32,
}

impl DepthStats {
    fn add(&mut self, d: u32) {
        self.sum += d as u64;
        self.count += 1;
        self.max = self.max.max(d);
    }

    fn depth(&self) -> u32 {
        if self.count == 0 {
            1
        } else {
            ((self.sum as f64 / self.count as f64).round() as u32).max(1)
        }
    }
}

/// Runs one search and prints its info lines; returns the bestmove text.
fn think(job: &Job, net: &mut dyn Evaluator, stop: &AtomicBool) -> Result<String> {
    let pos = &job.position;
    let enc = &*job.encoder;
    let legal = pos.legal_moves();
    if legal.is_empty() {
        send("info depth 0 score mate 0");
        return Ok("resign".into());
    }
    let (mut input, mut logits) = (Vec::new(), Vec::new());
    if let Some(o) = pos.outcome() {
        // Game over by rule with moves left (repetition, ply limit): no search is possible;
        // play the network's first choice.
        let wdl = evaluate(net, enc, pos, &legal, &mut input, &mut logits)?;
        let i = (0..legal.len())
            .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
            .expect("moves");
        send(&format!(
            "info string the game is over here ({:?})",
            o.reason
        ));
        send(&format!(
            "info depth 1 nodes 1 nps 0 score cp {} pv {}",
            cp_of(wdl[0] - wdl[2]),
            pos.move_to_usi(legal[i])
        ));
        return Ok(pos.move_to_usi(legal[i]));
    }
    let limits = job.limits;
    let root_ply = pos.ply();
    let mut search = Search::new(job.config.clone(), pos.clone(), 0);
    let mut depth = DepthStats::default();
    let mut last_info = Instant::now();
    let mut last_early_check = Instant::now();
    let sims = |s: &Search| s.root_visits().saturating_sub(1) as u64;
    let chunked =
        job.config.algorithm == Algorithm::Gumbel && (limits.infinite || limits.time.is_some());
    let mut round = 0u32;
    'search: loop {
        let left = limits.simulations.saturating_sub(sims(&search));
        if left == 0 {
            break;
        }
        // Gumbel's sequential halving needs a budget up front: under a time limit it runs in
        // rounds of doubling size over the same tree.
        let budget = if chunked {
            left.min((job.base_simulations as u64) << round.min(20))
        } else {
            left
        };
        search.start(budget as u32, false);
        while !search.finished() {
            if search.root_visits() > 0 {
                if stop.load(Ordering::Relaxed) {
                    break 'search;
                }
                let elapsed = job.started.elapsed();
                if limits.time.is_some_and(|t| elapsed >= t) {
                    break 'search;
                }
                if last_info.elapsed() >= INFO_INTERVAL {
                    last_info = Instant::now();
                    send(&info_line(
                        pos,
                        &search.result(),
                        sims(&search),
                        job.started,
                        &depth,
                    ));
                }
                if job.config.algorithm == Algorithm::Puct
                    && !limits.infinite
                    && last_early_check.elapsed() >= Duration::from_millis(20)
                {
                    last_early_check = Instant::now();
                    if decided(&search.result(), sims(&search), elapsed, limits) {
                        break 'search;
                    }
                }
            }
            if search.select() {
                let leaf = search.leaf_position();
                let d = (leaf.ply() - root_ply) as u32;
                if d > 0 {
                    depth.add(d);
                }
                let wdl = evaluate(net, enc, leaf, search.leaf_moves(), &mut input, &mut logits)?;
                search.expand(&logits, wdl);
            }
        }
        if legal.len() == 1 || !chunked {
            break;
        }
        round += 1;
    }
    let result = search.result();
    send(&info_line(pos, &result, sims(&search), job.started, &depth));
    Ok(pos.move_to_usi(result.best))
}

/// PUCT: true when the runner-up cannot reach the best move's visits in the time left.
fn decided(r: &SearchResult, done: u64, elapsed: Duration, limits: Limits) -> bool {
    let Some(t) = limits.time else {
        return false;
    };
    if r.visits.len() < 2 || done < 100 {
        return false;
    }
    let mut v = r.visits.clone();
    v.sort_unstable_by(|a, b| b.cmp(a));
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
    let left_time = t.saturating_sub(elapsed).as_secs_f64();
    let left = (rate * left_time).min(limits.simulations.saturating_sub(done) as f64);
    (v[0] - v[1]) as f64 > left
}

/// Centipawns of a value in [-1, 1]: `600 * ln(s / (1 - s))`, `s = (1 + q) / 2`.
fn cp_of(q: f32) -> i32 {
    let s = ((1.0 + q as f64) / 2.0).clamp(1e-4, 1.0 - 1e-4);
    (CP_SCALE * (s / (1.0 - s)).ln()).round() as i32
}

/// The `info` line of a search result.
fn info_line(
    pos: &Position,
    r: &SearchResult,
    nodes: u64,
    started: Instant,
    depth: &DepthStats,
) -> String {
    let ms = started.elapsed().as_millis() as u64;
    let nps = nodes * 1000 / ms.max(1);
    let i = r.moves.iter().position(|&m| m == r.best).unwrap_or(0);
    let mut after = pos.clone();
    after.make_move(r.best);
    let mates = after
        .outcome()
        .is_some_and(|o| o.winner == Some(pos.side_to_move()));
    let score = if mates {
        "mate 1".to_string()
    } else {
        format!("cp {}", cp_of(r.q.get(i).copied().unwrap_or(r.root_value)))
    };
    format!(
        "info depth {} seldepth {} nodes {nodes} nps {nps} time {ms} score {score} pv {}",
        depth.depth(),
        depth.max.max(1),
        pos.move_to_usi(r.best)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp_is_the_logistic_inverse() {
        assert_eq!(cp_of(0.0), 0);
        // s = 0.75 -> 600 ln 3
        assert_eq!(cp_of(0.5), (600.0 * 3f64.ln()).round() as i32);
        assert_eq!(cp_of(-0.5), -cp_of(0.5));
        assert!(cp_of(1.0) > 5000 && cp_of(1.0) < 6000);
    }

    #[test]
    fn time_limits() {
        let go = |s: &str| parse_go(&s.split_whitespace().collect::<Vec<_>>()).unwrap();
        let l = resolve_limits(&go("byoyomi 300"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(200)));
        let l = resolve_limits(&go("btime 0 wtime 0 byoyomi 1000"), 200, Color::Gote);
        assert_eq!(l.time, Some(Duration::from_millis(900)));
        let l = resolve_limits(
            &go("btime 60000 wtime 3000 binc 1000 winc 1000"),
            200,
            Color::Sente,
        );
        assert_eq!(l.time, Some(Duration::from_millis(3000)));
        let l = resolve_limits(&go("btime 50 wtime 50"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(MIN_THINK_MS)));
        let l = resolve_limits(&go("movetime 1000"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(900)));
        let l = resolve_limits(&go(""), 200, Color::Sente);
        assert_eq!((l.simulations, l.time, l.infinite), (200, None, false));
        let l = resolve_limits(&go("nodes 50"), 200, Color::Sente);
        assert_eq!((l.simulations, l.time), (50, None));
        let l = resolve_limits(&go("infinite"), 200, Color::Sente);
        assert!(l.infinite && l.time.is_none());
        assert!(parse_go(&["nodes", "abc"]).is_err());
        assert!(parse_go(&["nodes"]).is_err());
        assert!(parse_go(&["depth", "3"]).is_err());
        assert_eq!(go("btime -20").btime, Some(0));
    }
}
