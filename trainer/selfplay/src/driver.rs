//! Games in lockstep: many games per thread, in groups that take turns; each group's turn
//! collects one leaf per game into one network batch per evaluator (no virtual loss needed;
//! batches stay full at any simulation count), submitted so that the next group is prepared
//! while it is evaluated. The one runner of games between in-process players: self-play (one
//! search per game) and matches (one search per player: the run's evaluation and the arena's
//! matches between networks or network-free searches).

use crate::error::SelfPlayError;
use crate::opening::Opening;
use crate::samples::{GameRecord, MoveTarget};
use encoding::{Encoder, Precision};
use rules::{Color, Move, Variant};
use search::{
    sample_policy, Algorithm, EvalCache, Evaluator, EvaluatorError, Request, Search, SearchConfig,
    Ticket,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest `random_opening_plies`.
pub const MAX_RANDOM_OPENING_PLIES: u32 = 64;

/// Self-play settings (the `[selfplay]` table of a run config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelfPlayConfig {
    /// Games played in lockstep per group (one batch per group and turn).
    pub parallel_games: usize,
    /// Groups of games per search thread, taking turns: with an inference server, 2 or more
    /// let a thread prepare one group's batch while another is evaluated (0: 2 with a server,
    /// 1 without).
    pub pipeline: usize,
    /// Search threads (0: the machine's cores).
    pub threads: usize,
    /// `inline`: each search thread runs its own copy of the network (best on CPU, where the
    /// network shares the cores); `server`: the threads send their batches to one inference
    /// queue per device, which forms large batches (best on a GPU); `auto`: a server on CUDA,
    /// inline on CPU.
    pub inference: Inference,
    /// A server's largest batch in positions (0: every thread's group at once, that is
    /// threads x parallel_games).
    pub max_batch: usize,
    /// Inference precision on CUDA (`auto`, `f32`, `f16`, `bf16`); CPU inference is f32.
    pub precision: Precision,
    /// PUCT only: plies played by sampling the visit distribution (with `search.forced_playouts`,
    /// the pruned one that is also the policy target).
    pub temperature_plies: u32,
    /// PUCT only: the sampling temperature.
    pub temperature: f32,
    /// Gumbel only: plies played by sampling the improved policy (the training target) with
    /// `gumbel_temperature`, so that games between workers and threads diverge early instead
    /// of repeating the same lines (0: always the sequential-halving winner).
    pub gumbel_sample_plies: u32,
    /// Gumbel only: the temperature of those plies.
    pub gumbel_temperature: f32,
    /// Random openings: a game drawn with probability `random_opening_fraction` starts after
    /// `k` uniformly random legal moves from the start position, `k` uniform in 1 to this
    /// (0, the default: none). The random plies carry no training target; the positions they
    /// lead to, often lopsided, teach the network the play after odd moves of an opponent (as
    /// Stockfish's `gensfen` plays random moves in the opening; KataGo forks games with
    /// random moves for the same reason).
    pub random_opening_plies: u32,
    /// The probability that a self-play game starts with random plies (see
    /// `random_opening_plies`).
    pub random_opening_fraction: f32,
    /// Playout-cap randomization: simulations of a full search (recorded for training).
    pub full_simulations: u32,
    /// Simulations of a fast search (not recorded, no noise).
    pub fast_simulations: u32,
    /// Probability that a move gets a full search.
    pub full_probability: f32,
    /// Progressive simulation budgets (MiniZero): games started with a network of generation
    /// g < `progressive_generations` search `f = progressive_start + (1 - progressive_start) *
    /// g / progressive_generations` of `full_simulations` and `fast_simulations` (rounded, at
    /// least 1), so the first networks, whose values are still noise, play more games for the
    /// same compute (0, the default: always the full budgets).
    pub progressive_generations: u64,
    /// The fraction of the budgets at generation 0, in (0, 1] (used only when
    /// `progressive_generations` > 0).
    pub progressive_start: f32,
    /// Resign when the root value of the side to move stays below `-resign_threshold`...
    pub resign_threshold: f32,
    /// ...for this many of its consecutive moves (0 disables resignation).
    pub resign_consecutive: u32,
    /// Fraction of games where resignation is disabled, to measure false resignations.
    pub no_resign_fraction: f32,
    /// A game reaching this many plies is a draw (0: the variant's own limit only).
    pub max_plies: u32,
    /// Network answers kept per network and search thread, keyed by position (rounded up to a
    /// power of two; 0: none): a leaf already evaluated by the same network, reached by another
    /// move order or in another game, is expanded from the table, and leaves repeated within one
    /// batch are evaluated once. An entry takes about 50 bytes and 4 more per legal move of its
    /// position; the default is 65,536 entries.
    pub eval_cache: usize,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            parallel_games: 64,
            pipeline: 0,
            threads: 0,
            inference: Inference::Auto,
            max_batch: 0,
            precision: Precision::Auto,
            temperature_plies: 20,
            temperature: 1.0,
            gumbel_sample_plies: 0,
            gumbel_temperature: 1.0,
            random_opening_plies: 0,
            random_opening_fraction: 0.0,
            full_simulations: 64,
            fast_simulations: 16,
            full_probability: 0.25,
            progressive_generations: 0,
            progressive_start: 0.25,
            resign_threshold: 0.9,
            resign_consecutive: 3,
            no_resign_fraction: 0.1,
            max_plies: 300,
            eval_cache: search::DEFAULT_EVAL_CACHE,
        }
    }
}

