//! Search behaviour on small minishogi positions, driven through the public select/expand
//! protocol exactly as the self-play driver drives it.

use rules::{Color, EndReason, Move, Position, Variant};
use search::{sample_move, sample_policy, Algorithm, Request, Search, SearchConfig, SearchResult};
use std::sync::Arc;

fn minishogi() -> Arc<Variant> {
    Arc::new(Variant::builtin("minishogi").unwrap())
}

fn pos(sfen: &str) -> Position {
    Position::from_sfen(&minishogi(), sfen).unwrap()
}

fn config(algorithm: Algorithm, simulations: u32) -> SearchConfig {
    SearchConfig {
        algorithm,
        simulations,
        ..Default::default()
    }
}

/// All-zero logits and an even WDL.
fn uniform(_: &Position, moves: &[Move]) -> (Vec<f32>, [f32; 3]) {
    (vec![0.0; moves.len()], [1.0 / 3.0; 3])
}

/// Material count (hands included) squashed into a WDL for the side to move.
fn material(p: &Position, moves: &[Move]) -> (Vec<f32>, [f32; 3]) {
    let v = p.variant();
    let worth = |kind: rules::Kind| -> f32 {
        let k = &v.kinds[kind as usize];
        let base = match k.letter.unmarked().unwrap_or('?') {
            'P' => 1.0,
            'S' => 5.0,
            'G' => 6.0,
            'B' => 8.0,
            'R' => 10.0,
            _ => 0.0,
        };
        if k.promoted {
            base + 2.0
        } else {
            base
        }
    };
    let us = p.side_to_move();
    let mut diff = 0.0f32;
    for sq in 0..v.num_squares() {
        let pc = p.piece_at(sq);
        if !pc.is_empty() {
            let w = worth(pc.kind());
            diff += if pc.color() == us { w } else { -w };
        }
    }
    for &k in &v.hand_kinds {
        diff += worth(k) * (p.hand_count(us, k) as f32 - p.hand_count(us.flip(), k) as f32);
    }
    let value = (diff / 10.0).tanh();
    let draw = 0.2;
    let win = (1.0 - draw) * (1.0 + value) / 2.0;
    (vec![0.0; moves.len()], [win, draw, 1.0 - draw - win])
}

type Eval = fn(&Position, &[Move]) -> (Vec<f32>, [f32; 3]);

/// Runs one full search through the protocol; returns the result and the evaluations used.
fn run(search: &mut Search, simulations: u32, noise: bool, eval: Eval) -> (SearchResult, u32) {
    search.start(simulations, noise);
    let mut evals = 0;
    let mut steps = 0;
    while !search.finished() {
        if search.select() {
            let (logits, wdl) = eval(search.leaf_position(), search.leaf_moves());
            search.expand(&logits, wdl);
            evals += 1;
        }
        steps += 1;
        assert!(steps < 1_000_000, "search does not finish");
    }
    assert!(!search.select(), "select after finished");
    (search.result(), evals)
}

/// Runs one full search in batches of up to `batch` leaves; returns the result and the
/// batches' sizes.
fn run_batched(
    search: &mut Search,
    simulations: u32,
    noise: bool,
    eval: Eval,
    batch: usize,
) -> (SearchResult, Vec<usize>) {
    search.start(simulations, noise);
    let mut sizes = Vec::new();
    let mut r = Request::default();
    while !search.finished() {
        r.clear();
        let n = search.select_batch(batch, |p, moves| {
            let (logits, wdl) = eval(p, moves);
            r.add_position(0);
            let base = r.moves.len() as u32;
            r.moves.extend((0..moves.len() as u32).map(|i| i + base));
            r.end_position();
            r.logits.extend(logits);
            r.wdl.push(wdl);
        });
        assert!(n <= batch);
        if n > 0 {
            search.expand_batch(&r);
            sizes.push(n);
        }
        assert!(sizes.len() < 1_000_000, "search does not finish");
    }
    (search.result(), sizes)
}

/// Whether `mv` ends the game at once in the mover's favour (minishogi: checkmate, or
/// stalemate, which loses for the stalemated side).
fn is_mate(p: &Position, mv: Move) -> bool {
    let mut q = p.clone();
    q.make_move(mv);
    matches!(q.outcome(), Some(o) if o.winner == Some(p.side_to_move()))
}

