//! Games in lockstep with network-free evaluators: records replay under the rules, targets
//! index legal moves, matches alternate colours over shared openings.

use encoding::Encoder;
use rules::{Position, Variant};
use search::{Algorithm, Evaluation, Evaluator, EvaluatorError, SearchConfig, UniformEvaluator};
use selfplay::{play_games, GameRecord, Mode, ReplayWindow, SelfPlayConfig};
use std::sync::Arc;

fn setup() -> (Arc<Variant>, Encoder) {
    let v = Arc::new(Variant::builtin("minishogi").unwrap());
    let e = Encoder::new(v.clone());
    (v, e)
}

/// Counts calls and batch sizes around a uniform evaluator.
struct Counting {
    inner: UniformEvaluator,
    calls: usize,
    max_batch: usize,
}

impl Evaluator for Counting {
    fn input_len(&self) -> usize {
        self.inner.input_len
    }
    fn policy_len(&self) -> usize {
        self.inner.policy_len
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        self.calls += 1;
        self.max_batch = self.max_batch.max(batch);
        self.inner.evaluate(inputs, batch)
    }
}

fn counting(e: &Encoder) -> Counting {
    Counting {
        inner: UniformEvaluator {
            input_len: e.input_len(),
            policy_len: e.policy_len(),
        },
        calls: 0,
        max_batch: 0,
    }
}

#[test]
fn selfplay_records_replay_and_targets_are_legal() {
    let (v, enc) = setup();
    for algorithm in [Algorithm::Gumbel, Algorithm::Puct] {
        let mut ev = counting(&enc);
        let cfg = SelfPlayConfig {
            parallel_games: 6,
            full_simulations: 12,
            fast_simulations: 4,
            full_probability: 0.5,
            max_plies: 40,
            ..Default::default()
        };
        let search = SearchConfig {
            algorithm,
            ..Default::default()
        };
        let mut games: Vec<(usize, GameRecord)> = Vec::new();
        let stats = {
            let mut evs: [&mut dyn Evaluator; 1] = [&mut ev];
            play_games(
                &[&enc],
                &mut evs,
                &[search],
                &cfg,
                Mode::SelfPlay,
                &[],
                10,
                42,
                &mut |i, g, _| games.push((i, g)),
            )
            .unwrap()
        };
        assert_eq!(games.len(), 10);
        assert_eq!(stats.games, 10);
        let mut idx: Vec<usize> = games.iter().map(|g| g.0).collect();
        idx.sort();
        assert_eq!(idx, (0..10).collect::<Vec<_>>());
        // One leaf per game per step: batches never exceed the games in lockstep.
        assert!(
            ev.max_batch <= 6 && ev.max_batch >= 2,
            "max batch {}",
            ev.max_batch
        );
        assert!(stats.batches > 0 && stats.evals >= stats.batches);
        let mut window = ReplayWindow::new(enc.clone());
        let mut samples = 0;
        let mut surprised = false;
        for (_, g) in &games {
            assert!(g.moves.len() <= 40);
            assert_eq!(g.moves.len(), g.targets.len());
            // Replay under the rules; every target is a distribution over legal moves.
            let mut pos = Position::from_sfen(&v, &g.start_sfen).unwrap();
            for (usi, t) in g.moves.iter().zip(&g.targets) {
                if let Some(t) = t {
                    let legal: Vec<u32> = enc
                        .legal_indices(&pos)
                        .iter()
                        .map(|(i, _)| *i as u32)
                        .collect();
                    let sum: f32 = t.policy.iter().map(|p| p.1).sum();
                    assert!((sum - 1.0).abs() < 1e-4, "target sums to {sum}");
                    assert!(t.policy.iter().all(|(i, _)| legal.contains(i)));
                    assert!((-1.0..=1.0).contains(&t.value));
                    // The uniform network's prior is 1/n over the n legal moves, so the
                    // policy surprise is sum t ln(t n) over the target.
                    let n = legal.len() as f64;
                    let kl: f64 = t
                        .policy
                        .iter()
                        .map(|&(_, q)| f64::from(q) * (f64::from(q) * n).ln())
                        .sum();
                    assert!(
                        (f64::from(t.surprise) - kl.max(0.0)).abs() < 1e-4,
                        "surprise {} against {kl}",
                        t.surprise
                    );
                    surprised |= t.surprise > 0.0;
                }
                let mv = pos.parse_usi(usi).unwrap();
                pos.make_move(mv);
            }
            match g.reason.as_str() {
                "move limit" => assert_eq!(g.result, rules::GameResult::Draw),
                "checkmate" | "stalemate" => {
                    assert_eq!(pos.outcome().unwrap().winner, g.result.winner())
                }
                _ => {}
            }
            samples += g.num_samples();
            window.add_game(g).unwrap();
        }
        assert_eq!(samples as u64, stats.samples);
        assert_eq!(window.len(), samples);
        assert!(samples > 0);
        // PUCT's visits never all match a uniform prior.
        assert!(
            surprised || algorithm == Algorithm::Gumbel,
            "no surprise recorded"
        );
    }
}