impl SelfPlayConfig {
    /// Checks ranges; messages name the key.
    pub fn validate(&self) -> Result<(), SelfPlayError> {
        if self.parallel_games == 0 || self.parallel_games > 4096 {
            return Err(SelfPlayError::config("parallel_games", "must be 1 to 4096"));
        }
        if self.threads > 1024 {
            return Err(SelfPlayError::config(
                "threads",
                "must be 0 (the machine's cores) to 1024",
            ));
        }
        if self.pipeline > 16 {
            return Err(SelfPlayError::config("pipeline", "must be 0 (auto) to 16"));
        }
        if self.eval_cache > 1 << 24 {
            return Err(SelfPlayError::config(
                "eval_cache",
                "must be 0 (none) to 16777216 entries",
            ));
        }
        if self.max_batch > 65536 {
            return Err(SelfPlayError::config(
                "max_batch",
                "must be 0 (auto) to 65536",
            ));
        }
        if self.full_simulations == 0 {
            return Err(SelfPlayError::config(
                "full_simulations",
                "must be at least 1",
            ));
        }
        if self.fast_simulations == 0 || self.fast_simulations > self.full_simulations {
            return Err(SelfPlayError::config(
                "fast_simulations",
                "must be 1 to full_simulations",
            ));
        }
        if !(0.0..=1.0).contains(&self.full_probability) || self.full_probability == 0.0 {
            return Err(SelfPlayError::config(
                "full_probability",
                "must be in (0, 1]",
            ));
        }
        if !(0.0..=1.0).contains(&self.no_resign_fraction) {
            return Err(SelfPlayError::config(
                "no_resign_fraction",
                "must be in [0, 1]",
            ));
        }
        if !(0.0..=1.0).contains(&self.resign_threshold) {
            return Err(SelfPlayError::config(
                "resign_threshold",
                "must be in [0, 1]",
            ));
        }
        if !(self.progressive_start > 0.0 && self.progressive_start <= 1.0) {
            return Err(SelfPlayError::config(
                "progressive_start",
                "must be in (0, 1]",
            ));
        }
        if self.temperature.is_nan() || self.temperature < 0.0 {
            return Err(SelfPlayError::config("temperature", "must be at least 0"));
        }
        if self.random_opening_plies > MAX_RANDOM_OPENING_PLIES {
            return Err(SelfPlayError::config(
                "random_opening_plies",
                format!("must be 0 (none) to {MAX_RANDOM_OPENING_PLIES}"),
            ));
        }
        if !(0.0..=1.0).contains(&self.random_opening_fraction) {
            return Err(SelfPlayError::config(
                "random_opening_fraction",
                "must be in [0, 1]",
            ));
        }
        if self.gumbel_temperature.is_nan() || self.gumbel_temperature < 0.0 {
            return Err(SelfPlayError::config(
                "gumbel_temperature",
                "must be at least 0",
            ));
        }
        Ok(())
    }
}

/// Where self-play's network runs (see [`SelfPlayConfig::inference`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inference {
    /// A server on CUDA, inline on CPU.
    #[default]
    Auto,
    /// Each search thread evaluates its own batches with its own network copy.
    Inline,
    /// One inference queue per device, shared by the search threads.
    Server,
}

impl SelfPlayConfig {
    /// The simulations of a full (`full`) or fast search in a game started with a network of
    /// `generation` (see `progressive_generations`).
    pub fn simulations(&self, full: bool, generation: u64) -> u32 {
        let base = if full {
            self.full_simulations
        } else {
            self.fast_simulations
        };
        let g = self.progressive_generations;
        if g == 0 || generation >= g {
            return base;
        }
        let start = f64::from(self.progressive_start);
        let f = start + (1.0 - start) * generation as f64 / g as f64;
        ((f64::from(base) * f).round() as u32).clamp(1, base)
    }

    /// Search threads: `threads`, or the machine's cores when 0.
    pub fn search_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// Whether an inference server is used on a device of this kind.
    pub fn uses_server(&self, cuda: bool) -> bool {
        match self.inference {
            Inference::Auto => cuda,
            Inference::Inline => false,
            Inference::Server => true,
        }
    }

    /// Groups per search thread (`pipeline`, or its automatic value).
    pub fn groups(&self, server: bool) -> usize {
        match self.pipeline {
            0 if server => 2,
            0 => 1,
            n => n,
        }
    }

    /// A server's largest batch (`max_batch`, or every thread's group at once).
    pub fn server_batch(&self) -> usize {
        if self.max_batch > 0 {
            self.max_batch
        } else {
            self.search_threads() * self.parallel_games.max(1)
        }
    }
}

/// What a batch of games measured (a field missing from an older record reads as 0).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlayStats {
    /// Games finished.
    pub games: u64,
    /// Plies played.
    pub plies: u64,
    /// Decisive games won by sente.
    pub sente_wins: u64,
    /// Decisive games won by gote.
    pub gote_wins: u64,
    /// Draws.
    pub draws: u64,
    /// Games ended by resignation.
    pub resigned: u64,
    /// Games played without resignation.
    pub no_resign_games: u64,
    /// Of those, games where a side reached the resignation condition and did not lose.
    pub false_resigns: u64,
    /// Positions evaluated by the network(s).
    pub evals: u64,
    /// Leaves answered without the network: from the evaluation cache, or by another game's
    /// identical leaf in the same batch (`eval_cache`).
    pub cache_hits: u64,
    /// Evaluator calls (evals / batches = mean batch size).
    pub batches: u64,
    /// Training samples recorded (full searches).
    pub samples: u64,
    /// Seconds inside the evaluators.
    pub eval_seconds: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl PlayStats {
    /// Adds another thread's figures.
    pub fn merge(&mut self, o: &PlayStats) {
        self.games += o.games;
        self.plies += o.plies;
        self.sente_wins += o.sente_wins;
        self.gote_wins += o.gote_wins;
        self.draws += o.draws;
        self.resigned += o.resigned;
        self.no_resign_games += o.no_resign_games;
        self.false_resigns += o.false_resigns;
        self.evals += o.evals;
        self.cache_hits += o.cache_hits;
        self.batches += o.batches;
        self.samples += o.samples;
        self.eval_seconds += o.eval_seconds;
        self.seconds = self.seconds.max(o.seconds);
    }
}