fn is_checkmate(p: &Position, mv: Move) -> bool {
    let mut q = p.clone();
    q.make_move(mv);
    matches!(q.outcome(), Some(o) if o.reason == EndReason::Checkmate)
}

fn check_result(r: &SearchResult) {
    assert_eq!(r.moves.len(), r.visits.len());
    assert_eq!(r.moves.len(), r.policy_target.len());
    assert_eq!(r.moves.len(), r.q.len());
    assert!(r.moves.contains(&r.best));
    let s: f32 = r.policy_target.iter().sum();
    assert!((s - 1.0).abs() < 1e-4, "policy target sums to {s}");
    assert!(r.policy_target.iter().all(|p| p.is_finite() && *p >= 0.0));
    assert!(r.q.iter().all(|q| q.is_finite() && q.abs() <= 1.0 + 1e-5));
    let w: f32 = r.root_wdl.iter().sum();
    assert!((w - 1.0).abs() < 1e-3, "root wdl sums to {w}");
    assert!(r.root_value.abs() <= 1.0 + 1e-5);
}

/// Sente to move: G*4b and G*5b mate the gote king in the corner (G*3a and G*3b stalemate it,
/// which also wins).
const MATE_IN_1: &str = "k4/5/1G3/5/4K b G 1";
/// Sente's silver on 3d takes a loose rook on 3c.
const FREE_ROOK: &str = "k4/5/2r2/2S2/4K b - 1";
const START: &str = "rbsgk/4p/5/P4/KGSBR b - 1";

#[test]
fn mate_in_one_position_is_what_it_claims() {
    let p = pos(MATE_IN_1);
    let moves = p.legal_moves();
    let wins: Vec<_> = moves.iter().filter(|&&m| is_mate(&p, m)).collect();
    // G*4b and G*5b mate; G*3a and G*3b stalemate, a loss for gote as well.
    assert_eq!(wins.len(), 4);
    assert_eq!(moves.iter().filter(|&&m| is_checkmate(&p, m)).count(), 2);
    assert_eq!(moves.len(), 31);
}

#[test]
fn puct_finds_mate_in_one() {
    let p = pos(MATE_IN_1);
    let mut s = Search::new(config(Algorithm::Puct, 400), p.clone(), 1);
    let (r, _) = run(&mut s, 400, false, uniform);
    check_result(&r);
    assert!(is_mate(&p, r.best), "best {:?}", r.best);
    assert!(r.root_value > 0.8, "root value {}", r.root_value);
    assert!(r.root_wdl[0] > 0.8, "root wdl {:?}", r.root_wdl);
    let i = r.moves.iter().position(|&m| m == r.best).unwrap();
    assert!((r.q[i] - 1.0).abs() < 1e-6);
}

#[test]
fn gumbel_finds_mate_in_one() {
    let p = pos(MATE_IN_1);
    for noise in [false, true] {
        let c = SearchConfig {
            gumbel_considered: 64,
            ..config(Algorithm::Gumbel, 200)
        };
        let mut s = Search::new(c, p.clone(), 2);
        let (r, _) = run(&mut s, 200, noise, uniform);
        check_result(&r);
        assert!(is_mate(&p, r.best), "noise {noise}: best {:?}", r.best);
        assert!(r.root_value > 0.9, "root value {}", r.root_value);
        assert!(r.root_wdl[0] > 0.9, "root wdl {:?}", r.root_wdl);
        // The improved policy concentrates on mating moves.
        let mass: f32 = r
            .moves
            .iter()
            .zip(&r.policy_target)
            .filter(|(&m, _)| is_mate(&p, m))
            .map(|(_, &pt)| pt)
            .sum();
        assert!(mass > 0.9, "mass on mates {mass}");
    }
}

#[test]
fn material_search_takes_the_free_rook() {
    let p = pos(FREE_ROOK);
    let capture = p
        .legal_moves()
        .into_iter()
        .find(|m| !p.piece_at(m.to()).is_empty() && m.from().is_some())
        .expect("a capture");
    assert_eq!(p.piece_at(capture.to()).color(), Color::Gote);
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(config(algorithm, 64), p.clone(), 3);
        let (r, _) = run(&mut s, 64, false, material);
        check_result(&r);
        assert_eq!(r.best, capture, "{algorithm:?}");
        assert!(r.root_value > 0.3, "{algorithm:?}: {}", r.root_value);
    }
}