#[test]
fn matches_alternate_colours_over_shared_openings() {
    let (_, enc) = setup();
    let mut a = counting(&enc);
    let mut b = counting(&enc);
    let cfg = SelfPlayConfig {
        parallel_games: 4,
        max_plies: 30,
        ..Default::default()
    };
    let s = SearchConfig {
        simulations: 4,
        ..Default::default()
    };
    let openings = selfplay::random_openings(enc.variant(), 3, 3, 9);
    let mut games: Vec<(usize, GameRecord)> = Vec::new();
    {
        let mut evs: [&mut dyn Evaluator; 2] = [&mut a, &mut b];
        play_games(
            &[&enc, &enc],
            &mut evs,
            &[s.clone(), s],
            &cfg,
            Mode::Match,
            &openings,
            6,
            9,
            &mut |i, g, _| games.push((i, g)),
        )
        .unwrap();
    }
    games.sort_by_key(|g| g.0);
    assert_eq!(games.len(), 6);
    // Both evaluators were used; pairs share their opening, pairs differ from each other.
    assert!(a.calls > 0 && b.calls > 0);
    let opening = |g: &GameRecord| (g.start_sfen.clone(), g.moves[..3].to_vec());
    for pair in games.chunks(2) {
        assert_eq!(opening(&pair[0].1), opening(&pair[1].1));
        // Three random plies from the start: gote to move.
        let mut pos = Position::from_sfen(enc.variant(), &pair[0].1.start_sfen).unwrap();
        pos.play_usi(&pair[0].1.moves[..3].join(" ")).unwrap();
        assert_eq!(pos.side_to_move(), rules::Color::Gote, "{:?}", pair[0].1);
    }
    assert_ne!(opening(&games[0].1), opening(&games[2].1));
    // Match games carry no training targets.
    assert!(games
        .iter()
        .all(|g| g.1.targets.iter().all(|t| t.is_none())));
}

/// Counts its calls into a shared counter (the driver owns the evaluator).
struct Shared(UniformEvaluator, std::rc::Rc<std::cell::Cell<usize>>);

impl Evaluator for Shared {
    fn input_len(&self) -> usize {
        self.0.input_len
    }
    fn policy_len(&self) -> usize {
        self.0.policy_len
    }
    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        self.1.set(self.1.get() + 1);
        self.0.evaluate(inputs, batch)
    }
}