/// The driver's generator for its decisions (SplitMix64).
pub use rules::SplitMix64 as Rng;

/// Who plays a game: self-play (one shared search) or a match between two evaluators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One network plays both sides, with noise, playout caps, resignation and targets.
    SelfPlay,
    /// Evaluator 0 and evaluator 1 play each other without noise, each with its own encoder
    /// and search settings; [`Control::game_start`] gives each game's opening and who plays
    /// sente. A position with a single legal move is played without a search.
    Match,
}

/// How a game starts (see [`Control::game_start`]).
#[derive(Clone, Debug, Default)]
pub struct GameStart {
    /// The opening: the record starts at its start position and with its moves (None: the
    /// variant's start position, no moves).
    pub opening: Option<Opening>,
    /// Match: the evaluator (0 or 1) playing sente.
    pub sente: usize,
}

struct Game {
    /// One search (self-play) or one per evaluator (match: index = evaluator).
    searches: Vec<Search>,
    /// Evaluator playing sente (match).
    sente_eval: usize,
    /// Game number (0-based, in start order).
    index: usize,
    /// The owner's tag of the game (self-play: the network generation it started with).
    tag: u64,
    /// Evaluator slot of the search in progress.
    ev: usize,
    record: GameRecord,
    full: bool,
    no_resign: bool,
    low_streak: [u32; 2],
    would_resign: [bool; 2],
    /// Match: the only legal move, played without a search.
    forced: Option<Move>,
    /// The game is over before its first move (an opening at the move limit): winner, reason.
    start_end: Option<(Option<Color>, &'static str)>,
}

/// What the lockstep driver asks its owner between steps: whether to start games, how they
/// start, a newer network, where finished games go, and when to stop. [`play_games`] plays a
/// fixed number of games with it; a self-play worker plays forever and switches networks
/// between moves; a match schedules openings and colours.
pub trait Control<'e> {
    /// Whether to start another game now; `Some(tag)` starts one that carries `tag`.
    fn start_game(&mut self) -> Option<u64>;
    /// How game `index` (in start order), started with `tag`, begins; by default at the
    /// variant's start position with evaluator 0 as sente.
    fn game_start(&mut self, _index: usize, _tag: u64) -> GameStart {
        GameStart::default()
    }
    /// A newer network: searches started from now on use it, searches in progress finish their
    /// move with the network they started with (self-play only; polled once per step).
    fn new_network(&mut self) -> Option<Box<dyn Evaluator + 'e>> {
        None
    }
    /// A finished game with its number, tag and the running statistics; `false` stops the
    /// driver (the games in flight are dropped).
    fn game_over(&mut self, index: usize, tag: u64, record: GameRecord, stats: &PlayStats) -> bool;
    /// A move was played (progress).
    fn moved(&mut self) {}
    /// No game is in flight and `start_game` declined: `true` waits and asks again (the owner
    /// sleeps here), `false` ends the driver.
    fn idle(&mut self) -> bool {
        false
    }
    /// Stop now, dropping the games in flight (polled once per step).
    fn stop(&mut self) -> bool {
        false
    }
}

/// Plays `n_games` games and hands each finished one to `on_game` as soon as it ends, with its
/// game number (games finish out of order) and the running statistics.
///
/// `evaluators` has one entry for self-play, two for a match; `encoders` and `searches` give
/// each evaluator's encoder and search settings (one for self-play, whose simulations come from
/// the playout caps of `cfg`; a match's budgets come from `searches`). Game `i` starts from
/// `openings[(i / 2) % openings.len()]` (the variant's start position when `openings` is
/// empty); in a match, evaluator 0 plays sente in even games.
#[allow(clippy::too_many_arguments)]
pub fn play_games(
    encoders: &[&Encoder],
    evaluators: &mut [&mut dyn Evaluator],
    searches: &[SearchConfig],
    cfg: &SelfPlayConfig,
    mode: Mode,
    openings: &[Opening],
    n_games: usize,
    seed: u64,
    on_game: &mut dyn FnMut(usize, GameRecord, &PlayStats),
) -> Result<PlayStats, EvaluatorError> {
    struct Counted<'a> {
        left: usize,
        openings: &'a [Opening],
        on_game: &'a mut dyn FnMut(usize, GameRecord, &PlayStats),
    }
    impl Control<'_> for Counted<'_> {
        fn start_game(&mut self) -> Option<u64> {
            (self.left > 0).then(|| {
                self.left -= 1;
                0
            })
        }
        fn game_start(&mut self, i: usize, _: u64) -> GameStart {
            let n = self.openings.len().max(1);
            GameStart {
                opening: self.openings.get((i / 2) % n).cloned(),
                sente: i % 2,
            }
        }
        fn game_over(&mut self, i: usize, _: u64, g: GameRecord, s: &PlayStats) -> bool {
            (self.on_game)(i, g, s);
            true
        }
    }
    let evals = evaluators
        .iter_mut()
        .map(|e| Box::new(&mut **e) as Box<dyn Evaluator + '_>)
        .collect();
    let cfg = SelfPlayConfig {
        parallel_games: cfg.parallel_games.max(1).min(n_games.max(1)),
        ..cfg.clone()
    };
    let mut control = Counted {
        left: n_games,
        openings,
        on_game,
    };
    run_games(encoders, evals, searches, &cfg, mode, seed, &mut control)
}