#[test]
fn visits_and_evaluations_add_up() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for sims in [1u32, 2, 3, 7, 16, 32, 100] {
            let mut s = Search::new(config(algorithm, sims), pos(START), 4);
            let (r, evals) = run(&mut s, sims, true, uniform);
            check_result(&r);
            let total: u32 = r.visits.iter().sum();
            assert_eq!(total, sims, "{algorithm:?} {sims}");
            assert_eq!(s.root_visits(), sims + 1);
            // The fresh root costs one evaluation; terminal leaves cost none.
            assert!(evals <= sims + 1 && evals >= 1);
        }
    }
}

#[test]
fn gumbel_sequential_halving_spreads_then_focuses() {
    // 16 considered actions, 64 simulations, no noise: phases of 16, 8, 4, 2 actions.
    let c = SearchConfig {
        gumbel_considered: 16,
        ..config(Algorithm::Gumbel, 64)
    };
    let p = pos(MATE_IN_1);
    let n = p.legal_moves().len();
    assert!(n >= 16);
    let mut s = Search::new(c, p, 5);
    let (r, _) = run(&mut s, 64, false, material);
    let visited = r.visits.iter().filter(|&&v| v > 0).count();
    assert_eq!(visited, 16);
    let best = r.moves.iter().position(|&m| m == r.best).unwrap();
    assert_eq!(r.visits[best], *r.visits.iter().max().unwrap());
}

#[test]
fn policy_target_sums_to_one() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for sfen in [START, MATE_IN_1, FREE_ROOK] {
            let mut s = Search::new(config(algorithm, 24), pos(sfen), 6);
            let (r, _) = run(&mut s, 24, true, material);
            check_result(&r);
        }
    }
}

#[test]
fn tree_reuse_keeps_the_child_statistics() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(config(algorithm, 64), pos(START), 7);
        let mut fresh = Search::new(
            SearchConfig {
                reuse_tree: false,
                ..config(algorithm, 64)
            },
            pos(START),
            7,
        );
        let (r, _) = run(&mut s, 64, true, material);
        let (rf, _) = run(&mut fresh, 64, true, material);
        assert_eq!(r, rf);
        let i = r.moves.iter().position(|&m| m == r.best).unwrap();
        let kept = r.visits[i];
        assert!(kept > 1);
        s.play(r.best);
        fresh.play(r.best);
        assert_eq!(s.root_visits(), kept, "{algorithm:?}");
        assert_eq!(fresh.root_visits(), 0);
        assert!(s.tree_size() as u32 >= kept);
        assert_eq!(s.root().to_sfen(), fresh.root().to_sfen());
        // The next search adds its budget on top of the kept visits.
        let (r2, evals) = run(&mut s, 32, true, material);
        check_result(&r2);
        assert_eq!(s.root_visits(), kept + 32);
        assert!(evals <= 32);
        assert_eq!(r2.visits.iter().sum::<u32>(), kept - 1 + 32);
    }
}

#[test]
fn replies_are_the_statistics_below_a_root_move() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(config(algorithm, 64), pos(START), 3);
        assert!(s.replies(s.root().legal_moves()[0]).is_empty());
        let (r, _) = run(&mut s, 64, false, material);
        let replies = s.replies(r.best);
        // Each node takes 33 bytes, each of its move edges at least 20.
        let edges = r.moves.len() + replies.len();
        let bytes = s.memory_bytes();
        assert!(bytes >= s.tree_size() * 33 + edges * 20, "{bytes}");
        // What the search keeps below the best move is what a reused tree starts from.
        s.play(r.best);
        let r2 = s.result();
        let moves: Vec<Move> = replies.iter().map(|x| x.0).collect();
        let visits: Vec<u32> = replies.iter().map(|x| x.1).collect();
        assert_eq!((moves, visits), (r2.moves, r2.visits), "{algorithm:?}");
        assert!(replies.iter().any(|x| x.1 > 0));
        let prior: f32 = replies.iter().map(|x| x.2).sum();
        assert!((prior - 1.0).abs() < 1e-4);
        // An unvisited root move has no replies.
        let unvisited = r
            .moves
            .iter()
            .zip(&r.visits)
            .find(|(_, &v)| v == 0)
            .map(|(&m, _)| m);
        let mut fresh = Search::new(config(algorithm, 64), pos(START), 3);
        run(&mut fresh, 64, false, material);
        if let Some(m) = unvisited {
            assert!(fresh.replies(m).is_empty());
        }
    }
}

