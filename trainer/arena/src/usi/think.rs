//! One search of the USI engine, on its worker thread: the search loop, `info` lines,
//! and the `bestmove`.

use super::go::Limits;
use super::{Net, Out};
use crate::error::ArenaError;
use crate::rounds::{self, Driver, Rounds};
use encoding::Encoder;
use rules::{Move, Position};
use search::{Algorithm, EvalCache, Evaluator, Request, Search, SearchConfig, SearchResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Interval between `info` lines during a long search.
const INFO_INTERVAL: Duration = Duration::from_millis(1000);
/// Scale of the cp <-> win-rate logistic.
const CP_SCALE: f64 = 600.0;

/// What the engine tells a running search.
#[derive(Debug, Default)]
pub(crate) struct Control {
    /// `stop` (also `quit`, `gameover`): answer now.
    pub(crate) stop: AtomicBool,
    /// Set while a `go ponder` search waits for `ponderhit`.
    pub(crate) pondering: AtomicBool,
    /// When `ponderhit` came (written before `pondering` is cleared).
    hit: Mutex<Option<Instant>>,
}

impl Control {
    /// A control for a search that ponders or not.
    pub(crate) fn new(ponder: bool) -> Control {
        Control {
            pondering: AtomicBool::new(ponder),
            ..Control::default()
        }
    }

    /// `ponderhit`: the search switches to its clock. False when it was not pondering.
    pub(crate) fn ponderhit(&self) -> bool {
        if !self.pondering.load(Ordering::Acquire) {
            return false;
        }
        *self.hit.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        self.pondering.store(false, Ordering::Release);
        true
    }

    /// When `ponderhit` came (None while pondering, or if it never did).
    fn hit_at(&self) -> Option<Instant> {
        if self.pondering.load(Ordering::Acquire) {
            return None;
        }
        *self.hit.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Everything the worker needs for one search.
pub(crate) struct Job {
    pub(crate) position: Position,
    pub(crate) encoder: Arc<Encoder>,
    pub(crate) config: SearchConfig,
    /// Gumbel rounds under a time limit start at this many simulations, doubling.
    pub(crate) base_simulations: u32,
    pub(crate) limits: Limits,
    pub(crate) started: Instant,
    /// `USI_Hash`: the tree stops growing once its nodes and edges take more than half of
    /// this (their buffers grow by doubling, so they never reserve more than this).
    pub(crate) hash_bytes: u64,
    /// Name the expected reply (`bestmove X ponder Y`).
    pub(crate) ponder_reply: bool,
    /// `MinibatchSize`: leaves one network call evaluates at most.
    pub(crate) minibatch: usize,
    /// The previous search's tree, already moved on to `position` (`ReuseTree`).
    pub(crate) kept: Option<Search>,
    /// `RootMatePlies`: the root's forced wins within this many plies (checks only) are
    /// played at once, and a move after which the opponent has one is not played while
    /// another move is open (0: off).
    pub(crate) root_mate_plies: u32,
}

/// Moves one root mate search may play ([`Position::forced_win_bounded`]): some 10 ms.
const ROOT_MATE_BUDGET: u64 = 10_000;
/// Most root moves the mate guard checks, in the order of their visits.
const ROOT_MATE_CANDIDATES: usize = 8;
/// Share of a timed search kept for the mate guard (1 / this), at most
/// [`ROOT_MATE_MAX_RESERVE`].
const ROOT_MATE_RESERVE_DIV: u32 = 10;
/// Most time kept for the mate guard.
const ROOT_MATE_MAX_RESERVE: Duration = Duration::from_millis(30);

/// The most plies a kept tree is moved on to reach the next position (a GUI's `position`
/// after our move and the reply is two plies on).
const MAX_REUSE_PLIES: usize = 4;

/// The kept tree of the last search moved on to `pos`, when `pos` is the same game at most
/// [`MAX_REUSE_PLIES`] plies after its root; None otherwise (another game, a take-back, a
/// changed start).
pub(crate) fn reuse(mut kept: Search, pos: &Position) -> Option<Search> {
    let from = kept.root().ply();
    let ahead = pos.ply().checked_sub(from)?;
    if ahead > MAX_REUSE_PLIES {
        return None;
    }
    // The same moves from the same position: unmaking them from both gives the same start.
    let mut back = pos.clone();
    for _ in 0..ahead {
        back.unmake_move();
    }
    if back.to_sfen() != kept.root().to_sfen()
        || !back.moves_played().eq(kept.root().moves_played())
    {
        return None;
    }
    for mv in pos.moves_played().skip(from) {
        kept.play(mv);
    }
    (kept.root().to_sfen() == pos.to_sfen()).then_some(kept)
}

/// Runs the search of `job`; returns the network and the tree searched (None when there
/// was none, or the search failed).
pub(crate) fn search_thread(
    mut job: Job,
    mut net: Net,
    control: Arc<Control>,
    done: Arc<AtomicBool>,
    out: Out,
) -> (Net, Option<Search>) {
    let kept = job.kept.take();
    let (answer, tree) = match think(&job, kept, &mut net, &control, &out) {
        Ok(b) => b,
        Err(e) => {
            out.error(&format!("search: {e}"));
            ("resign".to_string(), None)
        }
    };
    // USI: an infinite search answers after `stop`, a pondering one after `ponderhit` or
    // `stop`, also when it has nothing left to do (e.g. its tree is full).
    while !control.stop.load(Ordering::Acquire)
        && (job.limits.infinite || control.pondering.load(Ordering::Acquire))
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    done.store(true, Ordering::Release);
    out.send(&format!("bestmove {answer}"));
    (net, tree)
}

/// The limits in force: before `ponderhit` none but the pondering node budget; after it (or
/// without `go ponder`) the clock, counted from the ponderhit (or `go`).
struct Phase {
    pondering: bool,
    /// When the clock started.
    clock_from: Instant,
    time: Option<Duration>,
    simulations: u64,
}

impl Phase {
    fn new(limits: &Limits, started: Instant) -> Phase {
        Phase {
            pondering: limits.ponder,
            clock_from: started,
            time: limits.time,
            simulations: if limits.ponder {
                limits.ponder_simulations
            } else {
                limits.simulations
            },
        }
    }

    /// Switches to the clock once `ponderhit` has come.
    fn poll(&mut self, control: &Control, limits: &Limits, started: Instant) {
        if !self.pondering {
            return;
        }
        if let Some(hit) = control.hit_at() {
            self.pondering = false;
            self.clock_from = hit;
            self.time = limits.after_ponderhit(hit.saturating_duration_since(started));
            self.simulations = limits.simulations;
        }
    }
}

/// Evaluates `pos` and returns the policy logits of `moves` and the WDL.
fn evaluate(
    net: &mut dyn Evaluator,
    enc: &Encoder,
    pos: &Position,
    moves: &[Move],
) -> Result<(Vec<f32>, [f32; 3]), ArenaError> {
    let mut r = Request::default();
    rounds::add_leaf(enc, &mut r, pos, moves);
    net.evaluate_request(&mut r)?;
    let wdl = *r.wdl.first().ok_or(ArenaError::NoEvaluation)?;
    Ok((r.logits, wdl))
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

/// Runs one search (on `kept`, the previous tree moved on to the position, if any) and
/// prints its info lines; returns the bestmove text (`X` or `X ponder Y`) and the tree.
fn think(
    job: &Job,
    kept: Option<Search>,
    net: &mut Net,
    control: &Control,
    out: &Out,
) -> Result<(String, Option<Search>), ArenaError> {
    let pos = &job.position;
    if pos.legal_moves().is_empty() {
        out.send("info depth 0 score mate 0");
        return Ok(("resign".into(), None));
    }
    if pos.outcome().is_some() {
        return Ok((first_choice(job, net.ev.as_mut(), out)?, None));
    }
    if job.root_mate_plies > 0 && !job.limits.ponder {
        let mut p = pos.clone();
        let legal = p.legal_moves();
        if let Some(m) =
            p.forced_win_bounded(&legal, job.root_mate_plies, &mut { ROOT_MATE_BUDGET })
        {
            // A win within the plies, not at a known distance: USI's `mate +`.
            out.send(&format!(
                "info depth {} nodes 0 score mate + pv {}",
                job.root_mate_plies,
                pos.move_to_usi(m)
            ));
            return Ok((pos.move_to_usi(m), None));
        }
    }
    let mut limits = job.limits;
    if job.root_mate_plies > 0 {
        // The guard's time comes out of the search's.
        limits.time = limits.time.map(|t| t - guard_reserve(t));
    }
    let open_ended = limits.infinite || limits.ponder || limits.time.is_some();
    let rounds = Rounds::new(job.config.algorithm, open_ended, job.base_simulations);
    let mut search = kept.unwrap_or_else(|| Search::new(job.config.clone(), pos.clone(), 0));
    if sims(&search) > 0 {
        out.send(&format!(
            "info string reusing {} simulations of the last search",
            sims(&search)
        ));
    }
    let mut driver = Thinking {
        kept_simulations: sims(&search),
        job,
        net,
        control,
        out,
        phase: Phase::new(&limits, job.started),
        depth: DepthStats::default(),
        last_info: Instant::now(),
        last_early_check: Instant::now(),
    };
    rounds::run(&mut search, rounds, &mut driver)?;
    let result = search.result();
    out.send(&info_line(
        pos,
        &result,
        driver.added(&search),
        job.started,
        &driver.depth,
    ));
    let chosen = match job.root_mate_plies {
        0 => result.best,
        plies => guard(pos, &result, plies, out),
    };
    let best = pos.move_to_usi(chosen);
    let answer = match job.ponder_reply.then(|| ponder_move(&search, chosen)) {
        Some(Some(reply)) => format!("{best} ponder {reply}"),
        _ => best,
    };
    Ok((answer, Some(search)))
}

/// The time a search of `t` keeps for the mate guard.
fn guard_reserve(t: Duration) -> Duration {
    (t / ROOT_MATE_RESERVE_DIV).min(ROOT_MATE_MAX_RESERVE)
}

/// The mate guard: `result.best`, unless the opponent has a forced win within `plies`
/// plies after it (checks only, [`ROOT_MATE_BUDGET`] moves a check); then the most visited of
/// the next [`ROOT_MATE_CANDIDATES`] moves after which none is found, if any.
fn guard(pos: &Position, result: &SearchResult, plies: u32, out: &Out) -> Move {
    let mut order: Vec<usize> = (0..result.moves.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(result.visits[i]));
    if let Some(k) = order.iter().position(|&i| result.moves[i] == result.best) {
        order[..=k].rotate_right(1);
    }
    let mut p = pos.clone();
    let mut refuted = Vec::new();
    for &i in order.iter().take(ROOT_MATE_CANDIDATES) {
        let m = result.moves[i];
        p.make_move(m);
        let replies = p.legal_moves();
        let mate = p.forced_win_bounded(&replies, plies, &mut { ROOT_MATE_BUDGET });
        if let Some(r) = mate {
            refuted.push(format!("{} ({})", pos.move_to_usi(m), p.move_to_usi(r)));
        }
        p.unmake_move();
        if mate.is_none() {
            if !refuted.is_empty() {
                out.send(&format!(
                    "info string mate guard: after {} the opponent mates within {plies} plies; playing {}",
                    refuted.join(", "),
                    pos.move_to_usi(m)
                ));
            }
            return m;
        }
    }
    result.best
}

/// A position over by rule with moves left (repetition, ply limit): no search is possible;
/// plays the network's first choice.
fn first_choice(job: &Job, net: &mut dyn Evaluator, out: &Out) -> Result<String, ArenaError> {
    let pos = &job.position;
    let legal = pos.legal_moves();
    let (logits, wdl) = evaluate(net, &job.encoder, pos, &legal)?;
    let i = (0..legal.len())
        .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
        .expect("moves");
    if let Some(o) = pos.outcome() {
        out.send(&format!(
            "info string the game is over here ({:?})",
            o.reason
        ));
    }
    out.send(&format!(
        "info depth 1 nodes 1 nps 0 score cp {} pv {}",
        cp_of(wdl[0] - wdl[2]),
        pos.move_to_usi(legal[i])
    ));
    Ok(pos.move_to_usi(legal[i]))
}

/// Simulations run so far (the root's own evaluation is not one).
fn sims(s: &Search) -> u64 {
    s.root_visits().saturating_sub(1) as u64
}

/// One engine search in progress: its limits, statistics and network.
struct Thinking<'a> {
    job: &'a Job,
    net: &'a mut Net,
    control: &'a Control,
    out: &'a Out,
    phase: Phase,
    /// Simulations the tree held before this search (a kept tree's; budgets do not count
    /// them).
    kept_simulations: u64,
    depth: DepthStats,
    last_info: Instant,
    last_early_check: Instant,
}

impl Thinking<'_> {
    /// Simulations this search added (budgets and `nodes` count these, not a kept tree's).
    fn added(&self, search: &Search) -> u64 {
        sims(search).saturating_sub(self.kept_simulations)
    }

    /// Whether the tree takes more than its share of `USI_Hash`.
    fn full(&self, search: &Search) -> bool {
        search.memory_bytes() as u64 > self.job.hash_bytes / 2
    }

    /// Sends an `info` line when the last one is older than [`INFO_INTERVAL`].
    fn maybe_info(&mut self, search: &Search) {
        if self.last_info.elapsed() >= INFO_INTERVAL {
            self.last_info = Instant::now();
            let (job, depth) = (self.job, &self.depth);
            let r = search.result();
            let line = info_line(&job.position, &r, self.added(search), job.started, depth);
            self.out.send(&line);
        }
    }

    /// PUCT on the clock: true once the runner-up cannot catch the best move in the time
    /// left (checked every 20 ms).
    fn decided_early(&mut self, search: &Search, on_clock: Duration) -> bool {
        let job = self.job;
        if job.config.algorithm != Algorithm::Puct || self.phase.pondering || job.limits.infinite {
            return false;
        }
        let Some(t) = self.phase.time else {
            return false;
        };
        if self.last_early_check.elapsed() < Duration::from_millis(20) {
            return false;
        }
        self.last_early_check = Instant::now();
        let added = self.added(search);
        let rate = added as f64 / job.started.elapsed().as_secs_f64().max(1e-3);
        let left = (rate * t.saturating_sub(on_clock).as_secs_f64())
            .min(self.phase.simulations.saturating_sub(added) as f64);
        decided(&search.result(), sims(search), left)
    }
}

impl Driver for Thinking<'_> {
    fn left(&mut self, search: &Search) -> u64 {
        self.phase
            .poll(self.control, &self.job.limits, self.job.started);
        if self.full(search) {
            return 0;
        }
        self.phase.simulations.saturating_sub(self.added(search))
    }

    fn stop(&mut self, search: &Search) -> bool {
        if self.control.stop.load(Ordering::Relaxed) {
            return true;
        }
        self.phase
            .poll(self.control, &self.job.limits, self.job.started);
        if self.added(search) >= self.phase.simulations || self.full(search) {
            return true;
        }
        let on_clock = self.phase.clock_from.elapsed();
        if !self.phase.pondering && self.phase.time.is_some_and(|t| on_clock >= t) {
            return true;
        }
        self.maybe_info(search);
        self.decided_early(search, on_clock)
    }

    fn batch(&self) -> usize {
        self.job.minibatch
    }

    fn encoder(&self) -> &Encoder {
        &self.job.encoder
    }

    fn on_leaf(&mut self, leaf: &Position) {
        let d = (leaf.ply() - self.job.position.ply()) as u32;
        if d > 0 {
            self.depth.add(d);
        }
    }

    fn evaluate(&mut self, r: &mut Request) -> Result<(), ArenaError> {
        Ok(self.net.ev.evaluate_request(r)?)
    }

    fn cache(&mut self) -> Option<&mut EvalCache> {
        Some(&mut self.net.cache)
    }
}

/// The expected reply to `best`: the most visited move below it (ties, and a node none of
/// whose moves was visited: the network's prior); None when the search never evaluated the
/// position after `best` (or the game ends there).
fn ponder_move(search: &Search, best: Move) -> Option<String> {
    let (mv, _, _) = search
        .replies(best)
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)))?;
    let mut after = search.root().clone();
    after.make_move(best);
    Some(after.move_to_usi(mv))
}