/// The lockstep driver: keeps `cfg.pipeline` groups of `cfg.parallel_games` slots busy with
/// games as long as `control` starts them, one leaf per game and one batch per evaluator in
/// each group's turn. `evaluators` holds one network for self-play (later ones come from
/// [`Control::new_network`], all encoded by `encoders[0]` and searched with `searches[0]`) or
/// two for a match (evaluator `i` with `encoders[i]` and `searches[i]`).
///
/// Panics when a match does not get two evaluators, encoders and search settings.
pub fn run_games<'e>(
    encoders: &[&Encoder],
    evaluators: Vec<Box<dyn Evaluator + 'e>>,
    searches: &[SearchConfig],
    cfg: &SelfPlayConfig,
    mode: Mode,
    seed: u64,
    control: &mut dyn Control<'e>,
) -> Result<PlayStats, EvaluatorError> {
    let t0 = Instant::now();
    let mut d = Driver::new(encoders, evaluators, searches, cfg, mode, seed);
    let mut groups: Vec<Group> = (0..cfg.pipeline.max(1))
        .map(|_| Group::new(cfg.parallel_games.max(1)))
        .collect();
    let n_groups = groups.len();
    // Groups take turns: a group's answers are applied, its games advanced to their next
    // leaves and its batches submitted; with an evaluator that answers later, the next group is
    // prepared while this one is evaluated.
    let mut turn = 0usize;
    let mut quiet_turns = 0usize;
    loop {
        let group = &mut groups[turn % n_groups];
        turn += 1;
        d.apply_answers(group)?;
        if control.stop() {
            break;
        }
        d.poll_network(control);
        group.resize(d.evaluators.len());
        d.fill(group, control);
        if !d.advance(group, control) {
            break;
        }
        let submitted = d.submit(group)?;
        // Idle once every group has had a turn without anything to evaluate.
        quiet_turns = if submitted { 0 } else { quiet_turns + 1 };
        if quiet_turns >= n_groups {
            quiet_turns = 0;
            if control.idle() {
                continue;
            }
            break;
        }
        d.drop_unused(&groups);
    }
    d.stats.eval_seconds = d.eval_time.as_secs_f64();
    d.stats.seconds = t0.elapsed().as_secs_f64();
    Ok(d.stats)
}

/// What ending a move needs besides the game, fixed for a run of the driver.
struct Settings<'a> {
    /// The encoder of self-play's training targets.
    encoder: &'a Encoder,
    cfg: &'a SelfPlayConfig,
    /// Per search of a game.
    algorithms: Vec<Algorithm>,
    mode: Mode,
    max_plies: usize,
}

/// The driver's state between steps (the groups aside).
struct Driver<'a, 'e> {
    k: Settings<'a>,
    encoders: &'a [&'a Encoder],
    searches: &'a [SearchConfig],
    budgets: Vec<u32>,
    variant: Arc<Variant>,
    rng: Rng,
    stats: PlayStats,
    started: usize,
    evaluators: Vec<Option<Box<dyn Evaluator + 'e>>>,
    /// Per evaluator slot: its answers by position (`eval_cache`).
    caches: Vec<EvalCache>,
    /// Per evaluator slot: whether its leaves are looked up (`eval_cache` > 0).
    cached: bool,
    /// Self-play: the slot of the newest network.
    current: usize,
    eval_time: Duration,
}

