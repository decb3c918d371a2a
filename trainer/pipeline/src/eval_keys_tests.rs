//! What the `[evaluation]` keys of a run config do, on evaluations of copies of generation 0 (a
//! tiny network, a few short games each): `every`, `games`, `simulations`, `vs_previous`,
//! `vs_first`, `gating` and `gating_score`, `opening_plies`, the anchors (`mcts` with `nodes`,
//! `every`, an engine that cannot start) and `ladder_every`, and where the scores go (the log,
//! state.json and the scalars of TensorBoard).

use super::*;
use crate::metrics::Metrics;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Every scalar recorded, as (tag, value, step).
#[derive(Clone, Default)]
struct Scalars(Arc<Mutex<Vec<(String, f64, u64)>>>);

impl Metrics for Scalars {
    fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        self.0.lock().unwrap().push((tag.to_string(), value, step));
    }
    fn flush(&mut self) {}
}

impl Scalars {
    /// (step, value) of every `tag` recorded.
    fn of(&self, tag: &str) -> Vec<(u64, f64)> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|s| s.0 == tag)
            .map(|s| (s.2, s.1))
            .collect()
    }

    /// Whether `tag` was recorded at `step` with `value` (as state.json keeps it: to a
    /// rounding).
    fn has(&self, tag: &str, step: u64, value: f64) -> bool {
        self.of(tag)
            .iter()
            .any(|&(s, v)| s == step && (v - value).abs() <= 1e-9 * value.abs().max(1.0))
    }
}

/// A fresh run with the `[evaluation]` table `evaluation` (keys, then any anchors), and what
/// an evaluator of it needs.
struct Setup {
    root: PathBuf,
    run: Run,
    shared: Shared,
    reporter: Reporter,
    scalars: Scalars,
}