#[test]
fn noise_depends_on_the_seed_only() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let go = |seed: u64, noise: bool| {
            let mut s = Search::new(config(algorithm, 48), pos(START), seed);
            let (r, _) = run(&mut s, 48, noise, uniform);
            r
        };
        assert_eq!(go(11, true), go(11, true), "{algorithm:?}");
        assert_ne!(go(11, true).visits, go(12, true).visits, "{algorithm:?}");
        // Without noise the seed does not matter.
        assert_eq!(go(11, false), go(12, false), "{algorithm:?}");
    }
}

#[test]
fn single_legal_move_finishes_at_once() {
    // The sente king on 5e is boxed in by the loose rook on 4d: taking it is the only move.
    let p = pos("4k/5/5/1r3/K4 b - 1");
    let moves = p.legal_moves();
    assert_eq!(moves.len(), 1);
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(config(algorithm, 32), p.clone(), 8);
        let (r, evals) = run(&mut s, 32, true, uniform);
        assert_eq!(evals, 1);
        assert_eq!(r.best, moves[0]);
        assert_eq!(r.policy_target, vec![1.0]);
    }
}

#[test]
#[should_panic(expected = "terminal")]
fn start_on_a_terminal_root_panics() {
    let mut p = pos(MATE_IN_1);
    let mate = p
        .legal_moves()
        .into_iter()
        .find(|&m| is_mate(&p, m))
        .unwrap();
    p.make_move(mate);
    let mut s = Search::new(SearchConfig::default(), p, 0);
    s.start(8, false);
}

#[test]
fn sample_move_with_temperature() {
    let mut s = Search::new(config(Algorithm::Puct, 64), pos(START), 9);
    let (r, _) = run(&mut s, 64, true, uniform);
    assert_eq!(sample_move(&r, 0.0, 0.7), r.best);
    let mut seen = std::collections::HashSet::new();
    for i in 0..100 {
        let m = sample_move(&r, 1.0, i as f32 / 100.0);
        let k = r.moves.iter().position(|&x| x == m).unwrap();
        assert!(r.visits[k] > 0);
        seen.insert(m);
    }
    assert!(seen.len() > 1);
    assert_eq!(
        sample_move(&r, 1.0, 0.0),
        r.moves[r.visits.iter().position(|&v| v > 0).unwrap()]
    );
    // A tiny temperature is (nearly) greedy.
    let top = r.visits.iter().copied().max().unwrap();
    let m = sample_move(&r, 0.01, 0.5);
    assert_eq!(r.visits[r.moves.iter().position(|&x| x == m).unwrap()], top);
}

#[test]
fn sample_policy_follows_the_improved_policy() {
    let mut s = Search::new(config(Algorithm::Gumbel, 32), pos(START), 5);
    let (mut r, _) = run(&mut s, 32, true, uniform);
    // A known target over the first three moves: 0.75, 0.25, then nothing.
    let n = r.moves.len();
    assert!(n >= 3);
    r.policy_target = vec![0.0; n];
    r.policy_target[0] = 0.75;
    r.policy_target[1] = 0.25;
    r.best = r.moves[2];
    assert_eq!(sample_policy(&r, 0.0, 0.3), r.moves[2]);
    // Uniform numbers below 0.75 pick the first move, the rest the second: never the third.
    let picks: Vec<Move> = (0..100)
        .map(|i| sample_policy(&r, 1.0, (i as f32 + 0.5) / 100.0))
        .collect();
    assert_eq!(picks.iter().filter(|&&m| m == r.moves[0]).count(), 75);
    assert_eq!(picks.iter().filter(|&&m| m == r.moves[1]).count(), 25);
    // Temperature 1/2 squares the weights: 9:1.
    let picks: Vec<Move> = (0..100)
        .map(|i| sample_policy(&r, 0.5, (i as f32 + 0.5) / 100.0))
        .collect();
    assert_eq!(picks.iter().filter(|&&m| m == r.moves[0]).count(), 90);
    // No positive weight at all: the best move.
    r.policy_target = vec![0.0; n];
    assert_eq!(sample_policy(&r, 1.0, 0.5), r.best);
}

