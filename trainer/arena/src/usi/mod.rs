//! The USI engine behind `trainer usi`: our search on a trained model (or, without one, on a
//! uniform policy), so that GUIs and tournament tools can play against it.
//!
//! [`UsiEngine::handle`] takes one command line; `go` runs the search on a worker thread, so
//! that `stop`, `quit` and `isready` are answered while it thinks. Replies go to the output
//! function given to [`UsiEngine::new`], one line per call, from either thread.
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
//! * **Tree reuse** (`ReuseTree`, default off: at 100 ms a move in minishogi it measured no
//!   gain, BENCHMARKS.md): after a search the engine keeps its tree; when the next `go` is for the same game at most four plies on
//!   (the GUI's position after our move and the reply), the search starts on the subtree
//!   there. Budgets (`nodes`, `Simulations`) and the `nodes` of `info` count the simulations
//!   this search adds, not the kept ones. `usinewgame` and `setoption` drop the tree.
//! * **Memory** (`USI_Hash`, MiB): a search stops growing its tree once the tree's nodes and
//!   edges take more than half of `USI_Hash`; their buffers grow by doubling, so they never
//!   reserve more than `USI_Hash`. A bounded search then answers; an infinite or pondering
//!   one waits for `stop` / `ponderhit`.
//! * **Time management**: with `movetime T` the search stops at `T - 2 ms`. With a clock, the
//!   target is `remaining / 30 + increment + byoyomi`, never more than `remaining + byoyomi -
//!   100 ms` (with no time left: `byoyomi - 100 ms`), at least 10 ms. The clock is read between
//!   simulations. PUCT also stops early once the runner-up cannot catch the best move's visits
//!   in the time left (at the current speed).
//! * `bestmove resign` when the side to move has no legal move (after `info depth 0 score mate
//!   0`); a position already drawn by rule (repetition, ply limit) gets the network's first
//!   choice without search.
//! * **Pondering**: `go ponder ...` searches the position given (the GUI has already played the
//!   expected reply into it) without a time limit and writes no bestmove until `ponderhit` or
//!   `stop`. `stop` answers at once (the GUI discards that bestmove). `ponderhit` keeps the
//!   tree and puts the search on the clock given with `go ponder`, counted from the ponderhit:
//!   the target of a plain `go` less the time pondered, which is deducted from the share of
//!   the main time and increment (`remaining / 30 + increment`) but not from the byoyomi
//!   (unused byoyomi is lost) nor from `movetime`; at least 10 ms, and at most the hard limit
//!   `remaining + byoyomi - 100 ms` after the ponderhit. Without a clock the node budget
//!   (`nodes`, `Simulations`) applies after the ponderhit (usually already spent: an answer at
//!   once). A ponder search whose tree filled up answers at the ponderhit.
//! * `USI_Ponder` on: `bestmove X ponder Y` names the expected reply Y, the most visited move
//!   below X (ties and unvisited moves: the network's prior), when the search evaluated the
//!   position after X. `ponderhit` without a pondering search is reported and ignored.
//! * `go mate` answers `checkmate notimplemented`; `gameover` stops a running search.
//! * Errors (malformed commands, bad tokens, illegal moves, model loading) are reported as
//!   `info string error: <what>`; the engine keeps running and its state is unchanged.

use crate::error::ArenaError;
use crate::network::{ModelInfo, NetworkOpener};
use crate::opening::parse_game_line;
use crate::variant::load_variant;
use encoding::{Device, Encoder};
use go::{parse_go, resolve_limits, GoParams};
use options::{
    Options, DEFAULT_C_PUCT, DEFAULT_FPU_REDUCTION, DEFAULT_HASH_MIB, DEFAULT_LCB_STDEVS,
    DEFAULT_MATE_PLIES, DEFAULT_MINIBATCH, DEFAULT_NN_CACHE, DEFAULT_POLICY_TEMPERATURE,
    DEFAULT_ROOT_MATE_PLIES, DEFAULT_SIMULATIONS, DEFAULT_SOLVER,
};
use rules::{Position, Variant};
use search::{Algorithm, EvalCache, Evaluator, Search, UniformEvaluator};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;
use think::{reuse, search_thread, Control, Job};

