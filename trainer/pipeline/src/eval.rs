//! The evaluator: plays the newest published network against the previous evaluated one,
//! generation 0 and the fixed anchors of the config, off the critical path (its own thread,
//! at most `evaluation.share` of the wall time). Every match is played as `trainer arena`
//! plays it ([`arena::play_match`]), over openings that stay the same for the whole run:
//! against networks and the `mcts` anchor in lockstep, the games of a match sharing batched
//! network calls; against external engines and timed anchors by the referee.

use crate::config::AnchorConfig;
use crate::error::{Chain, IoOp, PipelineError, Result};
use crate::ladder::Ladder;
use crate::metrics::{thread_cpu_seconds, Reporter};
use crate::run::{GenerationReport, LadderReport, MatchReport, Run};
use crate::Shared;
use arena::{MatchSettings, Opening, Player, Protocol, TimeControl};
use indicatif::ProgressBar;
use model::Device;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Simulations cap of our network under a time control (the time decides).
const TIMED_NODES: u32 = 1_000_000;

/// Who the evaluated network plays.
enum Opponent<'p> {
    /// Another network of the run.
    Generation(u64),
    /// A fixed anchor (kept between evaluations: an engine stays started).
    Anchor(&'p mut Player),
}

struct Anchor {
    cfg: AnchorConfig,
    player: Option<Player>,
    broken: bool,
}

/// The run's ladder: its rungs' players (started when first played, then kept) and the last
/// rating, which picks the rungs of the next evaluation.
struct LadderState {
    ladder: Ladder,
    players: Vec<Option<Player>>,
    broken: Vec<bool>,
    last: Option<f64>,
}

/// The evaluator's state.
pub struct Evaluator<'a> {
    run: &'a Run,
    shared: &'a Shared,
    reporter: &'a Reporter,
    anchors: Vec<Anchor>,
    openings: Vec<Opening>,
    last: u64,
    rounds: u64,
    busy: Duration,
    started: Instant,
    bar: Option<ProgressBar>,
    ladder: Option<LadderState>,
    /// CPU seconds of the evaluator thread (its external engines not included).
    pub cpu_seconds: f64,
    /// Games played (every match, hands counted one by one).
    pub games: u64,
    /// The thread's CPU seconds when it started evaluating.
    cpu0: f64,
}

impl<'a> Evaluator<'a> {
    /// An evaluator continuing after the last generation in the state's history.
    pub fn new(run: &'a Run, shared: &'a Shared, reporter: &'a Reporter) -> Evaluator<'a> {
        let ec = &run.cfg.evaluation;
        let most = ec
            .anchors
            .iter()
            .map(|a| a.games)
            .chain([ec.games, ec.ladder_games.div_ceil(2)])
            .max()
            .unwrap_or(2);
        let openings = arena::random_openings(
            &run.variant,
            ec.opening_plies,
            most.div_ceil(2).max(1),
            run.cfg.seed ^ 0x0BE7_1235,
        );
        let history = shared.get().history;
        let last = history.last().map_or(0, |h| h.generation);
        let ladder = run
            .ladder()
            .unwrap_or_else(|e| {
                reporter.log(&format!(
                    "ladder: {}; the run is evaluated without it",
                    e.chain()
                ));
                None
            })
            .map(|l| {
                let n = l.spec.rungs.len();
                LadderState {
                    ladder: l,
                    players: (0..n).map(|_| None).collect(),
                    broken: vec![false; n],
                    last: history
                        .iter()
                        .rev()
                        .find_map(|h| h.ladder.as_ref().map(|r| r.elo)),
                }
            });
        Evaluator {
            run,
            shared,
            reporter,
            anchors: ec
                .anchors
                .iter()
                .map(|a| Anchor {
                    cfg: a.clone(),
                    player: None,
                    broken: false,
                })
                .collect(),
            openings,
            last,
            rounds: 0,
            busy: Duration::ZERO,
            started: Instant::now(),
            bar: None,
            ladder,
            cpu_seconds: 0.0,
            games: 0,
            cpu0: 0.0,
        }
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed) || self.shared.get().complete
    }