/// The self-play driver's shape: several games in lockstep, one leaf per game per batch.
#[test]
fn lockstep_driver_over_three_games() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let sims = 24;
        let mut games: Vec<Search> = (0..3)
            .map(|i| Search::new(config(algorithm, sims), pos(START), 100 + i))
            .collect();
        let mut plies = [0usize; 3];
        let mut batches = 0;
        let mut max_batch = 0;
        'outer: loop {
            let mut active = false;
            for (g, s) in games.iter_mut().enumerate() {
                if plies[g] < 6 && s.finished() && s.root().outcome().is_none() {
                    s.start(sims, true);
                }
            }
            // Collect one leaf per game (terminal simulations complete inside select).
            let mut batch: Vec<(usize, Vec<f32>, usize)> = Vec::new();
            for (g, s) in games.iter_mut().enumerate() {
                while !s.finished() {
                    active = true;
                    if s.select() {
                        // A real driver encodes leaf_position() here.
                        let n = s.leaf_moves().len();
                        let sfen = s.leaf_position().to_sfen();
                        assert!(!sfen.is_empty());
                        batch.push((g, vec![0.0; n], n));
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                batches += 1;
                max_batch = max_batch.max(batch.len());
            }
            for (g, logits, n) in batch {
                assert_eq!(games[g].leaf_moves().len(), n);
                games[g].expand(&logits, [0.3, 0.4, 0.3]);
            }
            for (g, s) in games.iter_mut().enumerate() {
                if s.finished() && plies[g] < 6 && s.root().outcome().is_none() {
                    let r = s.result();
                    check_result(&r);
                    assert!(r.visits.iter().sum::<u32>() >= sims);
                    let mv = sample_move(&r, 1.0, 0.37);
                    s.play(mv);
                    plies[g] += 1;
                }
            }
            if !active && plies.iter().all(|&p| p >= 6) {
                break 'outer;
            }
            assert!(batches < 10_000);
        }
        assert_eq!(max_batch, 3);
        for s in &games {
            assert_eq!(s.root().ply(), 6);
        }
    }
}

/// Simulations per second with a uniform evaluator (run with
/// `cargo test --release -p search -- --ignored --nocapture bench`).
#[test]
#[ignore]
fn bench_simulations_per_second() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for sims in [32u32, 400] {
            let mut s = Search::new(config(algorithm, sims), pos(START), 1);
            let mut total = 0u64;
            let t = std::time::Instant::now();
            let mut game_plies = 0;
            while t.elapsed().as_secs_f64() < 2.0 {
                if s.root().outcome().is_some() || game_plies >= 100 {
                    s = Search::new(config(algorithm, sims), pos(START), total);
                    game_plies = 0;
                }
                let (r, _) = run(&mut s, sims, true, uniform);
                total += sims as u64;
                s.play(sample_move(&r, 1.0, (total % 97) as f32 / 97.0));
                game_plies += 1;
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{algorithm:?} {sims} sims/move: {:.0} simulations/s",
                total as f64 / secs
            );
        }
    }
}

#[test]
fn batched_searches_add_up_and_fill_their_batches() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for batch in [1usize, 4, 16] {
            for sims in [1u32, 3, 16, 100, 400] {
                let mut s = Search::new(config(algorithm, sims), pos(START), 4);
                let (r, sizes) = run_batched(&mut s, sims, true, material, batch);
                check_result(&r);
                let total: u32 = r.visits.iter().sum();
                assert_eq!(
                    total, sims,
                    "{algorithm:?} batch {batch}, {sims} simulations"
                );
                assert_eq!(s.root_visits(), sims + 1);
                assert_eq!(sizes[0], 1, "the fresh root alone");
                let evals: usize = sizes.iter().sum();
                assert!(evals <= sims as usize + 1);
                if sims >= 100 {
                    // Most simulations share a batch with others.
                    let mean = (evals - 1) as f64 / (sizes.len() - 1) as f64;
                    assert!(
                        mean >= batch as f64 / 2.0,
                        "{algorithm:?} batch {batch}: {mean} leaves a batch"
                    );
                }
            }
        }
    }
}