impl Setup {
    fn new(name: &str, evaluation: &str) -> Setup {
        let root = std::env::temp_dir().join(format!("eval-keys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Setup::in_dir(root, name, evaluation)
    }

    fn in_dir(root: PathBuf, name: &str, evaluation: &str) -> Setup {
        let cfg = root.join(format!("{name}.toml"));
        std::fs::write(
            &cfg,
            format!(
                "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 100\n\
                 steps_per_generation = 10\n[selfplay]\nmax_plies = 30\n\
                 [evaluation]\nshare = 1.0\nsimulations = 4\n{evaluation}"
            ),
        )
        .unwrap();
        let run = Run::open(&cfg, &root.join("runs"), false).unwrap();
        let shared = Shared::new(&run, Arc::new(AtomicBool::new(false))).unwrap();
        let scalars = Scalars::default();
        let reporter = Reporter::new(
            Some(&run.dir.join("log.txt")),
            Box::new(scalars.clone()) as Box<dyn Metrics>,
        );
        Setup {
            root,
            run,
            shared,
            reporter,
            scalars,
        }
    }

    fn evaluator(&self) -> Evaluator<'_> {
        Evaluator::new(&self.run, &self.shared, &self.reporter)
    }

    /// Publishes a copy of generation 0 as `gen`; without gating it becomes the self-play
    /// network.
    fn publish(&self, gen: u64) {
        let zero = self.run.model_path(0);
        let path = self.run.model_path(gen);
        std::fs::copy(&zero, &path).unwrap();
        std::fs::copy(zero.with_extension("json"), path.with_extension("json")).unwrap();
        let gating = self.run.cfg.evaluation.gating;
        self.shared
            .update(|s| {
                s.generation = gen;
                if !gating {
                    s.best = gen;
                }
            })
            .unwrap();
    }

    /// The report of generation `gen`'s evaluation.
    fn report(&self, gen: u64) -> GenerationReport {
        let h = self.shared.get().history;
        h.into_iter()
            .find(|h| h.generation == gen)
            .unwrap_or_else(|| panic!("generation {gen} was not evaluated"))
    }

    /// The opponents generation `gen` played, in order.
    fn opponents(&self, gen: u64) -> Vec<String> {
        self.report(gen)
            .matches
            .iter()
            .map(|m| m.opponent.clone())
            .collect()
    }

    /// The games of `gen` against `label` as written in games/: (start SFEN, moves, result).
    fn games(&self, gen: u64, label: &str) -> Vec<(String, Vec<String>, String)> {
        let path = self
            .run
            .dir
            .join("games")
            .join(format!("{gen:06}-vs-{label}.txt"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| {
                let rest = l.strip_prefix("sfen ").unwrap_or_else(|| panic!("{l}"));
                let (sfen, rest) = rest.split_once(" moves ").unwrap_or_else(|| panic!("{l}"));
                let (moves, rest) = rest.split_once(" result ").unwrap_or_else(|| panic!("{l}"));
                let result = rest.split(' ').next().unwrap().to_string();
                let moves = moves.split_whitespace().map(String::from).collect();
                (sfen.to_string(), moves, result)
            })
            .collect()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.run.dir.join("log.txt")).unwrap_or_default()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `vs_previous` plays the previously evaluated network, `vs_first` generation 0, each match
/// of `games` games (all of them in games/).
#[test]
fn vs_previous_and_vs_first_pick_the_opponents_of_matches_of_games_games() {
    for (vs_previous, vs_first, third) in [
        (true, true, vec!["gen1", "gen0"]),
        (true, false, vec!["gen1"]),
        (false, true, vec!["gen0"]),
    ] {
        let t = Setup::new(
            &format!("vs-{vs_previous}-{vs_first}"),
            &format!("games = 2\nvs_previous = {vs_previous}\nvs_first = {vs_first}\n"),
        );
        let mut ev = t.evaluator();
        t.publish(1);
        ev.evaluate(1).unwrap();
        assert_eq!(t.opponents(1), ["gen0"], "{vs_previous} {vs_first}");
        t.publish(2);
        t.publish(3);
        ev.evaluate(3).unwrap();
        assert_eq!(t.opponents(3), third, "{vs_previous} {vs_first}");
        for gen in [1, 3] {
            for m in &t.report(gen).matches {
                assert_eq!(m.wins + m.draws + m.losses, 2, "{m:?}");
                assert_eq!(t.games(gen, &m.opponent).len(), 2, "{m:?}");
            }
        }
    }
}

/// With `every = 2` the evaluator waits for two generations past the last evaluated one and
/// then takes the newest.
#[test]
fn every_evaluates_the_newest_network_at_most_every_n_generations() {
    let t = Setup::new("every", "every = 2\ngames = 2\nvs_first = false\n");
    let evaluated = || -> Vec<u64> {
        t.shared
            .get()
            .history
            .iter()
            .map(|h| h.generation)
            .collect()
    };
    let wait_for = |n: usize| {
        let t0 = Instant::now();
        while evaluated().len() < n && t0.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // The evaluator polls every 200 ms: a second is five looks.
    let look = || std::thread::sleep(Duration::from_secs(1));
    let seen = std::thread::scope(|s| {
        let h = s.spawn(|| t.evaluator().run(None));
        let mut seen = Vec::new();
        {
            // A failed step stops the evaluator too, or the scope would wait for it.
            struct StopOnDrop<'a>(&'a AtomicBool);
            impl Drop for StopOnDrop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
            let _stop = StopOnDrop(&t.shared.stop);
            t.publish(1);
            look();
            seen.push(evaluated());
            t.publish(2);
            wait_for(1);
            seen.push(evaluated());
            t.publish(3);
            look();
            seen.push(evaluated());
            t.publish(5);
            wait_for(2);
            seen.push(evaluated());
        }
        h.join().unwrap().unwrap();
        seen
    });
    assert_eq!(seen, [vec![], vec![2], vec![2], vec![2, 5]]);
    assert_eq!(t.opponents(5), ["gen2"]);
}

/// With gating, a network becomes the self-play network only when it scores `gating_score`
/// against the current one, which is also the opponent of the next evaluation.
#[test]
fn gating_switches_self_play_only_at_the_gating_score() {
    for gating_score in [1.0, 0.0] {
        let t = Setup::new(
            &format!("gating-{gating_score}"),
            &format!(
                "games = 4\nvs_first = false\ngating = true\ngating_score = {gating_score:?}\n"
            ),
        );
        let mut ev = t.evaluator();
        t.publish(1);
        assert_eq!(t.shared.get().best, 0);
        ev.evaluate(1).unwrap();
        let r = t.report(1);
        assert_eq!(t.opponents(1), ["gen0"]);
        let score = r.matches[0].score;
        // Two copies of one network: the colours alternate over shared openings.
        assert!(score < 1.0, "{r:?}");
        let passes = score >= gating_score;
        assert_eq!(passes, gating_score == 0.0, "{r:?}");
        assert_eq!(r.promoted, passes, "{r:?}");
        let best = if passes { 1 } else { 0 };
        assert_eq!(t.shared.get().best, best);
        assert_eq!(t.run.load_state().unwrap().best, best);
        let word = if passes {
            "; promoted"
        } else {
            "; rejected by the gate"
        };
        assert!(t.log().contains(word), "{}", t.log());
        // The next network plays the self-play network, not the last one evaluated.
        t.publish(2);
        ev.evaluate(2).unwrap();
        assert_eq!(t.opponents(2), [format!("gen{best}")]);
    }
}

/// `opening_plies` random plies start every pair of games, the same openings in every
/// evaluation of the run, also after a restart (a new evaluator).
#[test]
fn opening_plies_are_the_same_random_plies_in_every_evaluation() {
    const PLIES: usize = 3;
    let t = Setup::new(
        "openings",
        &format!("games = 4\nvs_first = false\nopening_plies = {PLIES}\n"),
    );
    let start = rules::Position::start(t.run.variant.clone()).to_sfen();
    let mut ev = t.evaluator();
    for gen in 1..=2 {
        t.publish(gen);
        ev.evaluate(gen).unwrap();
    }
    drop(ev);
    t.publish(3);
    t.evaluator().evaluate(3).unwrap();
    let openings = |gen: u64| {
        let games = t.games(gen, &format!("gen{}", gen - 1));
        assert_eq!(games.len(), 4);
        let mut o: Vec<Vec<String>> = games
            .into_iter()
            .map(|(sfen, moves, _)| {
                assert_eq!(sfen, start);
                assert!(moves.len() > PLIES, "{moves:?}");
                moves[..PLIES].to_vec()
            })
            .collect();
        o.sort();
        o
    };
    let first = openings(1);
    // Two openings, each played with both colours.
    assert_eq!(first[0], first[1]);
    assert_eq!(first[2], first[3]);
    assert_ne!(first[0], first[2]);
    assert_eq!(openings(2), first);
    assert_eq!(openings(3), first);
}

/// `simulations` is the search budget of our networks in matches: the same networks play the
/// same games again at the same budget and other games at another.
#[test]
fn simulations_set_the_search_budget_of_the_networks_in_matches() {
    let t = Setup::new("sims", "games = 2\nvs_first = false\n");
    for gen in 1..=3 {
        t.publish(gen);
    }
    let mut run = t.run.clone();
    let mut play = |gen: u64, simulations: u32| {
        run.cfg.evaluation.simulations = simulations;
        Evaluator::new(&run, &t.shared, &t.reporter)
            .evaluate(gen)
            .unwrap();
        t.games(gen, &format!("gen{}", gen - 1))
    };
    let a = play(1, 1);
    let b = play(2, 1);
    let c = play(3, 32);
    assert_eq!(a, b, "one simulation, two evaluations of the same network");
    assert_ne!(a, c, "1 and 32 simulations played the same games");
}

const LADDER: &str = r#"
variant = "minishogi"
zero = "r8"
opening_plies = 2
max_plies = 30

[[rungs]]
name = "r1"
player = "mcts"
nodes = 1

[[rungs]]
name = "r8"
player = "mcts"
nodes = 8
"#;

const CALIBRATION: &str = r#"command = "written by a test"
unix_time = 0
machine = "none"
pairings = []

[ratings.r1]
elo = -200.0
low = -300.0
high = -100.0
games = 10

[ratings.r8]
elo = 0.0
low = 0.0
high = 0.0
games = 10
"#;

/// Anchors play every `every` evaluations (`mcts` with `nodes` simulations), the ladder every
/// `ladder_every`; an engine that cannot start is left out with a warning. The scores and Elo
/// go to the log, state.json and the scalars `score/vs_<name>`, `elo/vs_<name>` and
/// `elo/ladder`, `elo/ladder_low`, `elo/ladder_high`.
#[test]
fn anchors_and_the_ladder_play_every_n_evaluations_and_report_everywhere() {
    let root = std::env::temp_dir().join(format!("eval-keys-{}-anchors", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let ladder = root.join("mini.toml");
    std::fs::write(&ladder, LADDER).unwrap();
    std::fs::write(root.join("mini.calibration.toml"), CALIBRATION).unwrap();
    let t = Setup::in_dir(
        root,
        "anchors",
        &format!(
            "games = 0\nladder = \"{}\"\nladder_games = 2\nladder_every = 3\n\
             [[evaluation.anchors]]\nname = \"few\"\nplayer = \"mcts\"\nnodes = 1\ngames = 2\nevery = 2\n\
             [[evaluation.anchors]]\nname = \"many\"\nplayer = \"mcts\"\nnodes = 2000\ngames = 2\nevery = 2\n\
             [[evaluation.anchors]]\nname = \"dead\"\nplayer = \"engine:false\"\ngames = 2\n",
            ladder.display()
        ),
    );
    let mut ev = t.evaluator();
    for gen in 1..=4 {
        t.publish(gen);
        ev.evaluate(gen).unwrap();
    }
    let anchors = ["few", "many"];
    let ladder_rungs = ["r1", "r8"];
    // Rounds 0 to 3: the anchors in rounds 0 and 2, the ladder in rounds 0 and 3.
    let expect: [Vec<&str>; 4] = [
        anchors.iter().chain(&ladder_rungs).copied().collect(),
        vec![],
        anchors.to_vec(),
        ladder_rungs.to_vec(),
    ];
    for (gen, want) in (1..=4).zip(&expect) {
        assert_eq!(&t.opponents(gen), want, "generation {gen}");
        assert_eq!(t.report(gen).ladder.is_some(), gen == 1 || gen == 4);
    }
    // The dead engine: one warning, no match.
    let log = t.log();
    let warnings = log
        .lines()
        .filter(|l| l.contains("anchor dead: cannot start") && l.contains("left out"))
        .count();
    assert_eq!(warnings, 1, "{log}");
    // `nodes`: the anchors differ only by their simulations (2,000 find mates that 1 does
    // not), and so do their games.
    assert_ne!(t.games(1, "few"), t.games(1, "many"));
    // Scores and Elo: the log, state.json and the scalars agree.
    let state = t.run.load_state().unwrap();
    for gen in [1, 3] {
        let h = state.history.iter().find(|h| h.generation == gen).unwrap();
        let line = log
            .lines()
            .find(|l| l.contains(&format!("gen {gen} evaluated")))
            .unwrap_or_else(|| panic!("no evaluation of {gen} in the log:\n{log}"));
        for name in anchors {
            let m = h.matches.iter().find(|m| m.opponent == name).unwrap();
            assert_eq!(m.wins + m.draws + m.losses, 2, "{m:?}");
            assert!(
                line.contains(&format!(
                    "vs {name} +{} ={} -{} score {:.3} Elo {}",
                    m.wins,
                    m.draws,
                    m.losses,
                    m.score,
                    arena::elo_text(m.elo)
                )),
                "{line}"
            );
            for (tag, value) in [("score", m.score), ("elo", m.elo)] {
                let tag = format!("{tag}/vs_{name}");
                assert!(t.scalars.has(&tag, gen, value), "{tag} of {gen}: {m:?}");
            }
        }
    }
    for name in anchors {
        let steps: Vec<u64> = t
            .scalars
            .of(&format!("score/vs_{name}"))
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(steps, [1, 3], "score/vs_{name}");
    }
    assert!(t.scalars.of("score/vs_dead").is_empty());
    for gen in [1, 4] {
        let h = state.history.iter().find(|h| h.generation == gen).unwrap();
        let l = h.ladder.as_ref().unwrap();
        assert_eq!(l.games, 2);
        for (tag, value) in [
            ("elo/ladder", l.elo),
            ("elo/ladder_low", l.low),
            ("elo/ladder_high", l.high),
        ] {
            assert!(t.scalars.has(tag, gen, value), "{tag} of {gen}: {l:?}");
        }
        let line = log
            .lines()
            .find(|l| l.contains(&format!("gen {gen} evaluated")))
            .unwrap();
        assert!(
            line.contains(&format!("on the mini ladder Elo {:+.0}", l.elo)),
            "{line}"
        );
    }
    for tag in ["elo/ladder", "elo/ladder_low", "elo/ladder_high"] {
        let steps: Vec<u64> = t.scalars.of(tag).iter().map(|x| x.0).collect();
        assert_eq!(steps, [1, 4], "{tag}");
    }
}