impl<'a, 'e> Driver<'a, 'e> {
    fn new(
        encoders: &'a [&'a Encoder],
        evaluators: Vec<Box<dyn Evaluator + 'e>>,
        searches: &'a [SearchConfig],
        cfg: &'a SelfPlayConfig,
        mode: Mode,
        seed: u64,
    ) -> Self {
        let seats = match mode {
            Mode::SelfPlay => 1,
            Mode::Match => 2,
        };
        assert!(
            encoders.len() >= seats && searches.len() >= seats && evaluators.len() >= seats,
            "run_games: {seats} evaluators, encoders and search settings needed"
        );
        let cached = cfg.eval_cache > 0;
        let caches = (0..evaluators.len())
            .map(|_| EvalCache::new(cfg.eval_cache))
            .collect();
        Driver {
            k: Settings {
                encoder: encoders[0],
                cfg,
                algorithms: searches.iter().map(|s| s.algorithm).collect(),
                mode,
                max_plies: if cfg.max_plies > 0 {
                    cfg.max_plies as usize
                } else {
                    usize::MAX
                },
            },
            encoders,
            searches: &searches[..seats],
            budgets: searches.iter().map(|s| s.simulations).collect(),
            variant: encoders[0].variant().clone(),
            rng: Rng(seed),
            stats: PlayStats::default(),
            started: 0,
            evaluators: evaluators.into_iter().map(Some).collect(),
            caches,
            cached,
            current: 0,
            eval_time: Duration::ZERO,
        }
    }

    /// The encoder and search settings of evaluator `ev`: self-play's networks share seat 0.
    fn seat(&self, ev: usize) -> usize {
        match self.k.mode {
            Mode::SelfPlay => 0,
            Mode::Match => ev,
        }
    }

    /// The opening of a self-play game its owner left open: the start position, or random
    /// plies from it (`random_opening_plies`).
    fn self_play_opening(&mut self) -> Opening {
        let cfg = self.k.cfg;
        if self.k.mode == Mode::SelfPlay
            && cfg.random_opening_plies > 0
            && self.rng.next_f32() < cfg.random_opening_fraction
        {
            let plies = 1 + self.rng.below(cfg.random_opening_plies as usize) as u32;
            Opening::random(&self.variant, plies, &mut self.rng)
        } else {
            Opening::start_position(&self.variant)
        }
    }

    fn new_game(&mut self, tag: u64, control: &mut dyn Control<'e>) -> Game {
        let index = self.started;
        self.started += 1;
        let start = control.game_start(index, tag);
        let opening = start.opening.unwrap_or_else(|| self.self_play_opening());
        let root = opening.position();
        let searches = self
            .searches
            .iter()
            .map(|s| Search::new(s.clone(), root.clone(), self.rng.next_u64()))
            .collect();
        let v = opening.start.variant();
        let record = GameRecord {
            start_sfen: opening.start.to_sfen(),
            moves: opening.moves.iter().map(|&m| v.move_to_usi(m)).collect(),
            targets: vec![None; opening.moves.len()],
            result: rules::GameResult::Draw,
            reason: String::new(),
        };
        let start_end = match root.outcome() {
            Some(o) => Some((o.winner, o.reason.name())),
            None => (record.moves.len() >= self.k.max_plies).then_some((None, "move limit")),
        };
        let no_resign =
            self.k.mode == Mode::SelfPlay && self.rng.next_f32() < self.k.cfg.no_resign_fraction;
        Game {
            searches,
            sente_eval: start.sente.min(1),
            index,
            tag,
            ev: 0,
            record,
            full: false,
            no_resign,
            low_streak: [0; 2],
            would_resign: [false; 2],
            forced: None,
            start_end,
        }
    }

    /// Starts the search of the move to play (or notes the only legal move of a match).
    fn begin(&mut self, g: &mut Game) {
        if g.start_end.is_some() {
            return;
        }
        let who = active(g, self.k.mode);
        match self.k.mode {
            Mode::SelfPlay => {
                let cfg = self.k.cfg;
                g.ev = self.current;
                g.full = self.rng.next_f32() < cfg.full_probability;
                let sims = cfg.simulations(g.full, g.tag);
                g.searches[0].start(sims, g.full);
            }
            Mode::Match => {
                g.ev = who;
                g.full = false;
                let legal = g.searches[who].root().legal_moves();
                if legal.len() == 1 {
                    g.forced = Some(legal[0]);
                } else {
                    g.searches[who].start(self.budgets[who], false);
                }
            }
        }
    }

    /// Applies the group's answered batches to the leaves waiting for them.
    fn apply_answers(&mut self, group: &mut Group) -> Result<(), EvaluatorError> {
        for ev in 0..group.tickets.len() {
            let Some(ticket) = group.tickets[ev].take() else {
                continue;
            };
            let t = Instant::now();
            let r = ticket.wait()?;
            self.eval_time += t.elapsed();
            if self.cached {
                for k in 0..r.len() {
                    self.caches[ev].insert(group.keys[ev][k], &r.logits[r.range(k)], r.wdl[k]);
                }
            }
            for &(si, k) in group.pending[ev].iter() {
                let game = group.slots[si].as_mut().expect("pending game");
                let who = active(game, self.k.mode);
                let k = k as usize;
                game.searches[who].expand(&r.logits[r.range(k)], r.wdl[k]);
            }
            group.pending[ev].clear();
            group.keys[ev].clear();
            group.rows[ev].clear();
            group.requests[ev] = r;
        }
        Ok(())
    }

    /// Self-play: takes a newer network from `control`.
    fn poll_network(&mut self, control: &mut dyn Control<'e>) {
        if self.k.mode == Mode::SelfPlay {
            if let Some(e) = control.new_network() {
                self.evaluators.push(Some(e));
                self.caches.push(EvalCache::new(self.k.cfg.eval_cache));
                self.current = self.evaluators.len() - 1;
            }
        }
    }

    /// Starts games in the group's empty slots while `control` wants more.
    fn fill(&mut self, group: &mut Group, control: &mut dyn Control<'e>) {
        for slot in group.slots.iter_mut().filter(|s| s.is_none()) {
            let Some(tag) = control.start_game() else {
                break;
            };
            let mut g = self.new_game(tag, control);
            self.begin(&mut g);
            *slot = Some(g);
        }
    }

    /// Takes every game of the group to its next leaf, playing the moves whose searches
    /// finished; `false` when `control` stopped the driver.
    fn advance(&mut self, group: &mut Group, control: &mut dyn Control<'e>) -> bool {
        for r in group.requests.iter_mut() {
            r.clear();
        }
        for si in 0..group.slots.len() {
            if !self.advance_slot(group, si, control) {
                return false;
            }
        }
        true
    }

    fn advance_slot(
        &mut self,
        group: &mut Group,
        si: usize,
        control: &mut dyn Control<'e>,
    ) -> bool {
        let slot = &mut group.slots[si];
        while let Some(game) = slot.as_mut() {
            let who = active(game, self.k.mode);
            if game.searches[who].finished() {
                if let Some(done) = finish_move(game, &self.k, &mut self.rng, &mut self.stats) {
                    let (index, tag) = (game.index, game.tag);
                    *slot = None;
                    if !control.game_over(index, tag, done, &self.stats) {
                        return false;
                    }
                    if let Some(tag) = control.start_game() {
                        *slot = Some(self.new_game(tag, control));
                    }
                } else {
                    control.moved();
                }
                if let Some(g) = slot.as_mut() {
                    self.begin(g);
                }
                continue;
            }
            let ev = game.ev;
            let enc = self.encoders[self.seat(ev)];
            let s = &mut game.searches[who];
            if s.select() {
                let leaf = s.leaf_position();
                let key = if self.cached {
                    let key = enc.cache_key(leaf);
                    let moves = s.leaf_moves().len();
                    if let Some((logits, wdl)) = self.caches[ev].get(key, moves) {
                        s.expand(logits, wdl);
                        self.stats.cache_hits += 1;
                        continue;
                    }
                    if let Some(&row) = group.rows[ev].get(&key) {
                        // Another game's leaf in this batch: share its answer.
                        group.pending[ev].push((si, row));
                        self.stats.cache_hits += 1;
                        break;
                    }
                    key
                } else {
                    0
                };
                let r = &mut group.requests[ev];
                let row = r.len() as u32;
                enc.encode(leaf, r.add_position(enc.input_len()));
                for &mv in s.leaf_moves() {
                    r.moves.push(enc.move_to_index(leaf, mv) as u32);
                }
                r.end_position();
                group.pending[ev].push((si, row));
                if self.cached {
                    group.rows[ev].insert(key, row);
                    group.keys[ev].push(key);
                }
                break;
            }
        }
        true
    }

    /// Submits the group's batches; whether there was any.
    fn submit(&mut self, group: &mut Group) -> Result<bool, EvaluatorError> {
        let mut submitted = false;
        for (ev, evaluator) in self.evaluators.iter_mut().enumerate() {
            if group.pending[ev].is_empty() {
                continue;
            }
            let r = std::mem::take(&mut group.requests[ev]);
            self.stats.evals += r.len() as u64;
            self.stats.batches += 1;
            let t = Instant::now();
            let evaluator = evaluator.as_mut().expect("evaluator of a pending leaf");
            group.tickets[ev] = Some(evaluator.submit(r)?);
            self.eval_time += t.elapsed();
            submitted = true;
        }
        Ok(submitted)
    }

    /// Self-play: drops the networks no search uses any more.
    fn drop_unused(&mut self, groups: &[Group]) {
        if self.k.mode != Mode::SelfPlay || self.evaluators.iter().flatten().count() <= 1 {
            return;
        }
        for (i, e) in self.evaluators.iter_mut().enumerate() {
            let used = groups
                .iter()
                .any(|g| g.slots.iter().flatten().any(|game| game.ev == i));
            if i != self.current && e.is_some() && !used {
                *e = None;
                self.caches[i] = EvalCache::default();
            }
        }
    }
}