mod go;
mod options;
mod think;

pub use go::MAX_TREE_SIMULATIONS;

/// A network (or the uniform stand-in) that can move to the search thread.
/// The loaded network and its answers by position (`NNCacheSize`), which live and die with it.
pub(crate) struct Net {
    ev: Box<dyn Evaluator + Send>,
    cache: EvalCache,
}

/// Where the engine's lines go (shared with the search thread).
#[derive(Clone)]
pub(crate) struct Out(Arc<dyn Fn(&str) + Send + Sync>);

impl Out {
    /// Writes one line.
    pub(crate) fn send(&self, line: &str) {
        (self.0)(line)
    }

    /// Reports an error as `info string error: <what>`.
    pub(crate) fn error(&self, what: &str) {
        self.send(&format!("info string error: {what}"));
    }
}

/// A search running on the worker thread.
struct Running {
    handle: JoinHandle<(Net, Option<Search>)>,
    control: Arc<Control>,
    /// Set by the worker just before it prints `bestmove`.
    done: Arc<AtomicBool>,
    infinite: bool,
}

impl Running {
    /// Whether only `stop` (or `ponderhit`) ends it: an infinite or still pondering search.
    fn unbounded(&self) -> bool {
        self.infinite || self.control.pondering.load(Ordering::Acquire)
    }
}

/// The USI engine: reads commands with [`UsiEngine::handle`], writes its replies to the
/// output function.
pub struct UsiEngine {
    variant: Arc<Variant>,
    encoder: Arc<Encoder>,
    /// The model file and its sidecar (None: uniform evaluator).
    model: Option<(PathBuf, ModelInfo)>,
    /// Opens the model and checks the `Device` option.
    opener: Arc<dyn NetworkOpener>,
    /// The loaded evaluator (None until `isready`/`go`, and while a search holds it).
    net: Option<Net>,
    opts: Options,
    position: Position,
    /// Why the last `position` was rejected (cleared by a valid one).
    position_error: Option<String>,
    search: Option<Running>,
    /// The last search's tree, for the next `go` of the same game (`ReuseTree`).
    kept: Option<Search>,
    out: Out,
    /// Sets the number of threads of the network's backend (`Threads` option).
    set_threads: Option<fn(u32)>,
}