    /// Evaluates new generations until the run completes or stops.
    pub fn run(&mut self, bar: Option<&ProgressBar>) -> Result<()> {
        self.bar = bar.cloned();
        self.cpu0 = thread_cpu_seconds();
        let ec = self.run.cfg.evaluation.clone();
        let nothing = ec.games == 0 || !(ec.vs_previous || ec.vs_first);
        if nothing && self.anchors.is_empty() && self.ladder.is_none() {
            return Ok(());
        }
        while !self.stopped() {
            let newest = self.shared.get().generation;
            let over_share =
                self.busy.as_secs_f64() > ec.share * self.started.elapsed().as_secs_f64();
            if newest < self.last + ec.every || over_share {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            let t = Instant::now();
            let r = self.evaluate(newest);
            self.busy += t.elapsed();
            r?;
        }
        self.cpu_seconds = thread_cpu_seconds() - self.cpu0;
        Ok(())
    }

    fn model_player(&self, gen: u64, nodes: u32) -> Result<Player> {
        let path = self.run.model_path(gen);
        Ok(Player::from_spec(
            &format!("model:{}", path.display()),
            Protocol::Usi,
            &[],
            &self.run.variant,
            nodes,
            self.run.cfg.device,
            &crate::ModelOpener,
        )?)
    }

    /// One match of `gen` against `opp`; None when the run stopped during it.
    fn play(
        &mut self,
        gen: u64,
        opp: Opponent<'_>,
        label: &str,
        games: usize,
        tc: TimeControl,
        max_plies: Option<u32>,
    ) -> Result<Option<MatchReport>> {
        let bar = self.bar.as_ref();
        let ec = &self.run.cfg.evaluation;
        let ours_nodes = match tc {
            TimeControl::Nodes(_) => ec.simulations,
            _ => TIMED_NODES,
        };
        let mut a = self.model_player(gen, ours_nodes)?;
        let mut owned;
        let b = match opp {
            Opponent::Generation(g) => {
                owned = self.model_player(g, ec.simulations)?;
                &mut owned
            }
            Opponent::Anchor(p) => p,
        };
        let settings = MatchSettings {
            tc,
            max_plies: max_plies.unwrap_or(self.run.cfg.selfplay.max_plies),
            ..MatchSettings::default()
        };
        if let Some(bar) = bar {
            bar.set_length(games as u64);
            bar.set_position(0);
            bar.set_message(format!("vs {label}"));
        }
        let mut lines = String::new();
        let mut aborted = false;
        let mut broken = 0;
        let mut played = 0;
        let tally = arena::play_match(
            &self.run.variant,
            &mut a,
            b,
            &settings,
            &self.openings,
            games as u32,
            &mut |g, _| {
                lines.push_str(&g.record_line);
                lines.push('\n');
                played += 1;
                broken += u64::from(g.broken() && g.a_score() == arena::Score::Win);
                if let Some(bar) = bar {
                    bar.inc(1);
                }
                aborted = self.stopped();
                !aborted
            },
        )?;
        self.games += played;
        if aborted {
            return Ok(None);
        }
        let games_dir = self.run.dir.join("games");
        std::fs::create_dir_all(&games_dir).map_err(PipelineError::io(IoOp::Create, &games_dir))?;
        model::write_atomic(
            &games_dir.join(format!("{gen:06}-vs-{label}.txt")),
            lines.as_bytes(),
        )?;
        let e = tally.elo();
        Ok(Some(MatchReport {
            opponent: label.to_string(),
            wins: tally.wins,
            draws: tally.draws,
            losses: tally.losses,
            score: e.score,
            elo: e.elo,
            elo_low: e.low,
            elo_high: e.high,
            broken,
        }))
    }

    fn evaluate(&mut self, gen: u64) -> Result<()> {
        let ec = self.run.cfg.evaluation.clone();
        let state = self.shared.get();
        let prev = if ec.gating { state.best } else { self.last };
        let mut rep = GenerationReport {
            generation: gen,
            seconds: state.seconds,
            matches: Vec::new(),
            promoted: !ec.gating,
            ladder: None,
        };
        // Each part is false when the run stopped during it.
        if !self.play_generations(gen, prev, &mut rep.matches)?
            || !self.play_anchors(gen, &mut rep.matches)?
        {
            return Ok(());
        }
        if self.ladder.is_some() && self.rounds.is_multiple_of(ec.ladder_every) {
            match self.play_ladder(gen)? {
                Some((matches, ladder)) => {
                    rep.matches.extend(matches);
                    rep.ladder = ladder;
                }
                None => return Ok(()),
            }
        }
        if ec.gating {
            rep.promoted = rep
                .matches
                .first()
                .is_some_and(|r| r.score >= ec.gating_score);
        }
        self.rounds += 1;
        self.last = gen;
        self.record(rep)
    }

    /// `gen` against earlier networks: the previous one (the gate's under gating) and
    /// generation 0; false when the run stopped during a match.
    fn play_generations(
        &mut self,
        gen: u64,
        prev: u64,
        out: &mut Vec<MatchReport>,
    ) -> Result<bool> {
        let run = self.run;
        let ec = &run.cfg.evaluation;
        let mut opponents = Vec::new();
        if ec.games > 0 && ec.vs_previous && prev != gen {
            opponents.push(prev);
        }
        if ec.games > 0 && ec.vs_first && gen != 0 && !(ec.vs_previous && prev == 0) {
            opponents.push(0);
        }
        let nodes = TimeControl::Nodes(ec.simulations);
        for g in opponents {
            let opp = Opponent::Generation(g);
            match self.play(gen, opp, &format!("gen{g}"), ec.games, nodes, None)? {
                Some(r) => out.push(r),
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// `gen` against the anchors due this round; false when the run stopped during a match.
    fn play_anchors(&mut self, gen: u64, out: &mut Vec<MatchReport>) -> Result<bool> {
        for i in 0..self.anchors.len() {
            if self.anchors[i].broken || !self.rounds.is_multiple_of(self.anchors[i].cfg.every) {
                continue;
            }
            let Some(mut player) = self.anchor_player(i) else {
                continue;
            };
            let a = self.anchors[i].cfg.clone();
            let tc = if a.movetime > 0 {
                TimeControl::Movetime(a.movetime)
            } else {
                TimeControl::Nodes(a.nodes)
            };
            let opp = Opponent::Anchor(&mut player);
            let r = self.play(gen, opp, &a.name, a.games, tc, None);
            self.anchors[i].player = Some(player);
            match r? {
                Some(r) => out.push(r),
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Anchor `i`'s player, started when first played, then kept; None when it cannot start
    /// (it is then left out of the run's evaluation, with a warning).
    fn anchor_player(&mut self, i: usize) -> Option<Player> {
        if let Some(p) = self.anchors[i].player.take() {
            return Some(p);
        }
        let a = &self.anchors[i].cfg;
        let options: Vec<(String, String)> = a
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let protocol = a.protocol.parse().unwrap_or(Protocol::Usi);
        let variant = &self.run.variant;
        match Player::from_spec(
            &a.player,
            protocol,
            &options,
            variant,
            a.nodes,
            Device::Cpu,
            &crate::ModelOpener,
        ) {
            Ok(p) => Some(p),
            Err(e) => {
                self.reporter.log(&format!(
                    "anchor {}: cannot start ({}); it is left out of this run's evaluation",
                    a.name,
                    Chain(&e)
                ));
                self.anchors[i].broken = true;
                None
            }
        }
    }

    /// Plays the two rungs nearest the last rating and rates `gen` on the ladder; None when the run
    /// stopped during it. A rung whose player cannot start is left out with a warning.
    #[allow(clippy::type_complexity)]
    fn play_ladder(
        &mut self,
        gen: u64,
    ) -> Result<Option<(Vec<MatchReport>, Option<LadderReport>)>> {
        let Some(mut st) = self.ladder.take() else {
            return Ok(Some((Vec::new(), None)));
        };
        let r = self.play_ladder_with(gen, &mut st);
        self.ladder = Some(st);
        r
    }

    #[allow(clippy::type_complexity)]
    fn play_ladder_with(
        &mut self,
        gen: u64,
        st: &mut LadderState,
    ) -> Result<Option<(Vec<MatchReport>, Option<LadderReport>)>> {
        let games = self.run.cfg.evaluation.ladder_games / 2;
        let mut matches = Vec::new();
        let mut tallies = Vec::new();
        for i in st.ladder.rungs_nearest(st.last) {
            if st.broken[i] {
                continue;
            }
            let rung = st.ladder.spec.rungs[i].clone();
            if st.players[i].is_none() {
                match rung.player(&self.run.variant) {
                    Ok(p) => st.players[i] = Some(p),
                    Err(e) => {
                        self.reporter.log(&format!(
                            "ladder rung {}: cannot start ({}); it is left out of this run's ladder",
                            rung.name,
                            e.chain()
                        ));
                        st.broken[i] = true;
                        continue;
                    }
                }
            }
            let Some(mut player) = st.players[i].take() else {
                continue;
            };
            let max_plies = Some(st.ladder.spec.max_plies).filter(|&m| m > 0);
            let tc = rung.time_control();
            let r = self.play(
                gen,
                Opponent::Anchor(&mut player),
                &rung.name,
                games,
                tc,
                max_plies,
            );
            st.players[i] = Some(player);
            let Some(m) = r? else {
                return Ok(None);
            };
            if m.broken > 0 {
                self.reporter.log(&format!(
                    "ladder rung {}: {} games ended by its failure, not by play; it is left out of this run's ladder",
                    rung.name, m.broken
                ));
                st.broken[i] = true;
                matches.push(m);
                continue;
            }
            tallies.push((i, arena::Tally::new(m.wins, m.draws, m.losses)));
            matches.push(m);
        }
        let rating = st.ladder.place(&tallies).map(|x| LadderReport {
            name: st.ladder.name.clone(),
            elo: x.elo,
            low: x.low,
            high: x.high,
            games: x.games,
            rungs: tallies
                .iter()
                .map(|(i, _)| (st.ladder.spec.rungs[*i].name.clone(), st.ladder.elo[*i]))
                .collect(),
        });
        if let Some(r) = &rating {
            st.last = Some(r.elo);
            for (rung, elo) in st.ladder.spec.rungs.iter().zip(&st.ladder.elo) {
                self.reporter
                    .scalar(&format!("ladder/rung/{}", rung.name), *elo, gen);
            }
        }
        Ok(Some((matches, rating)))
    }

    fn record(&mut self, rep: GenerationReport) -> Result<()> {
        let gen = rep.generation;
        let mut parts = Vec::new();
        for r in &rep.matches {
            self.reporter
                .scalar(&format!("elo/vs_{}", r.opponent), r.elo, gen);
            self.reporter
                .scalar(&format!("score/vs_{}", r.opponent), r.score, gen);
            parts.push(format!(
                "vs {} {}",
                r.opponent,
                arena::result_line(
                    [r.wins, r.draws, r.losses],
                    r.score,
                    [r.elo, r.elo_low, r.elo_high]
                )
            ));
        }
        if let Some(l) = &rep.ladder {
            self.reporter.scalar("elo/ladder", l.elo, gen);
            self.reporter.scalar("elo/ladder_low", l.low, gen);
            self.reporter.scalar("elo/ladder_high", l.high, gen);
            let rungs: Vec<String> = l
                .rungs
                .iter()
                .map(|(n, e)| format!("{n} {e:+.0}"))
                .collect();
            parts.push(format!(
                "on the {} ladder Elo {:+.0} [{:+.0}, {:+.0}] from {} games ({})",
                l.name,
                l.elo,
                l.low,
                l.high,
                l.games,
                rungs.join(", ")
            ));
        }
        // What evaluating costs: the thread's CPU per game so far (engines not counted).
        self.cpu_seconds = thread_cpu_seconds() - self.cpu0;
        self.reporter.scalar("eval/games", self.games as f64, gen);
        if self.games > 0 {
            let per_game = self.cpu_seconds / self.games as f64;
            self.reporter
                .scalar("eval/cpu_seconds_per_game", per_game, gen);
        }
        let gating = self.run.cfg.evaluation.gating;
        self.reporter.log(&format!(
            "gen {gen} evaluated (published at {:.0}s): {}{}",
            rep.seconds,
            parts.join("; "),
            match (gating, rep.promoted) {
                (false, _) => "",
                (true, true) => "; promoted",
                (true, false) => "; rejected by the gate",
            }
        ));
        self.reporter.flush();
        self.shared.update(|s| {
            if gating && rep.promoted && gen > s.best {
                s.best = gen;
            }
            s.history.push(rep);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// The evaluator starts an evaluation only while it has spent at most `share` of the wall
    /// time since it started evaluating; an evaluation once started plays to its end. A new
    /// network is published every 100 ms, so an evaluator without the limit would play without
    /// pause. Each evaluation's start is read from its report (`seconds`: the state's run time
    /// when it started, which this test keeps current), its end from when the report appears.
    #[test]
    fn evaluations_start_only_within_the_share() {
        const SHARE: f64 = 0.25;
        const EVALUATIONS: usize = 3;
        let root = std::env::temp_dir().join(format!("eval-share-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let cfg = root.join("share.toml");
        std::fs::write(
            &cfg,
            format!(
                "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1000\n\
                 steps_per_generation = 10\n[selfplay]\nmax_plies = 40\n\
                 [evaluation]\ngames = 6\nsimulations = 256\nvs_first = false\nshare = {SHARE}\n"
            ),
        )
        .unwrap();
        let run = Run::open(&cfg, &root.join("runs"), false).unwrap();
        let shared = Shared::new(&run, Arc::new(AtomicBool::new(false))).unwrap();
        let reporter = Reporter::new(None, Box::new(crate::metrics::NoMetrics));
        let zero = run.model_path(0);
        let publish = |gen: u64| {
            let path = run.model_path(gen);
            std::fs::copy(&zero, &path).unwrap();
            std::fs::copy(zero.with_extension("json"), path.with_extension("json")).unwrap();
            shared
                .update(|s| {
                    s.generation = gen;
                    s.best = gen;
                })
                .unwrap();
        };
        // (start, end) of each evaluation, in seconds since before the evaluator was made.
        let mut spans: Vec<(f64, f64)> = Vec::new();
        let t0 = Instant::now();
        let wall = std::thread::scope(|s| {
            let ev = s.spawn(|| Evaluator::new(&run, &shared, &reporter).run(None));
            let mut gen = 0;
            let mut last_publish = t0;
            // (A failed test must stop the evaluator first, or the scope would wait for it.)
            while spans.len() < EVALUATIONS && t0.elapsed() < Duration::from_secs(120) {
                let now = t0.elapsed().as_secs_f64();
                if last_publish.elapsed() >= Duration::from_millis(100) {
                    gen += 1;
                    publish(gen);
                    last_publish = Instant::now();
                }
                shared.update(|s| s.seconds = now).unwrap();
                let history = shared.get().history;
                for h in &history[spans.len()..] {
                    spans.push((h.seconds, t0.elapsed().as_secs_f64()));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            shared.stop.store(true, Ordering::SeqCst);
            ev.join().unwrap().unwrap();
            t0.elapsed().as_secs_f64()
        });
        assert!(spans.len() >= EVALUATIONS, "{spans:?} in {wall:.0} s");
        // Evaluations follow one another: one ends before the next starts.
        for k in 1..spans.len() {
            spans[k - 1].1 = spans[k - 1].1.min(spans[k].0);
        }
        eprintln!("evaluations (start, end) in s: {spans:?}");
        let longest = spans.iter().map(|(a, b)| b - a).fold(0.0, f64::max);
        assert!(
            longest > 0.3,
            "evaluations too short to see the share: {spans:?}"
        );
        // The time evaluating before each start (over-estimated by the polling, 10 ms or more
        // on a loaded machine at each end) is within the share of the time to that start.
        let slack = |k: usize| 0.2 + 0.05 * k as f64;
        let mut busy = 0.0;
        for (k, &(start, end)) in spans.iter().enumerate() {
            assert!(
                busy <= SHARE * start + slack(k),
                "evaluation {k} started at {start:.2} s after {busy:.2} s of evaluations: {spans:?}"
            );
            busy += end - start;
        }
        // So over the whole run, the evaluator's time stays within the share plus one evaluation.
        assert!(
            busy <= SHARE * wall + longest + slack(spans.len()),
            "{busy:.2} s of evaluations in {wall:.2} s: {spans:?}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[cfg(test)]
#[path = "eval_keys_tests.rs"]
mod keys_tests;