#[test]
fn continuous_games_switch_networks_between_moves() {
    use std::cell::Cell;
    use std::rc::Rc;
    let (_, enc) = setup();
    let uniform = UniformEvaluator {
        input_len: enc.input_len(),
        policy_len: enc.policy_len(),
    };
    let (a, b) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    struct Ctl {
        steps: usize,
        started: usize,
        finished: Vec<(usize, u64)>,
        next: Option<Box<dyn Evaluator>>,
        a: Rc<Cell<usize>>,
        a_at_switch: usize,
        generation: u64,
    }
    impl selfplay::Control<'static> for Ctl {
        fn start_game(&mut self) -> Option<u64> {
            (self.started < 40).then(|| {
                self.started += 1;
                self.generation
            })
        }
        fn new_network(&mut self) -> Option<Box<dyn Evaluator>> {
            self.steps += 1;
            if self.steps == 50 {
                self.a_at_switch = self.a.get();
                self.generation = 1;
                return self.next.take();
            }
            None
        }
        fn game_over(
            &mut self,
            i: usize,
            tag: u64,
            _: GameRecord,
            _: &selfplay::PlayStats,
        ) -> bool {
            self.finished.push((i, tag));
            true
        }
    }
    let cfg = SelfPlayConfig {
        parallel_games: 8,
        full_simulations: 12,
        fast_simulations: 12,
        full_probability: 1.0,
        max_plies: 30,
        ..Default::default()
    };
    let mut ctl = Ctl {
        steps: 0,
        started: 0,
        finished: Vec::new(),
        next: Some(Box::new(Shared(uniform.clone(), b.clone()))),
        a: a.clone(),
        a_at_switch: 0,
        generation: 0,
    };
    let stats = selfplay::run_games(
        &[&enc],
        vec![Box::new(Shared(uniform, a.clone()))],
        &[SearchConfig::default()],
        &cfg,
        Mode::SelfPlay,
        3,
        &mut ctl,
    )
    .unwrap();
    // Every game started was finished and handed over once; none was drained or lost.
    assert_eq!(ctl.finished.len(), 40);
    let mut ids: Vec<usize> = ctl.finished.iter().map(|x| x.0).collect();
    ids.sort();
    assert_eq!(ids, (0..40).collect::<Vec<_>>());
    assert_eq!(stats.games, 40);
    // After the switch the old network only finishes the moves in progress: at most one
    // search's worth of calls (one batch per step).
    assert!(ctl.a_at_switch > 0 && b.get() > 0);
    assert!(
        a.get() - ctl.a_at_switch <= 12,
        "{} calls to the old network after the switch",
        a.get() - ctl.a_at_switch
    );
    // Games started after the switch carry the new generation.
    assert!(ctl.finished.iter().any(|x| x.1 == 1));
}

/// Progressive budgets reach the searches: games tagged with an early generation search a
/// quarter of the simulations, games of a later generation (or without the key) the full ones.
/// Measured as network calls per move of one game at a time without tree reuse.
#[test]
fn progressive_budgets_follow_the_games_generation() {
    let (_, enc) = setup();
    struct Ctl {
        left: usize,
        generation: u64,
    }
    impl selfplay::Control<'static> for Ctl {
        fn start_game(&mut self) -> Option<u64> {
            (self.left > 0).then(|| {
                self.left -= 1;
                self.generation
            })
        }
        fn game_over(&mut self, _: usize, _: u64, _: GameRecord, _: &selfplay::PlayStats) -> bool {
            true
        }
    }
    let calls_per_move = |progressive_generations: u64, generation: u64| {
        let cfg = SelfPlayConfig {
            parallel_games: 1,
            full_simulations: 40,
            fast_simulations: 40,
            full_probability: 1.0,
            progressive_generations,
            progressive_start: 0.25,
            resign_consecutive: 0,
            max_plies: 20,
            ..Default::default()
        };
        let search = SearchConfig {
            reuse_tree: false,
            ..Default::default()
        };
        let mut ctl = Ctl {
            left: 4,
            generation,
        };
        let uniform = UniformEvaluator {
            input_len: enc.input_len(),
            policy_len: enc.policy_len(),
        };
        let stats = selfplay::run_games(
            &[&enc],
            vec![Box::new(uniform)],
            &[search],
            &cfg,
            Mode::SelfPlay,
            9,
            &mut ctl,
        )
        .unwrap();
        stats.evals as f64 / stats.plies as f64
    };
    // 40 simulations and the root's own evaluation, fewer where a leaf ends the game.
    let full = calls_per_move(0, 0);
    assert!(
        (30.0..=41.0).contains(&full),
        "{full} calls a move without the key"
    );
    let early = calls_per_move(100, 0);
    assert!(
        (7.0..=11.0).contains(&early),
        "{early} calls a move at generation 0"
    );
    let late = calls_per_move(100, 100);
    assert!(
        (30.0..=41.0).contains(&late),
        "{late} calls a move at generation 100"
    );
}