impl UsiEngine {
    /// An engine on the model at `model` (its variant comes from the sidecar; `variant`, if
    /// given, must name the same) or, without one, on a uniform policy for `variant` (default
    /// shogi). The model itself is loaded at `isready` or the first `go`, by `opener`, which
    /// also checks the `Device` option. `out` receives each line the engine writes (without
    /// the newline), from the caller's thread or the search thread. Errors: unknown variants,
    /// unreadable sidecars, a model of another variant.
    pub fn new(
        model: Option<&Path>,
        variant: Option<&str>,
        opener: Arc<dyn NetworkOpener>,
        out: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<UsiEngine, ArenaError> {
        let (variant, model, encoder) = match model {
            None => {
                let v = load_variant(variant.unwrap_or("shogi"))?;
                (v.clone(), None, Encoder::new(v))
            }
            Some(path) => {
                let (v, meta, enc) = model_variant(path, variant, &*opener)?;
                (v, Some((path.to_path_buf(), meta)), enc)
            }
        };
        Ok(UsiEngine {
            opener,
            out: Out(Arc::new(out)),
            set_threads: None,
            encoder: Arc::new(encoder),
            position: Position::start(variant.clone()),
            position_error: None,
            variant,
            model,
            net: None,
            opts: Options {
                simulations: DEFAULT_SIMULATIONS,
                threads: 1,
                device: Device::Auto,
                algorithm: Algorithm::Puct,
                hash_mib: DEFAULT_HASH_MIB,
                ponder: false,
                minibatch: DEFAULT_MINIBATCH,
                reuse_tree: false,
                mate_plies: DEFAULT_MATE_PLIES,
                nn_cache: DEFAULT_NN_CACHE,
                c_puct: DEFAULT_C_PUCT,
                fpu_reduction: DEFAULT_FPU_REDUCTION,
                policy_temperature: DEFAULT_POLICY_TEMPERATURE,
                lcb_stdevs: DEFAULT_LCB_STDEVS,
                solver: DEFAULT_SOLVER,
                root_mate_plies: DEFAULT_ROOT_MATE_PLIES,
            },
            search: None,
            kept: None,
        })
    }

    /// Lets the `Threads` option set the number of threads of the network's backend (it is
    /// applied when a model is used: at once and before loading it).
    pub fn with_thread_control(mut self, set_threads: fn(u32)) -> UsiEngine {
        self.set_threads = Some(set_threads);
        self
    }

    /// Reads commands from `input` until `quit` or the end of input; at the end of input a
    /// bounded search is finished (its bestmove is still useful) and an infinite one stopped.
    pub fn run(&mut self, input: &mut dyn BufRead) {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    self.out.error(&format!("reading input: {e}"));
                    break;
                }
            }
            let line = String::from_utf8_lossy(&buf);
            if !self.handle(line.trim()) {
                return;
            }
        }
        self.finish();
    }

    /// What to do at the end of input: let a bounded search finish, stop an infinite or
    /// pondering one.
    pub fn finish(&mut self) {
        let unbounded = self.search.as_ref().is_some_and(Running::unbounded);
        self.finish_search(unbounded);
    }

    /// Waits for a bounded search to write its bestmove (an infinite or pondering one needs
    /// `stop`, or `ponderhit`).
    pub fn wait(&mut self) {
        self.finish_search(false);
    }

    /// Handles one command line (replies go to the output); false on `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return true;
        };
        self.reap();
        if matches!(cmd, "go" | "setoption") {
            // Not while searching: a bounded search is waited for (a GUI sends these after
            // the bestmove anyway); an infinite or pondering one needs `stop` first.
            self.finish_search(false);
        }
        match cmd {
            "usi" => self.cmd_usi(),
            "isready" => {
                if self.search.is_none() {
                    if let Err(e) = self.ensure_net() {
                        self.out.error(&e.to_string());
                    }
                }
                self.out.send("readyok");
            }
            "setoption" => {
                if self.search.is_some() {
                    self.out.error(
                        "setoption: not during an infinite or pondering search (send stop first)",
                    );
                } else {
                    // An option may change the search or the network: the next one starts afresh.
                    self.kept = None;
                    if let Err(e) = self.cmd_setoption(args) {
                        self.out.error(&format!("setoption: {e}"));
                    }
                }
            }
            "usinewgame" => {
                self.kept = None;
                self.position = Position::start(self.variant.clone());
                self.position_error = None;
            }
            "position" => self.cmd_position(args),
            "go" => self.on_go(args),
            "stop" => self.finish_search(true),
            "ponderhit" => {
                // The search goes on, now on its clock; its bestmove comes when time is up.
                if !self.search.as_ref().is_some_and(|r| r.control.ponderhit()) {
                    self.out
                        .error("ponderhit: no search is pondering (ignored)");
                }
            }
            "gameover" => {
                match args {
                    [r] if matches!(*r, "win" | "lose" | "draw") => {}
                    _ => self.out.error("gameover: expected win, lose or draw"),
                }
                self.finish_search(true);
            }
            "quit" => {
                self.finish_search(true);
                return false;
            }
            _ => self.out.error(&format!("unknown command {cmd:?}")),
        }
        true
    }

    /// `position`: sets the position, or remembers why it was rejected.
    fn cmd_position(&mut self, args: &[&str]) {
        match self.parse_position(args) {
            Ok(p) => {
                self.position = p;
                self.position_error = None;
            }
            Err(e) => {
                // A later `go` must not search the previous position.
                self.out.error(&format!("position: {e}"));
                self.position_error = Some(e.to_string());
            }
        }
    }

    /// `go`: starts a search, unless one is running or the position was rejected.
    fn on_go(&mut self, args: &[&str]) {
        if self.search.is_some() {
            self.out
                .error("go: an infinite or pondering search is running (send stop first)");
            return;
        }
        let started = Instant::now();
        let (p, warnings) = parse_go(args);
        for w in warnings {
            self.out.error(&format!("go: {w}"));
        }
        if let Some(e) = &self.position_error {
            let e = format!("go: no valid position (the last one was rejected: {e})");
            self.out.error(&e);
            self.out.send("bestmove resign");
        } else if p.mate {
            self.out.send("checkmate notimplemented");
        } else {
            self.cmd_go(&p, started);
        }
    }

    fn apply_threads(&self) {
        if let Some(f) = self.set_threads {
            f(self.opts.threads);
        }
    }

    /// Loads the network (or sets up the uniform evaluator) if not loaded yet.
    fn ensure_net(&mut self) -> Result<(), ArenaError> {
        if self.net.is_some() {
            return Ok(());
        }
        let ev: Box<dyn Evaluator + Send> = match &self.model {
            None => Box::new(UniformEvaluator {
                input_len: self.encoder.input_len(),
                policy_len: self.encoder.policy_len(),
            }),
            Some((path, _)) => {
                self.apply_threads();
                let opened = self
                    .opener
                    .open(path, &self.encoder.spec(), self.opts.device)
                    .map_err(|reason| ArenaError::Open {
                        path: path.clone(),
                        reason,
                    })?;
                self.out.send(&format!(
                    "info string loaded {} ({}) on {:?}",
                    path.display(),
                    opened.description,
                    opened.device
                ));
                opened.net
            }
        };
        self.net = Some(Net {
            ev,
            cache: EvalCache::new(self.opts.nn_cache as usize),
        });
        Ok(())
    }

    /// The position of a `position` command: `startpos` or `sfen ...`, then `moves ...`.
    fn parse_position(&self, args: &[&str]) -> Result<Position, ArenaError> {
        match args.first() {
            Some(&"startpos" | &"sfen") => {}
            Some(other) => return Err(ArenaError::PositionStart(other.to_string())),
            None => return Err(ArenaError::NoPosition),
        }
        Ok(parse_game_line(&args.join(" "), &self.variant)?.position())
    }

    fn cmd_go(&mut self, p: &GoParams, started: Instant) {
        if let Err(e) = self.ensure_net() {
            self.out.error(&format!("go: {e}"));
            self.out.send("bestmove resign");
            return;
        }
        let net = self.net.take().expect("loaded");
        let limits = resolve_limits(p, self.opts.simulations, self.position.side_to_move());
        let control = Arc::new(Control::new(limits.ponder));
        let done = Arc::new(AtomicBool::new(false));
        let job = Job {
            position: self.position.clone(),
            encoder: self.encoder.clone(),
            config: self.opts.search_config(),
            base_simulations: self.opts.simulations.max(1),
            limits,
            started,
            hash_bytes: u64::from(self.opts.hash_mib) << 20,
            ponder_reply: self.opts.ponder,
            minibatch: self.opts.minibatch as usize,
            kept: self
                .kept
                .take()
                .filter(|_| self.opts.reuse_tree)
                .and_then(|k| reuse(k, &self.position)),
            root_mate_plies: self.opts.root_mate_plies,
        };
        let (c, d, out) = (control.clone(), done.clone(), self.out.clone());
        let spawned = std::thread::Builder::new()
            .name("usi-search".into())
            .spawn(move || search_thread(job, net, c, d, out));
        match spawned {
            Ok(handle) => {
                self.search = Some(Running {
                    handle,
                    control,
                    done,
                    infinite: limits.infinite,
                })
            }
            Err(e) => {
                self.out
                    .error(&format!("go: cannot start the search thread: {e}"));
                self.out.send("bestmove resign");
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
    /// otherwise a bounded search runs to its end and an infinite or pondering one is left
    /// running.
    fn finish_search(&mut self, force: bool) {
        if let Some(r) = &self.search {
            if force {
                r.control.stop.store(true, Ordering::Release);
            } else if r.unbounded() {
                return;
            }
            self.join();
        }
    }

    fn join(&mut self) {
        if let Some(r) = self.search.take() {
            match r.handle.join() {
                Ok((net, tree)) => {
                    self.net = Some(net);
                    // Without reuse the tree's memory goes back now.
                    self.kept = tree.filter(|_| self.opts.reuse_tree);
                }
                Err(_) => {
                    // The worker died before its bestmove: report it, reload the net lazily.
                    if !r.done.load(Ordering::Acquire) {
                        self.out.error("the search failed");
                        self.out.send("bestmove resign");
                    }
                }
            }
        }
    }
}

/// The variant, sidecar and encoder of the model file `path`; `variant`, if given, must name
/// the model's variant.
fn model_variant(
    path: &Path,
    variant: Option<&str>,
    opener: &dyn NetworkOpener,
) -> Result<(Arc<Variant>, ModelInfo, Encoder), ArenaError> {
    let meta = opener
        .describe(path)
        .map_err(|reason| ArenaError::Sidecar {
            path: path.to_path_buf(),
            reason,
        })?;
    let v = Variant::compile_named(
        meta.variant_spec.clone(),
        &format!("{} (sidecar)", path.display()),
    )
    .map_err(|reason| ArenaError::SidecarVariant {
        path: path.to_path_buf(),
        reason,
    })?;
    let v = Arc::new(v);
    if let Some(want) = variant {
        let same = want == meta.variant
            || want == v.name
            || load_variant(want).is_ok_and(|w| w.name == meta.variant);
        if !same {
            return Err(ArenaError::VariantMismatch {
                want: want.to_string(),
                path: path.to_path_buf(),
                model: meta.variant,
            });
        }
    }
    // The model's own layout (generic, attacks or dlshogi), as recorded in its sidecar.
    let enc =
        Encoder::for_spec(v.clone(), &meta.encoding).map_err(|reason| ArenaError::Layout {
            path: path.to_path_buf(),
            reason,
        })?;
    opener
        .check_layout(path, &enc.spec())
        .map_err(ArenaError::Encoding)?;
    Ok((v, meta, enc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::tests::NoNetworks;
    use search::SearchConfig;
    use std::sync::Mutex;

    /// An engine without a model whose output is collected.
    fn engine(variant: &str) -> (UsiEngine, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let e = UsiEngine::new(None, Some(variant), Arc::new(NoNetworks), move |l: &str| {
            sink.lock().unwrap().push(l.to_string())
        })
        .unwrap();
        (e, lines)
    }

    fn take(lines: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *lines.lock().unwrap())
    }

    #[test]
    fn handshake_and_options() {
        let (mut e, lines) = engine("minishogi");
        assert!(e.handle("usi"));
        let got = take(&lines);
        assert!(got[0].starts_with("id name trainer "), "{got:?}");
        assert!(got
            .iter()
            .any(|l| l.starts_with("option name USI_Variant type combo default minishogi")));
        assert_eq!(got.last().map(String::as_str), Some("usiok"));
        assert!(e.handle("setoption name Simulations value 12"));
        assert!(e.handle("setoption name Algorithm value puct"));
        assert!(e.handle("isready"));
        assert_eq!(take(&lines), ["readyok"]);
        for bad in [
            "setoption name Simulations value 0",
            "setoption name Nope value 1",
            "position startpos moves 9a9b",
            "frobnicate",
        ] {
            assert!(e.handle(bad));
            let got = take(&lines);
            assert_eq!(got.len(), 1, "{bad}: {got:?}");
            assert!(got[0].starts_with("info string error: "), "{bad}: {got:?}");
        }
        // Every `go` ends in a bestmove: after a rejected position, resign.
        assert!(e.handle("go nodes x"));
        let got = take(&lines);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[..2]
            .iter()
            .all(|l| l.starts_with("info string error: ")));
        assert_eq!(got[2], "bestmove resign");
        assert!(e.handle(""));
        assert!(take(&lines).is_empty());
        assert!(!e.handle("quit"));
    }

    #[test]
    fn search_constants_are_options_in_hundredths() {
        let (mut e, lines) = engine("minishogi");
        e.handle("usi");
        let got = take(&lines);
        for listed in [
            "option name CPuct type spin default 125 min 0 max 2000",
            "option name FPUReduction type spin default 20 min 0 max 2000",
            "option name PolicyTemperature type spin default 150 min 5 max 2000",
            "option name LCBStdevs type spin default 0 min 0 max 1000",
            "option name Solver type check default false",
        ] {
            assert!(got.iter().any(|l| l == listed), "{listed}: {got:?}");
        }
        assert_eq!(
            e.opts.search_config(),
            SearchConfig {
                algorithm: Algorithm::Puct,
                reuse_tree: false,
                mate_plies: 1,
                policy_temperature: 1.5,
                ..SearchConfig::default()
            }
        );
        e.handle("setoption name CPuct value 250");
        e.handle("setoption name FPUReduction value 0");
        e.handle("setoption name PolicyTemperature value 160");
        e.handle("setoption name LCBStdevs value 250");
        e.handle("setoption name Solver value true");
        assert!(take(&lines).is_empty());
        let c = e.opts.search_config();
        assert!(c.solver);
        assert_eq!(
            (
                c.c_puct,
                c.fpu_reduction,
                c.policy_temperature,
                c.lcb_stdevs
            ),
            (2.5, 0.0, 1.6, 2.5)
        );
        c.validate().unwrap();
        for bad in [
            "setoption name PolicyTemperature value 4",
            "setoption name CPuct value 2001",
            "setoption name FPUReduction value -1",
            "setoption name LCBStdevs value 1001",
            "setoption name Solver value maybe",
        ] {
            e.handle(bad);
            let got = take(&lines);
            assert!(got[0].starts_with("info string error: "), "{bad}: {got:?}");
        }
        assert_eq!(e.opts.search_config(), c);
    }

    #[test]
    fn go_writes_info_and_a_legal_bestmove() {
        let (mut e, lines) = engine("minishogi");
        e.handle("position startpos moves 5d5c");
        e.handle("go nodes 16");
        e.wait();
        let got = take(&lines);
        let best = got
            .last()
            .and_then(|l| l.strip_prefix("bestmove "))
            .unwrap();
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut pos = Position::start(v);
        pos.play_usi("5d5c").unwrap();
        assert!(pos.parse_usi(best).is_ok(), "{got:?}");
        assert!(got.iter().any(|l| l.contains(" nodes 16 ")), "{got:?}");
        // An infinite search answers only after `stop`.
        e.handle("go infinite");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!take(&lines).iter().any(|l| l.starts_with("bestmove")));
        e.handle("stop");
        assert!(take(&lines).last().unwrap().starts_with("bestmove "));
    }

    #[test]
    fn the_next_search_of_the_game_reuses_the_tree_unless_told_not_to() {
        let (mut e, lines) = engine("minishogi");
        let reused = |got: &[String]| {
            got.iter()
                .find_map(|l| l.strip_prefix("info string reusing "))
                .map(|rest| rest.split(' ').next().unwrap().parse::<u64>().unwrap())
        };
        e.handle("setoption name ReuseTree value true");
        let mut game = String::from("position startpos moves 5e4d");
        for round in 0..3 {
            e.handle(&game);
            e.handle("go nodes 200");
            e.wait();
            let got = take(&lines);
            // Budgets count new simulations only.
            assert!(got.iter().any(|l| l.contains(" nodes 200 ")), "{got:?}");
            if round > 0 {
                assert!(reused(&got).is_some_and(|n| n > 0), "{got:?}");
            }
            let best = bestmoves(&got)[0].split(' ').nth(1).unwrap().to_string();
            let v = Arc::new(Variant::builtin("minishogi").unwrap());
            let mut pos = parse_game_line(game.strip_prefix("position ").unwrap(), &v)
                .unwrap()
                .position();
            pos.play_usi(&best).unwrap();
            let reply = pos.move_to_usi(pos.legal_moves()[0]);
            game = format!("{game} {best} {reply}");
        }
        // Off, or after usinewgame: a fresh tree.
        e.handle("setoption name ReuseTree value false");
        e.handle("go nodes 50");
        e.wait();
        e.handle("go nodes 50");
        e.wait();
        assert_eq!(reused(&take(&lines)), None);
        e.handle("setoption name ReuseTree value true");
        e.handle("go nodes 50");
        e.wait();
        e.handle("usinewgame");
        e.handle("position startpos");
        e.handle("go nodes 50");
        e.wait();
        assert_eq!(reused(&take(&lines)), None);
        // The `Simulations` budget of a plain `go` counts new simulations too; any setoption
        // drops the tree.
        e.handle("setoption name Simulations value 30");
        e.handle("go");
        e.wait();
        assert_eq!(reused(&take(&lines)), None);
        e.handle("go");
        e.wait();
        let got = take(&lines);
        assert!(reused(&got).is_some_and(|n| n >= 30), "{got:?}");
        assert!(got.iter().any(|l| l.contains(" nodes 30 ")), "{got:?}");
        e.handle("setoption name MinibatchSize value 8");
        e.handle("go");
        e.wait();
        assert_eq!(reused(&take(&lines)), None);
    }

    #[test]
    fn mate_plies_plays_a_mate_without_searching() {
        let (mut e, lines) = engine("minishogi");
        // G*1b mates gote's cornered king (see the search's tests).
        e.handle("position sfen 4k/5/4P/5/K4 b G 1");
        e.handle("setoption name MatePlies value 1");
        for go in [
            "go nodes 300",
            "go movetime 50",
            "go btime 1000 wtime 1000 byoyomi 100",
        ] {
            e.handle(go);
            e.wait();
            let got = take(&lines);
            assert_eq!(bestmoves(&got), ["bestmove G*1b"], "{go}: {got:?}");
            assert!(got
                .iter()
                .any(|l| l.contains(" nodes 0 ") && l.contains("score mate 1")));
        }
        // An infinite search still waits for `stop`.
        e.handle("go infinite");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(bestmoves(&take(&lines)).is_empty());
        e.handle("stop");
        assert_eq!(bestmoves(&take(&lines)), ["bestmove G*1b"]);
        // Off: the search spends its budget (and finds the mate by searching).
        e.handle("setoption name MatePlies value 0");
        e.handle("go nodes 300");
        e.wait();
        let got = take(&lines);
        assert!(got.iter().any(|l| l.contains(" nodes 300 ")), "{got:?}");
        assert!(e.handle("setoption name MatePlies value 8"));
        assert!(take(&lines)[0].starts_with("info string error: "));
    }

    /// A minishogi game (Fairy-Stockfish against our engine) 16 plies in, sente to move:
    /// after gote's 2b1b, 1e1b mates in five plies, checks only, and nothing mates sooner.
    const MATE_IN_FIVE: &str = "position sfen rbsgk/4p/5/P4/KGSBR b - 1 moves 4e4d 2a3b 4d3c \
         1a2a 3e4d 3b3c 4d3c G*3b 3c2d 3b2b G*4c 2a1a 2e3d 4a3b 3d1b 2b1b";

    #[test]
    fn root_mate_plies_plays_a_longer_forced_mate_at_once() {
        let (mut e, lines) = engine("minishogi");
        e.handle(MATE_IN_FIVE);
        let mut p = e.position.clone();
        let legal = p.legal_moves();
        assert_eq!(p.forced_win(&legal, 3), None);
        let m = p.parse_usi("1e1b").unwrap();
        assert!(p.forces_win(m, 5));
        // MatePlies 1 (the default) does not see it: the search spends its budget.
        e.handle("go nodes 300");
        e.wait();
        assert!(take(&lines).iter().any(|l| l.contains(" nodes 300 ")));
        e.handle("setoption name RootMatePlies value 5");
        for go in ["go nodes 300", "go movetime 50"] {
            e.handle(go);
            e.wait();
            let got = take(&lines);
            assert_eq!(bestmoves(&got), ["bestmove 1e1b"], "{go}: {got:?}");
            assert!(got
                .iter()
                .any(|l| l.contains(" nodes 0 ") && l.contains("score mate +")));
        }
        // Three plies are too few: the search runs.
        e.handle("setoption name RootMatePlies value 3");
        e.handle("go nodes 300");
        e.wait();
        assert!(take(&lines).iter().any(|l| l.contains(" nodes 300 ")));
        assert!(e.handle("setoption name RootMatePlies value 16"));
        assert!(take(&lines)[0].starts_with("info string error: "));
    }

    fn bestmoves(lines: &[String]) -> Vec<&String> {
        lines.iter().filter(|l| l.starts_with("bestmove")).collect()
    }

    #[test]
    fn ponder_waits_for_ponderhit_or_stop() {
        use std::time::Duration;
        let (mut e, lines) = engine("minishogi");
        e.handle("setoption name USI_Ponder value true");
        e.handle("position startpos moves 5d5c");
        // A byoyomi of 50 ms: after 300 ms of pondering there is still no bestmove.
        e.handle("go ponder btime 0 wtime 0 byoyomi 50");
        std::thread::sleep(Duration::from_millis(300));
        e.wait(); // returns at once: a pondering search is not waited for
        assert!(bestmoves(&take(&lines)).is_empty());
        e.handle("ponderhit");
        e.wait();
        let got = take(&lines);
        assert_eq!(bestmoves(&got).len(), 1, "{got:?}");
        let toks: Vec<&str> = got.last().unwrap().split_whitespace().collect();
        assert_eq!((toks.len(), toks[2]), (4, "ponder"), "{got:?}");
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut pos = Position::start(v);
        pos.play_usi("5d5c").unwrap();
        let best = pos.parse_usi(toks[1]).unwrap();
        pos.make_move(best);
        assert!(pos.parse_usi(toks[3]).is_ok(), "{got:?}");
        // ponderhit without a pondering search is reported.
        e.handle("ponderhit");
        let got = take(&lines);
        assert!(got.len() == 1 && got[0].starts_with("info string error: ponderhit"));
        // stop answers a pondering search at once; end of input stops one too.
        e.handle("go ponder byoyomi 100000");
        e.handle("stop");
        assert_eq!(bestmoves(&take(&lines)).len(), 1);
        e.handle("go ponder byoyomi 100000");
        e.finish();
        assert_eq!(bestmoves(&take(&lines)).len(), 1);
        // USI_Ponder off: no ponder move.
        e.handle("setoption name USI_Ponder value false");
        e.handle("go nodes 30");
        e.wait();
        let got = take(&lines);
        assert_eq!(got.last().unwrap().split_whitespace().count(), 2, "{got:?}");
    }

    #[test]
    fn run_reads_until_quit() {
        let (mut e, lines) = engine("minishogi");
        let mut input: &[u8] = b"isready\ngo nodes 4\nisready\nquit\ngo nodes 4\n";
        e.run(&mut input);
        let got = take(&lines);
        assert_eq!(
            got.iter().filter(|l| l.starts_with("bestmove")).count(),
            1,
            "{got:?}"
        );
        assert_eq!(got.iter().filter(|l| *l == "readyok").count(), 2, "{got:?}");
    }
}