#[test]
fn batched_searches_find_what_single_ones_find() {
    let p = pos(MATE_IN_1);
    let mut s = Search::new(config(Algorithm::Puct, 400), p.clone(), 1);
    let (r, _) = run_batched(&mut s, 400, false, uniform, 8);
    assert!(is_mate(&p, r.best), "PUCT best {:?}", r.best);
    assert!(r.root_value > 0.8, "PUCT root value {}", r.root_value);
    let c = SearchConfig {
        gumbel_considered: 64,
        ..config(Algorithm::Gumbel, 200)
    };
    let mut s = Search::new(c, p.clone(), 2);
    let (r, _) = run_batched(&mut s, 200, true, uniform, 8);
    assert!(is_mate(&p, r.best), "Gumbel best {:?}", r.best);
    let free_rook = pos(FREE_ROOK);
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut single = Search::new(config(algorithm, 64), free_rook.clone(), 3);
        let (want, _) = run(&mut single, 64, false, material);
        let mut s = Search::new(config(algorithm, 64), free_rook.clone(), 3);
        let (r, _) = run_batched(&mut s, 64, false, material, 8);
        assert_eq!(r.best, want.best, "{algorithm:?}");
        assert!(r.root_value > 0.3, "{algorithm:?}: {}", r.root_value);
    }
}

#[test]
fn a_batch_of_one_is_the_single_leaf_search() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut a = Search::new(config(algorithm, 50), pos(START), 7);
        let mut b = Search::new(config(algorithm, 50), pos(START), 7);
        let (ra, _) = run(&mut a, 50, true, material);
        let (rb, sizes) = run_batched(&mut b, 50, true, material, 1);
        assert!(sizes.iter().all(|&n| n == 1));
        assert_eq!(ra.visits, rb.visits, "{algorithm:?}");
        assert_eq!(ra.best, rb.best, "{algorithm:?}");
        for (x, y) in ra.q.iter().zip(&rb.q) {
            assert!((x - y).abs() < 1e-5, "{algorithm:?}: q {x} against {y}");
        }
    }
}

#[test]
fn forced_playouts_visit_every_root_child_and_the_target_takes_them_back() {
    let sims = 400;
    let forced = SearchConfig {
        forced_playouts: 2.0,
        ..config(Algorithm::Puct, sims)
    };
    // The free rook dominates under the material evaluation: plain PUCT leaves most other
    // root moves with a visit or none.
    let mut plain = Search::new(config(Algorithm::Puct, sims), pos(FREE_ROOK), 8);
    let (p, _) = run(&mut plain, sims, true, material);
    let mut s = Search::new(forced.clone(), pos(FREE_ROOK), 8);
    let (r, _) = run(&mut s, sims, true, material);
    check_result(&r);
    let n = r.moves.len();
    // Each noised root prior is at least (1 - 0.25) times the uniform prior.
    let floor = ((2.0 * 0.75 / n as f32 * (sims - 1) as f32).sqrt() - 1.0).floor() as u32;
    assert!(floor >= 2, "{floor}");
    assert!(
        r.visits.iter().all(|&v| v >= floor),
        "{:?} (floor {floor})",
        r.visits
    );
    assert!(p.visits.iter().any(|&v| v < floor), "{:?}", p.visits);
    // The target gives the forced visits back: the best move's share grows, every other
    // move's shrinks (here to well under half of what the visits gave them), and no move keeps
    // a single visit (the best move keeps all of its visits, so its target is visits[best]
    // times a one-visit share).
    let total: u32 = r.visits.iter().sum();
    let best = r.moves.iter().position(|&m| m == r.best).unwrap();
    assert_eq!(r.visits[best], *r.visits.iter().max().unwrap());
    assert!(r.policy_target[best] > r.visits[best] as f32 / total as f32);
    let (mut raw_rest, mut target_rest) = (0.0, 0.0);
    for i in (0..n).filter(|&i| i != best) {
        let raw = r.visits[i] as f32 / total as f32;
        assert!(r.policy_target[i] <= raw + 1e-6);
        let one_visit = r.policy_target[best] / r.visits[best] as f32;
        assert!(
            r.policy_target[i] == 0.0 || r.policy_target[i] > 1.5 * one_visit,
            "{:?} -> {:?}",
            r.visits,
            r.policy_target
        );
        raw_rest += raw;
        target_rest += r.policy_target[i];
    }
    assert!(
        target_rest < 0.5 * raw_rest,
        "{:?} -> {:?}",
        r.visits,
        r.policy_target
    );
    // Without noise (evaluation, matches) the key changes nothing.
    let mut a = Search::new(forced, pos(FREE_ROOK), 8);
    let mut b = Search::new(config(Algorithm::Puct, sims), pos(FREE_ROOK), 8);
    let (ra, _) = run(&mut a, sims, false, material);
    let (rb, _) = run(&mut b, sims, false, material);
    assert_eq!(
        (ra.visits, ra.policy_target, ra.best),
        (rb.visits, rb.policy_target, rb.best)
    );
}