/// Every built-in variant trains: self-play games with a uniform evaluator run to an end that
/// one of the variant's rules decides (no game needs the self-play move limit), their records
/// replay under the rules to that very end, and every target indexes legal moves.
#[test]
fn every_builtin_variant_plays_to_an_end_by_its_rules() {
    for name in rules::VariantSpec::builtin_names() {
        let v = Arc::new(Variant::builtin(name).unwrap());
        let enc = Encoder::new(v.clone());
        let mut ev = counting(&enc);
        let cfg = SelfPlayConfig {
            parallel_games: 3,
            full_simulations: 4,
            fast_simulations: 2,
            full_probability: 0.5,
            max_plies: 20_000,
            ..Default::default()
        };
        let mut games: Vec<GameRecord> = Vec::new();
        {
            let mut evs: [&mut dyn Evaluator; 1] = [&mut ev];
            play_games(
                &[&enc],
                &mut evs,
                &[SearchConfig::default()],
                &cfg,
                Mode::SelfPlay,
                &[],
                3,
                7,
                &mut |_, g, _| games.push(g),
            )
            .unwrap();
        }
        assert_eq!(games.len(), 3, "{name}");
        let mut window = ReplayWindow::new(enc.clone());
        for g in &games {
            window.add_game(g).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut pos = Position::from_sfen(&v, &g.start_sfen).unwrap();
            pos.play_usi(&g.moves.join(" ")).unwrap();
            let o = pos.outcome().unwrap_or_else(|| {
                panic!("{name}: game over by {:?} in a live position", g.reason)
            });
            assert_eq!(o.reason.name(), g.reason, "{name}");
            assert_eq!(rules::GameResult::from_winner(o.winner), g.result, "{name}");
        }
        eprintln!(
            "{name}: {:?}",
            games
                .iter()
                .map(|g| (g.moves.len(), g.reason.as_str()))
                .collect::<Vec<_>>()
        );
    }
}

/// The records of `games` self-play games of `cfg` and `search` with the uniform network.
fn selfplay_records(
    cfg: &SelfPlayConfig,
    search: SearchConfig,
    games: usize,
    seed: u64,
) -> Vec<GameRecord> {
    let (_, enc) = setup();
    let mut ev = counting(&enc);
    let mut records = Vec::new();
    let mut evs: [&mut dyn Evaluator; 1] = [&mut ev];
    play_games(
        &[&enc],
        &mut evs,
        &[search],
        cfg,
        Mode::SelfPlay,
        &[],
        games,
        seed,
        &mut |_, g, _| records.push(g),
    )
    .unwrap();
    records
}

/// The self-play games of `cfg` (every move a full search, so that only opening plies lack a
/// target): for each, the plies before its first target.
fn untargeted_leading_plies(cfg: &SelfPlayConfig, games: usize, seed: u64) -> Vec<usize> {
    let (v, _) = setup();
    let records = selfplay_records(cfg, SearchConfig::default(), games, seed);
    let start = Position::start(v.clone()).to_sfen();
    records
        .iter()
        .map(|g| {
            assert_eq!(g.start_sfen, start, "records start at the start position");
            // The record replays under the rules, random plies included.
            let mut pos = Position::from_sfen(&v, &g.start_sfen).unwrap();
            for usi in &g.moves {
                let mv = pos.parse_usi(usi).unwrap();
                pos.make_move(mv);
            }
            g.targets.iter().take_while(|t| t.is_none()).count()
        })
        .collect()
}

