//! Search threads and the inference server: the same seed gives the same games whatever
//! answers the batches, several threads lose and repeat no game, the server respects its batch
//! limit and stops cleanly, and the simulated device waits without working. (That a stop
//! ends every thread of a self-play worker is the worker's test, in the pipeline crate.)

use encoding::Encoder;
use rules::Variant;
use search::{Evaluation, Evaluator, EvaluatorError, Request, SearchConfig};
use selfplay::{
    run_games, Control, GameRecord, InferenceServer, Mode, PlayStats, ReplayWindow, SelfPlayConfig,
    SimulatedDevice,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn encoder() -> Encoder {
    Encoder::new(Arc::new(Variant::builtin("minishogi").unwrap()))
}

/// A network stand-in whose outputs depend on the position only (not on the batch it came
/// in), and differ between positions, so that games depend on every answer.
#[derive(Clone)]
struct Hashed {
    input_len: usize,
    policy_len: usize,
}

impl Evaluator for Hashed {
    fn input_len(&self) -> usize {
        self.input_len
    }
    fn policy_len(&self) -> usize {
        self.policy_len
    }
    fn evaluate(&mut self, x: &[f32], n: usize) -> Result<Vec<Evaluation>, EvaluatorError> {
        Ok((0..n)
            .map(|i| {
                let pos = &x[i * self.input_len..(i + 1) * self.input_len];
                let h = pos
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v != 0.0)
                    .fold(7u64, |h, (k, &v)| {
                        (h ^ (k as u64 + (v * 8.0) as u64)).wrapping_mul(0x100_0000_01B3)
                    });
                let w = (h % 1000) as f32 / 2000.0;
                Evaluation {
                    policy_logits: (0..self.policy_len as u64)
                        .map(|m| ((h ^ m.wrapping_mul(0x9E37_79B9)) % 97) as f32 / 25.0)
                        .collect(),
                    wdl: [w, 0.5 - w / 2.0, 0.5 - w / 2.0],
                }
            })
            .collect())
    }
}

fn hashed(e: &Encoder) -> Hashed {
    Hashed {
        input_len: e.input_len(),
        policy_len: e.policy_len(),
    }
}

fn config(parallel: usize, pipeline: usize) -> SelfPlayConfig {
    SelfPlayConfig {
        parallel_games: parallel,
        pipeline,
        full_simulations: 12,
        fast_simulations: 4,
        full_probability: 0.5,
        max_plies: 40,
        ..Default::default()
    }
}

/// One search thread per evaluator, all drawing from one budget of `games` games: every game
/// gets a number unique over the threads (in start order); thread `t` seeds its games from
/// `seed` and `t`. Returns the games by number and the threads' statistics merged.
fn play(
    enc: &Encoder,
    evs: Vec<Box<dyn Evaluator + Send + '_>>,
    cfg: &SelfPlayConfig,
    games: usize,
    seed: u64,
) -> (Vec<(u64, GameRecord)>, PlayStats) {
    struct Budget<'a> {
        games: usize,
        started: &'a AtomicUsize,
        out: &'a Mutex<Vec<(u64, GameRecord)>>,
    }
    impl Control<'_> for Budget<'_> {
        fn start_game(&mut self) -> Option<u64> {
            let n = self.started.fetch_add(1, Ordering::SeqCst);
            (n < self.games).then_some(n as u64)
        }
        fn game_over(&mut self, _: usize, tag: u64, g: GameRecord, _: &PlayStats) -> bool {
            self.out.lock().unwrap().push((tag, g));
            true
        }
    }
    let (started, out) = (AtomicUsize::new(0), Mutex::new(Vec::new()));
    let search = SearchConfig::default();
    let all = std::thread::scope(|scope| {
        let handles: Vec<_> = evs
            .into_iter()
            .enumerate()
            .map(|(t, ev)| {
                let (started, out, search) = (&started, &out, &search);
                scope.spawn(move || {
                    let mut control = Budget {
                        games,
                        started,
                        out,
                    };
                    let thread_seed =
                        rules::SplitMix64(seed ^ (t as u64).rotate_left(32)).next_u64();
                    let evs: Vec<Box<dyn Evaluator + '_>> = vec![ev];
                    let one = std::slice::from_ref(search);
                    run_games(
                        &[enc],
                        evs,
                        one,
                        cfg,
                        Mode::SelfPlay,
                        thread_seed,
                        &mut control,
                    )
                    .unwrap()
                })
            })
            .collect();
        let mut all = PlayStats::default();
        for h in handles {
            all.merge(&h.join().unwrap());
        }
        all
    });
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|g| g.0);
    (v, all)
}

#[test]
fn one_thread_is_deterministic_whatever_answers_the_batches() {
    let enc = encoder();
    let cfg = config(4, 2);
    let (inline, s1) = play(&enc, vec![Box::new(hashed(&enc))], &cfg, 12, 5);
    let server = InferenceServer::start(64);
    let a = server.register(Box::new(hashed(&enc)));
    let (served, s2) = play(&enc, vec![Box::new(a.clone())], &cfg, 12, 5);
    let (again, _) = play(&enc, vec![Box::new(a)], &cfg, 12, 5);
    assert_eq!(inline.len(), 12);
    assert_eq!(inline, served, "the server changed the games");
    assert_eq!(served, again, "the same seed gave other games");
    assert_eq!((s1.evals, s1.games), (s2.evals, s2.games));
    // Another seed, other games.
    let (other, _) = play(&enc, vec![Box::new(hashed(&enc))], &cfg, 12, 6);
    assert_ne!(inline, other);
}