/// Games advanced together: one batch per evaluator per turn.
#[derive(Default)]
struct Group {
    slots: Vec<Option<Game>>,
    /// Per evaluator: the batch being filled (its buffers are reused).
    requests: Vec<Request>,
    /// Per evaluator: the slots whose leaves are in the batch and the batch row answering
    /// each (rows are shared by identical leaves when `eval_cache` is on).
    pending: Vec<Vec<(usize, u32)>>,
    /// Per evaluator, with `eval_cache`: the cache key of each batch row...
    keys: Vec<Vec<u64>>,
    /// ...and the row of each key.
    rows: Vec<HashMap<u64, u32>>,
    /// Per evaluator: the batch submitted and not yet applied.
    tickets: Vec<Option<Ticket>>,
}

impl Group {
    fn new(slots: usize) -> Group {
        Group {
            slots: (0..slots).map(|_| None).collect(),
            ..Group::default()
        }
    }

    /// Per-evaluator buffers for `n` evaluators.
    fn resize(&mut self, n: usize) {
        self.requests.resize_with(n, Request::default);
        self.pending.resize_with(n, Vec::new);
        self.keys.resize_with(n, Vec::new);
        self.rows.resize_with(n, HashMap::new);
        self.tickets.resize_with(n, || None);
    }
}

/// Index of the search to use now.
fn active(game: &Game, mode: Mode) -> usize {
    match mode {
        Mode::SelfPlay => 0,
        Mode::Match => {
            let side = game.searches[0].root().side_to_move();
            if side == Color::Sente {
                game.sente_eval
            } else {
                1 - game.sente_eval
            }
        }
    }
}

/// Chooses and plays the move of a finished search (or the forced one); returns the record
/// if the game ended.
fn finish_move(
    game: &mut Game,
    k: &Settings,
    rng: &mut Rng,
    stats: &mut PlayStats,
) -> Option<GameRecord> {
    if let Some((winner, reason)) = game.start_end.take() {
        return Some(end_game(game, winner, reason, stats));
    }
    let mv = match game.forced.take() {
        Some(mv) => {
            game.record.targets.push(None);
            mv
        }
        None => match choose_move(game, k, rng, stats) {
            Some(mv) => mv,
            None => {
                let loser = game.searches[0].root().side_to_move();
                return Some(end_game(game, Some(loser.flip()), "resignation", stats));
            }
        },
    };
    game.record
        .moves
        .push(game.searches[0].root().move_to_usi(mv));
    for s in game.searches.iter_mut() {
        s.play(mv);
    }
    stats.plies += 1;
    if let Some(o) = game.searches[0].root().outcome() {
        return Some(end_game(game, o.winner, o.reason.name(), stats));
    }
    if game.record.moves.len() >= k.max_plies {
        return Some(end_game(game, None, "move limit", stats));
    }
    None
}