/// `search.mate_plies` 1.
fn mate_config(algorithm: Algorithm, simulations: u32) -> SearchConfig {
    SearchConfig {
        mate_plies: 1,
        ..config(algorithm, simulations)
    }
}

#[test]
fn the_mate_check_plays_a_winning_root_move_at_once() {
    // G*1b mates gote's cornered king (the pawn on 1c guards the gold); no other move wins.
    let root = pos("4k/5/4P/5/K4 b G 1");
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(mate_config(algorithm, 200), root.clone(), 1);
        let (r, evals) = run(&mut s, 200, true, uniform);
        assert_eq!(evals, 1, "{algorithm:?}: the root's evaluation alone");
        assert_eq!(s.root_visits(), 1, "{algorithm:?}: no simulation");
        assert!(r.forced_win);
        assert_eq!(root.move_to_usi(r.best), "G*1b");
        let i = r.moves.iter().position(|&m| m == r.best).unwrap();
        for (j, &p) in r.policy_target.iter().enumerate() {
            assert_eq!(p, if j == i { 1.0 } else { 0.0 }, "{algorithm:?}");
        }
        assert_eq!((r.root_value, r.root_wdl), (1.0, [1.0, 0.0, 0.0]));
        // Sampled openings play it too.
        for u in [0.0, 0.5, 0.99] {
            assert_eq!(sample_policy(&r, 1.0, u), r.best);
            assert_eq!(sample_move(&r, 1.0, u), r.best);
        }
        // Another start finds the same at once.
        let (again, evals) = run(&mut s, 200, false, uniform);
        assert_eq!((again.best, evals), (r.best, 0));
        // Without the check the search runs its budget.
        let mut s = Search::new(config(algorithm, 200), root.clone(), 1);
        let (r, _) = run(&mut s, 200, true, uniform);
        assert!(!r.forced_win && s.root_visits() > 200, "{algorithm:?}");
    }
}

#[test]
fn the_mate_check_scores_leaves_without_the_network() {
    // Gote threatens G*5d (its pawn on 5c guards the gold) against sente's cornered king;
    // some sente moves leave that mate on, others do not.
    let root = pos("k4/5/p4/5/K3R b g 1");
    let threatened = |m: Move| {
        let mut p = root.clone();
        p.make_move(m);
        let replies = p.legal_moves();
        replies.into_iter().any(|r| p.wins_at_once(r))
    };
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(mate_config(algorithm, 400), root.clone(), 3);
        let (r, _) = run(&mut s, 400, false, uniform);
        let mut seen = [0; 2];
        for (i, &m) in r.moves.iter().enumerate() {
            if r.visits[i] > 0 {
                let t = threatened(m);
                seen[t as usize] += 1;
                // Under an even evaluator only the mate makes every visit a loss.
                assert_eq!(r.q[i] == -1.0, t, "{algorithm:?} {}", root.move_to_usi(m));
            }
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{algorithm:?}: {seen:?}");
        // Without the check the network scores those leaves, an even value.
        let mut s = Search::new(config(algorithm, 400), root.clone(), 3);
        let (r, _) = run(&mut s, 400, false, uniform);
        assert!(r.q.iter().all(|&q| q > -1.0), "{algorithm:?}: {:?}", r.q);
    }
}

/// The first position of a seeded random game with a forced win in three plies and none in
/// one (the rules' tests check such wins against a full-width search).
fn mate_in_three_root() -> Position {
    let v = minishogi();
    let mut rng = rules::SplitMix64(5);
    'found: loop {
        let mut p = Position::start(v.clone());
        for _ in 0..60 {
            if p.outcome().is_some() {
                break;
            }
            let legal = p.legal_moves();
            if p.forced_win(&legal, 1).is_none() && p.forced_win(&legal, 3).is_some() {
                break 'found p;
            }
            p.make_move(legal[rng.below(legal.len())]);
        }
    }
}