/// PUCT: true when the runner-up cannot reach the best move's visits with the `left`
/// simulations there is time for.
fn decided(r: &SearchResult, done: u64, left: f64) -> bool {
    if r.visits.len() < 2 || done < 100 {
        return false;
    }
    let mut v = r.visits.clone();
    v.sort_unstable_by(|a, b| b.cmp(a));
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

    /// A search of `n` simulations under uniform answers.
    fn searched(pos: &Position, n: u32) -> Search {
        let config = SearchConfig {
            reuse_tree: true,
            ..SearchConfig::default()
        };
        let mut s = Search::new(config, pos.clone(), 3);
        s.start(n, false);
        while !s.finished() {
            if s.select() {
                let k = s.leaf_moves().len();
                s.expand(&vec![0.0; k], [0.4, 0.2, 0.4]);
            }
        }
        s
    }

    /// A search result over `pos`'s moves whose visits rank `order` first, in that order.
    fn ranked(pos: &Position, order: &[&str]) -> SearchResult {
        let moves = pos.legal_moves();
        let n = moves.len();
        let mut visits = vec![1u32; n];
        for (k, m) in order.iter().enumerate() {
            let i = moves
                .iter()
                .position(|&x| pos.move_to_usi(x) == *m)
                .unwrap();
            visits[i] = 1000 - k as u32;
        }
        let best = moves[visits.iter().enumerate().max_by_key(|v| v.1).unwrap().0];
        SearchResult {
            policy_target: vec![1.0 / n as f32; n],
            best,
            root_value: 0.0,
            root_wdl: [0.0, 1.0, 0.0],
            q: vec![0.0; n],
            prior: vec![1.0 / n as f32; n],
            forced_win: false,
            moves,
            visits,
        }
    }

    #[test]
    fn the_guard_keeps_a_tenth_of_the_time_up_to_30_ms() {
        let ms = Duration::from_millis;
        assert_eq!(guard_reserve(ms(100)), ms(10));
        assert_eq!(guard_reserve(ms(250)), ms(25));
        assert_eq!(guard_reserve(ms(2000)), ms(30));
    }

    #[test]
    fn the_mate_guard_plays_the_most_visited_move_that_does_not_allow_a_mate() {
        let v = Arc::new(rules::Variant::builtin("minishogi").unwrap());
        // A game of our engine (gote) against Fairy-Stockfish: it played 2b1b here, after
        // which 1e1b mates in five plies; the guard at five plies sees it.
        let mut pos = Position::start(v);
        for m in
            "4e4d 2a3b 4d3c 1a2a 3e4d 3b3c 4d3c G*3b 3c2d 3b2b G*4c 2a1a 2e3d 4a3b 3d1b".split(' ')
        {
            pos.play_usi(m).unwrap();
        }
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let out = Out(Arc::new(move |l: &str| {
            sink.lock().unwrap().push(l.to_string())
        }));
        let mates_after = |m: Move, plies| {
            let mut p = pos.clone();
            p.make_move(m);
            let replies = p.legal_moves();
            p.forced_win(&replies, plies).is_some()
        };
        let blunder = pos.parse_usi("2b1b").unwrap();
        assert!(mates_after(blunder, 5) && !mates_after(blunder, 3));
        // Ranked second: a move after which no mate within five plies exists.
        let safe = pos
            .legal_moves()
            .into_iter()
            .find(|&m| m != blunder && !mates_after(m, 5))
            .expect("a move that does not allow a mate");
        let safe_usi = pos.move_to_usi(safe);
        let r = ranked(&pos, &["2b1b", &safe_usi]);
        assert_eq!(r.best, blunder);
        // Three plies see nothing: the search's choice stands, silently.
        assert_eq!(guard(&pos, &r, 3, &out), blunder);
        assert!(lines.lock().unwrap().is_empty());
        // Five: the next most visited move, and a line says why.
        assert_eq!(guard(&pos, &r, 5, &out), safe);
        let said = lines.lock().unwrap().join("\n");
        assert!(
            said.contains("mate guard: after 2b1b (1e1b) the opponent mates within 5 plies")
                && said.contains(&format!("playing {safe_usi}")),
            "{said}"
        );
        // After 2b1b 1e1b every reply allows a mate within three plies: with nothing open
        // the search's choice stands.
        let mut lost = pos.clone();
        lost.make_move(blunder);
        lost.play_usi("1e1b").unwrap();
        let r = ranked(&lost, &[]);
        assert!(r.moves.iter().all(|&m| {
            let mut p = lost.clone();
            p.make_move(m);
            let replies = p.legal_moves();
            p.forced_win(&replies, 3).is_some()
        }));
        assert_eq!(guard(&lost, &r, 3, &out), r.best);
    }

    #[test]
    fn a_kept_tree_moves_on_only_within_the_same_game() {
        let v = Arc::new(rules::Variant::builtin("minishogi").unwrap());
        let mut root = Position::start(v.clone());
        root.play_usi("5e4d").unwrap();
        let s = searched(&root, 300);
        let best = s.result().best;
        let mut next = root.clone();
        next.make_move(best);
        let reply = s.replies(best).into_iter().max_by_key(|r| r.1).unwrap().0;
        next.make_move(reply);
        // Two plies on: the subtree there, with its visits.
        let kept = reuse(searched(&root, 300), &next).expect("the same game two plies on");
        assert_eq!(kept.root().to_sfen(), next.to_sfen());
        assert!(kept.root_visits() > 1, "{}", kept.root_visits());
        // The same position again: the whole tree.
        assert_eq!(
            reuse(searched(&root, 300), &root).unwrap().root_visits(),
            s.root_visits()
        );
        // Another game reaching another position, a take-back, a different first move, too
        // far ahead: no tree.
        assert!(reuse(searched(&root, 300), &Position::start(v.clone())).is_none());
        let mut other = Position::start(v.clone());
        other.play_usi("4e4d").unwrap();
        other.make_move(other.legal_moves()[0]);
        assert!(reuse(searched(&root, 300), &other).is_none());
        let mut far = next.clone();
        for _ in 0..2 {
            let mv = far.legal_moves()[0];
            far.make_move(mv);
        }
        assert!(reuse(searched(&root, 300), &far).is_some(), "four plies on");
        let mv = far.legal_moves()[0];
        far.make_move(mv);
        assert!(reuse(searched(&root, 300), &far).is_none(), "five plies on");
        // The same board set up from its SFEN is another game (no history).
        let sfen = Position::from_sfen(&v, &root.to_sfen()).unwrap();
        assert!(reuse(s, &sfen).is_none());
    }

    #[test]
    fn cp_is_the_logistic_inverse() {
        assert_eq!(cp_of(0.0), 0);
        // s = 0.75 -> 600 ln 3
        assert_eq!(cp_of(0.5), (600.0 * 3f64.ln()).round() as i32);
        assert_eq!(cp_of(-0.5), -cp_of(0.5));
        assert!(cp_of(1.0) > 5000 && cp_of(1.0) < 6000);
    }

    /// A number in [-1, 1) from a text (FNV-1a): a fixed pseudo-random network.
    fn noise(text: &str) -> f32 {
        let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        (h >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// `bestmove X ponder Y`: Y is the reply to X with the most visits in the tree, compared
    /// with the visits of the tree kept after playing X; under a network whose priors often
    /// disagree with the visits.
    #[test]
    fn the_ponder_move_is_the_most_visited_reply() {
        let v = std::sync::Arc::new(rules::Variant::builtin("minishogi").unwrap());
        let mut prior_differs = 0;
        for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
            for seed in 0..6u64 {
                let config = SearchConfig {
                    algorithm,
                    reuse_tree: true,
                    ..SearchConfig::default()
                };
                let mut search = Search::new(config, Position::start(v.clone()), seed);
                search.start(600, false);
                while !search.finished() {
                    if search.select() {
                        let pos = search.leaf_position();
                        let sfen = format!("{seed} {}", pos.to_sfen());
                        let logits: Vec<f32> = search
                            .leaf_moves()
                            .iter()
                            .map(|&m| 3.0 * noise(&format!("{sfen} {}", pos.move_to_usi(m))))
                            .collect();
                        let w = (1.0 + 0.8 * noise(&sfen)) / 2.0;
                        search.expand(&logits, [w, 0.0, 1.0 - w]);
                    }
                }
                let best = search.result().best;
                let replies = search.replies(best);
                let got = ponder_move(&search, best).expect("a searched reply");
                let top_prior = replies
                    .iter()
                    .max_by(|a, b| a.2.total_cmp(&b.2))
                    .map(|r| r.1)
                    .unwrap();
                let mut after = search.root().clone();
                after.make_move(best);
                search.play(best);
                let kept = search.result();
                let most = *kept.visits.iter().max().unwrap();
                assert!(most > 1, "{algorithm:?} seed {seed}: {:?}", kept.visits);
                let i = kept
                    .moves
                    .iter()
                    .position(|&m| after.move_to_usi(m) == got)
                    .expect("the ponder move is a legal reply");
                assert_eq!(kept.visits[i], most, "{algorithm:?} seed {seed}: {got}");
                prior_differs += usize::from(top_prior < most);
            }
        }
        // The network's first choice is not always the most visited reply, so the test tells
        // the two apart.
        assert!(prior_differs > 0);
    }
}