/// The move of a finished search, its training target recorded (self-play, full searches);
/// None when the side to move resigns instead.
fn choose_move(
    game: &mut Game,
    k: &Settings,
    rng: &mut Rng,
    stats: &mut PlayStats,
) -> Option<Move> {
    let (cfg, selfplay) = (k.cfg, k.mode == Mode::SelfPlay);
    let who = active(game, k.mode);
    let pos = game.searches[who].root();
    let side = pos.side_to_move();
    let r = game.searches[who].result();
    let ply = game.record.moves.len() as u32;
    let mv: Move = match (selfplay, k.algorithms[who]) {
        // The policy target is the visit distribution, pruned of the forced playouts when
        // they are on: KataGo chooses its move from the pruned visits too.
        (true, Algorithm::Puct) if ply < cfg.temperature_plies => {
            sample_policy(&r, cfg.temperature, rng.next_f32())
        }
        (true, Algorithm::Gumbel) if ply < cfg.gumbel_sample_plies => {
            sample_policy(&r, cfg.gumbel_temperature, rng.next_f32())
        }
        _ => r.best,
    };
    // Training target.
    let target = (selfplay && game.full).then(|| MoveTarget {
        policy: r
            .moves
            .iter()
            .zip(&r.policy_target)
            .filter(|(_, &p)| p > 0.0)
            .map(|(&m, &p)| (k.encoder.move_to_index(pos, m) as u32, p))
            .collect(),
        value: r.root_value.clamp(-1.0, 1.0),
        surprise: crate::samples::policy_surprise(&r.policy_target, &r.prior),
    });
    stats.samples += target.is_some() as u64;
    game.record.targets.push(target);
    if selfplay && resigns(game, side, r.root_value, cfg) {
        game.record.targets.pop();
        if game.full {
            stats.samples -= 1;
        }
        return None;
    }
    Some(mv)
}

/// Self-play's resignation: counts `side`'s moves in a row with a root value below
/// `-resign_threshold`; whether it resigns now (a no-resign game only notes that it would).
fn resigns(game: &mut Game, side: Color, root_value: f32, cfg: &SelfPlayConfig) -> bool {
    if cfg.resign_consecutive == 0 {
        return false;
    }
    let c = side.index();
    if root_value < -cfg.resign_threshold {
        game.low_streak[c] += 1;
    } else {
        game.low_streak[c] = 0;
    }
    if game.low_streak[c] < cfg.resign_consecutive {
        return false;
    }
    if game.no_resign {
        game.would_resign[c] = true;
        return false;
    }
    true
}