#[test]
fn several_threads_lose_and_repeat_no_game() {
    let enc = encoder();
    let cfg = config(3, 2);
    let server = InferenceServer::start(8);
    let net = server.register(Box::new(hashed(&enc)));
    let evs: Vec<Box<dyn Evaluator + Send>> = (0..4).map(|_| Box::new(net.clone()) as _).collect();
    let (games, stats) = play(&enc, evs, &cfg, 41, 9);
    let tags: Vec<u64> = games.iter().map(|g| g.0).collect();
    assert_eq!(tags, (0..41).collect::<Vec<_>>(), "every game once");
    assert_eq!(stats.games, 41);
    let mut window = ReplayWindow::new(enc.clone());
    for (_, g) in &games {
        window.add_game(g).expect("a legal game");
    }
    assert_eq!(window.len() as u64, stats.samples);
    // The threads played different games (their own seeds).
    let distinct: std::collections::HashSet<&Vec<String>> =
        games.iter().map(|g| &g.1.moves).collect();
    assert!(
        distinct.len() > 20,
        "{} distinct games of 41",
        distinct.len()
    );
    // No forward pass above the limit of 8 positions (each group brings 3).
    let s = &server.stats;
    assert!(s.mean_batch() <= 8.0 && s.mean_batch() >= 1.0);
    assert_eq!(
        s.positions.load(std::sync::atomic::Ordering::Relaxed),
        stats.evals
    );
}

#[test]
fn the_server_joins_waiting_batches_and_splits_the_answers() {
    let enc = encoder();
    let server = InferenceServer::start(100);
    let slow = SimulatedDevice::new(enc.input_len(), enc.policy_len(), Duration::from_millis(30));
    let mut a = server.register(Box::new(slow));
    let mut b = server.register(Box::new(hashed(&enc)));
    let request = |n: usize, first: u32| {
        let mut r = Request::default();
        for i in 0..n {
            r.add_position(enc.input_len())[0] = 1.0;
            r.moves.extend([first, first + i as u32]);
            r.end_position();
        }
        r
    };
    // The first batch keeps the device busy; the three behind it are answered in one pass.
    let t0 = a.submit(request(1, 0)).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    let tickets: Vec<_> = (0..3)
        .map(|k| a.submit(request(k + 1, 5)).unwrap())
        .collect();
    t0.wait().unwrap();
    for (k, t) in tickets.into_iter().enumerate() {
        let r = t.wait().unwrap();
        assert_eq!(r.wdl.len(), k + 1);
        assert_eq!(r.logits.len(), 2 * (k + 1));
    }
    assert_eq!(
        server
            .stats
            .batches
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    // Another network's answers are its own.
    let r = b.submit(request(2, 3)).unwrap().wait().unwrap();
    let whole = b.evaluate(&r.inputs, 2).unwrap();
    assert_eq!(r.logits[1], whole[0].policy_logits[3]);
    assert_eq!(r.logits[3], whole[1].policy_logits[4]);
    // A bad request is refused before it reaches the queue.
    let mut bad = request(1, 0);
    bad.moves[0] = enc.policy_len() as u32;
    assert!(b.submit(bad).is_err());
    // Stopping the server answers what is queued with an error; later submits fail.
    let pending = a.submit(request(1, 0)).unwrap();
    drop(server);
    let _ = pending.wait();
    assert!(a.submit(request(1, 0)).is_err());
}

#[test]
fn the_simulated_device_waits_and_answers_uniformly() {
    let enc = encoder();
    let mut d = SimulatedDevice::new(enc.input_len(), enc.policy_len(), Duration::from_millis(20));
    let mut r = Request::default();
    for _ in 0..64 {
        r.add_position(enc.input_len());
        r.moves.extend([1, 2, 3]);
        r.end_position();
    }
    let t = Instant::now();
    d.evaluate_request(&mut r).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(20));
    assert_eq!(r.logits, vec![0.0; 192]);
    assert_eq!(r.wdl, vec![[1.0 / 3.0; 3]; 64]);
}

#[test]
fn the_evaluation_cache_changes_no_game_and_saves_network_calls() {
    let enc = encoder();
    let plain = SelfPlayConfig {
        eval_cache: 0,
        ..config(1, 1)
    };
    let cached = SelfPlayConfig {
        eval_cache: 1 << 12,
        ..plain.clone()
    };
    let (a, sa) = play(&enc, vec![Box::new(hashed(&enc))], &plain, 6, 3);
    let (b, sb) = play(&enc, vec![Box::new(hashed(&enc))], &cached, 6, 3);
    assert_eq!(a, b, "answers from the cache changed the games");
    assert_eq!(sa.cache_hits, 0);
    assert!(sb.cache_hits > 0, "no leaf repeated in 6 games: {sb:?}");
    // Every leaf the plain run sent to the network came from the network or the cache.
    assert_eq!(sa.evals, sb.evals + sb.cache_hits);
    // Games started together share their identical leaves within a batch: four games at the
    // start position send it once.
    let four = SelfPlayConfig {
        eval_cache: 1 << 12,
        ..config(4, 1)
    };
    let (games, s) = play(&enc, vec![Box::new(hashed(&enc))], &four, 8, 3);
    assert_eq!(games.len(), 8);
    assert!(s.cache_hits >= 3, "{s:?}");
    let mut window = ReplayWindow::new(enc.clone());
    for (_, g) in &games {
        window.add_game(g).expect("a legal game");
    }
}