/// `random_opening_plies` N with `random_opening_fraction` p: about a fraction p of the games
/// begin with 1 to N plies without a training target (the random moves), every length drawn;
/// the others, and every game with the key at 0, have a target from their first ply.
#[test]
fn random_openings_start_a_fraction_of_selfplay_games() {
    let base = SelfPlayConfig {
        parallel_games: 8,
        full_simulations: 4,
        fast_simulations: 4,
        full_probability: 1.0,
        max_plies: 12,
        resign_consecutive: 0,
        ..Default::default()
    };
    assert_eq!(base.random_opening_plies, 0);
    let off = untargeted_leading_plies(&base, 16, 3);
    assert!(off.iter().all(|&n| n == 0), "{off:?}");
    let all = SelfPlayConfig {
        random_opening_plies: 4,
        random_opening_fraction: 1.0,
        ..base.clone()
    };
    let lens = untargeted_leading_plies(&all, 48, 3);
    assert!(lens.iter().all(|&n| (1..=4).contains(&n)), "{lens:?}");
    for k in 1..=4 {
        assert!(lens.contains(&k), "no opening of {k} plies in {lens:?}");
    }
    let half = SelfPlayConfig {
        random_opening_fraction: 0.5,
        ..all.clone()
    };
    let lens = untargeted_leading_plies(&half, 64, 5);
    let random = lens.iter().filter(|&&n| n > 0).count();
    assert!(
        (16..=48).contains(&random),
        "{random} of 64 games: {lens:?}"
    );
    // Out of range: refused, naming the key.
    for (bad, key) in [
        (
            SelfPlayConfig {
                random_opening_plies: 65,
                ..base.clone()
            },
            "random_opening_plies",
        ),
        (
            SelfPlayConfig {
                random_opening_fraction: 1.5,
                ..base.clone()
            },
            "random_opening_fraction",
        ),
    ] {
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.contains(key), "{err}");
    }
}

/// PUCT self-play with forced playouts samples its early moves from the pruned visits, the
/// policy target (as KataGo chooses its move): a move whose visits were all forced, pruned
/// from the target, is never played.
#[test]
fn forced_playouts_sample_the_pruned_target() {
    let (v, enc) = setup();
    let cfg = SelfPlayConfig {
        parallel_games: 8,
        full_simulations: 16,
        fast_simulations: 16,
        full_probability: 1.0,
        max_plies: 10,
        temperature_plies: 10,
        resign_consecutive: 0,
        ..Default::default()
    };
    let search = SearchConfig {
        algorithm: Algorithm::Puct,
        forced_playouts: 2.0,
        ..Default::default()
    };
    let records = selfplay_records(&cfg, search, 16, 7);
    let (mut plies, mut pruned) = (0, 0);
    for g in &records {
        let mut pos = Position::from_sfen(&v, &g.start_sfen).unwrap();
        for (usi, t) in g.moves.iter().zip(&g.targets) {
            let mv = pos.parse_usi(usi).unwrap();
            let t = t.as_ref().expect("every move is a full search");
            let legal = enc.legal_indices(&pos).len();
            pruned += legal - t.policy.len();
            let played = enc.move_to_index(&pos, mv) as u32;
            assert!(
                t.policy.iter().any(|&(i, p)| i == played && p > 0.0),
                "{usi} played outside the pruned target {:?}",
                t.policy
            );
            plies += 1;
            pos.make_move(mv);
        }
    }
    // The uniform network spreads the forced visits: pruning removed moves from the targets.
    assert!(
        plies >= 64 && pruned > plies,
        "{plies} plies, {pruned} moves pruned"
    );
}