fn end_game(
    game: &mut Game,
    winner: Option<Color>,
    reason: &str,
    stats: &mut PlayStats,
) -> GameRecord {
    game.record.result = rules::GameResult::from_winner(winner);
    game.record.reason = reason.to_string();
    stats.games += 1;
    match winner {
        Some(Color::Sente) => stats.sente_wins += 1,
        Some(Color::Gote) => stats.gote_wins += 1,
        None => stats.draws += 1,
    }
    if reason == "resignation" {
        stats.resigned += 1;
    }
    if game.no_resign {
        stats.no_resign_games += 1;
        for c in Color::ALL {
            if game.would_resign[c.index()] && winner != Some(c.flip()) {
                stats.false_resigns += 1;
            }
        }
    }
    std::mem::replace(
        &mut game.record,
        GameRecord {
            start_sfen: String::new(),
            moves: Vec::new(),
            targets: Vec::new(),
            result: rules::GameResult::Draw,
            reason: String::new(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Position;
    use std::sync::Arc;

    /// The move self-play plays at ply `ply` (the first legal move played `ply` times from
    /// minishogi's start) after a full Gumbel search with a uniform network, whose improved
    /// policy is uniform over the legal moves; with the search's sequential-halving winner.
    fn played_and_best(cfg: &SelfPlayConfig, ply: usize, seed: u64) -> (Move, Move) {
        let variant = Arc::new(Variant::builtin("minishogi").unwrap());
        let encoder = Encoder::new(variant.clone());
        let mut pos = Position::start(variant);
        let mut moves = Vec::new();
        for _ in 0..ply {
            let mv = pos.legal_moves()[0];
            moves.push(pos.move_to_usi(mv));
            pos.make_move(mv);
        }
        let search = SearchConfig {
            algorithm: Algorithm::Gumbel,
            ..SearchConfig::default()
        };
        let mut s = Search::new(search, pos.clone(), seed);
        s.start(16, true);
        while !s.finished() {
            if s.select() {
                let n = s.leaf_moves().len();
                s.expand(&vec![0.0; n], [1.0 / 3.0; 3]);
            }
        }
        let best = s.result().best;
        let mut game = Game {
            searches: vec![s],
            sente_eval: 0,
            index: 0,
            tag: 0,
            ev: 0,
            record: GameRecord {
                start_sfen: String::new(),
                moves,
                targets: vec![None; ply],
                result: rules::GameResult::Draw,
                reason: String::new(),
            },
            full: true,
            no_resign: false,
            low_streak: [0; 2],
            would_resign: [false; 2],
            forced: None,
            start_end: None,
        };
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut stats = PlayStats::default();
        let settings = Settings {
            encoder: &encoder,
            cfg,
            algorithms: vec![Algorithm::Gumbel],
            mode: Mode::SelfPlay,
            max_plies: usize::MAX,
        };
        let end = finish_move(&mut game, &settings, &mut rng, &mut stats);
        assert!(end.is_none(), "the game ended at ply {ply}");
        let played = pos.parse_usi(&game.record.moves[ply]).unwrap();
        (played, best)
    }

    /// `gumbel_sample_plies` (default 0) plays a game's first plies by sampling the improved
    /// policy with `gumbel_temperature` instead of the sequential-halving winner; later plies,
    /// and every ply with the key at 0 or at temperature 0, play the winner.
    #[test]
    fn gumbel_sample_plies_sample_the_improved_policy_in_the_first_plies_only() {
        assert_eq!(SelfPlayConfig::default().gumbel_sample_plies, 0);
        let off = SelfPlayConfig {
            resign_consecutive: 0,
            ..SelfPlayConfig::default()
        };
        let on = SelfPlayConfig {
            gumbel_sample_plies: 4,
            gumbel_temperature: 1.0,
            ..off.clone()
        };
        let cold = SelfPlayConfig {
            gumbel_temperature: 0.0,
            ..on.clone()
        };
        const SEEDS: u64 = 24;
        for ply in [0, 3] {
            let mut sampled = 0;
            for seed in 0..SEEDS {
                let (played, best) = played_and_best(&off, ply, seed);
                assert_eq!(played, best, "key 0, ply {ply}, seed {seed}");
                let (played, best) = played_and_best(&cold, ply, seed);
                assert_eq!(played, best, "temperature 0, ply {ply}, seed {seed}");
                let (played, best) = played_and_best(&on, ply, seed);
                sampled += usize::from(played != best);
            }
            // A uniform improved policy over minishogi's 14 or so moves: the winner is drawn
            // about one time in 14.
            assert!(
                sampled >= SEEDS as usize / 2,
                "ply {ply}: only {sampled} of {SEEDS} moves differ from the winner"
            );
        }
        for ply in [4, 5] {
            for seed in 0..SEEDS {
                let (played, best) = played_and_best(&on, ply, seed);
                assert_eq!(
                    played, best,
                    "ply {ply} (past the sampled plies), seed {seed}"
                );
            }
        }
    }

    /// Progressive budgets, counted by hand: 32 and 8 simulations, from a quarter over 100
    /// generations; off by default and at 0.
    #[test]
    fn progressive_budgets_grow_linearly_to_the_full_ones() {
        let off = SelfPlayConfig {
            full_simulations: 32,
            fast_simulations: 8,
            ..SelfPlayConfig::default()
        };
        assert_eq!(off.progressive_generations, 0);
        assert_eq!(
            (off.simulations(true, 0), off.simulations(false, 0)),
            (32, 8)
        );
        let on = SelfPlayConfig {
            progressive_generations: 100,
            progressive_start: 0.25,
            ..off.clone()
        };
        for (g, full, fast) in [
            (0, 8, 2),    // a quarter
            (50, 20, 5),  // 0.25 + 0.75 * 0.5 = 0.625
            (98, 32, 8),  // 0.985 of 32 = 31.52 and of 8 = 7.88, rounded
            (100, 32, 8), // the full budgets from generation 100 on
            (5000, 32, 8),
        ] {
            assert_eq!(on.simulations(true, g), full, "full at {g}");
            assert_eq!(on.simulations(false, g), fast, "fast at {g}");
        }
        // Never below one simulation.
        let tiny = SelfPlayConfig {
            full_simulations: 2,
            fast_simulations: 1,
            progressive_start: 0.01,
            ..on.clone()
        };
        assert_eq!(
            (tiny.simulations(true, 0), tiny.simulations(false, 0)),
            (1, 1)
        );
        let bad = SelfPlayConfig {
            progressive_start: 0.0,
            ..on
        };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("progressive_start"), "{e}");
    }

    /// The defaults of the `[selfplay]` keys that depend on the machine and the device, resolved
    /// for a CUDA device and for the CPU (the device kind is passed as data: no GPU needed).
    #[test]
    fn device_dependent_defaults_resolve_as_documented() {
        let d = SelfPlayConfig::default();
        assert_eq!(
            (d.threads, d.inference, d.max_batch, d.pipeline, d.precision),
            (0, Inference::Auto, 0, 0, Precision::Auto)
        );
        // threads = 0: the machine's cores.
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(d.search_threads(), cores);
        let three = SelfPlayConfig {
            threads: 3,
            ..d.clone()
        };
        assert_eq!(three.search_threads(), 3);
        // inference = "auto": a server on CUDA, inline on the CPU; an explicit mode holds on both.
        assert!(d.uses_server(true) && !d.uses_server(false));
        for cuda in [false, true] {
            let mode = |inference| SelfPlayConfig {
                inference,
                ..d.clone()
            };
            assert!(mode(Inference::Server).uses_server(cuda));
            assert!(!mode(Inference::Inline).uses_server(cuda));
        }
        // pipeline = 0: two groups a thread with a server (double buffering), one inline.
        assert_eq!((d.groups(true), d.groups(false)), (2, 1));
        let four = SelfPlayConfig {
            pipeline: 4,
            ..d.clone()
        };
        assert_eq!((four.groups(true), four.groups(false)), (4, 4));
        // max_batch = 0: threads x parallel_games; else as given.
        let c = SelfPlayConfig {
            threads: 3,
            parallel_games: 48,
            ..d.clone()
        };
        assert_eq!(c.server_batch(), 3 * 48);
        assert_eq!(d.server_batch(), cores * d.parallel_games);
        let capped = SelfPlayConfig {
            max_batch: 100,
            ..c
        };
        assert_eq!(capped.server_batch(), 100);
    }
}