/// Whether `m` wins within three plies whatever the defence (full width, every reply).
fn wins_within_three(root: &Position, m: Move) -> bool {
    if is_mate(root, m) {
        return true;
    }
    let mut p = root.clone();
    p.make_move(m);
    if p.outcome().is_some() {
        return false;
    }
    p.legal_moves().into_iter().all(|reply| {
        let mut q = p.clone();
        q.make_move(reply);
        q.outcome().is_none() && q.legal_moves().into_iter().any(|w| is_mate(&q, w))
    })
}

#[test]
fn a_mate_in_three_is_played_at_once() {
    let root = mate_in_three_root();
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let three = SearchConfig {
            mate_plies: 3,
            ..config(algorithm, 100)
        };
        let mut s = Search::new(three, root.clone(), 1);
        let (r, evals) = run(&mut s, 100, true, uniform);
        assert!(r.forced_win && evals == 1, "{algorithm:?}");
        let mut p = root.clone();
        assert!(p.forces_win(r.best, 3), "{algorithm:?} {}", root.to_sfen());
        p.make_move(r.best);
        assert!(p.in_check(), "{algorithm:?}: a check first");
        // Within one ply there is nothing to find: the search runs.
        let mut s = Search::new(mate_config(algorithm, 100), root.clone(), 1);
        let (r, _) = run(&mut s, 100, true, uniform);
        assert!(!r.forced_win && s.root_visits() > 100, "{algorithm:?}");
    }
}

#[test]
fn the_solver_proves_a_forced_win_and_plays_it() {
    // Only a win within one ply is checked at the leaves: the win in three is proven in the
    // tree, from the leaves after each defence, and ends the search as the mate check would.
    let root = mate_in_three_root();
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let plain = SearchConfig {
            // Every root move in Gumbel's sequential halving.
            gumbel_considered: 64,
            ..mate_config(algorithm, 4000)
        };
        let solver = SearchConfig {
            solver: true,
            ..plain.clone()
        };
        for batch in [1, 8] {
            let mut s = Search::new(solver.clone(), root.clone(), 1);
            let (r, _) = run_batched(&mut s, 4000, false, uniform, batch);
            check_result(&r);
            assert!(r.forced_win, "{algorithm:?}, batch {batch}");
            assert!(s.root_visits() < 4000, "{algorithm:?}: stopped early");
            assert!(
                wins_within_three(&root, r.best),
                "{algorithm:?} {} {}",
                root.to_sfen(),
                root.move_to_usi(r.best)
            );
            assert_eq!((r.root_value, r.root_wdl), (1.0, [1.0, 0.0, 0.0]));
            let i = r.moves.iter().position(|&m| m == r.best).unwrap();
            assert!(r.policy_target[i] > 0.0);
            for (j, &p) in r.policy_target.iter().enumerate() {
                assert!(p == 0.0 || wins_within_three(&root, r.moves[j]));
            }
        }
        // Without the solver the same search spends its budget and proves nothing.
        let mut s = Search::new(plain, root.clone(), 1);
        let (r, _) = run(&mut s, 4000, false, uniform);
        assert!(!r.forced_win && s.root_visits() > 4000, "{algorithm:?}");
    }
}

/// Logit 2 for the first move, 0 for the others.
fn first_favoured(_: &Position, moves: &[Move]) -> (Vec<f32>, [f32; 3]) {
    let mut logits = vec![0.0; moves.len()];
    logits[0] = 2.0;
    (logits, [1.0 / 3.0; 3])
}

#[test]
fn policy_temperature_divides_the_logits_of_the_priors() {
    let start = Position::start(minishogi());
    for (t, algorithm) in [
        (1.0f32, Algorithm::Puct),
        (2.0, Algorithm::Puct),
        (0.5, Algorithm::Gumbel),
    ] {
        let c = SearchConfig {
            policy_temperature: t,
            ..config(algorithm, 8)
        };
        let mut s = Search::new(c, start.clone(), 1);
        let (r, _) = run(&mut s, 8, false, first_favoured);
        let k = r.moves.len() as f32;
        let top = (2.0 / t).exp();
        let want = top / (top + k - 1.0);
        assert!(
            (r.prior[0] - want).abs() < 1e-5,
            "T {t}: {} against {want}",
            r.prior[0]
        );
        let rest = 1.0 / (top + k - 1.0);
        assert!(
            r.prior[1..].iter().all(|&p| (p - rest).abs() < 1e-5),
            "T {t}"
        );
    }
}
