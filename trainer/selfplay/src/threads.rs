//! Self-play on several search threads: each thread runs the lockstep driver on its own games
//! with its own evaluator (its own network copy, or a handle on a shared inference server),
//! and all of them draw from one game budget and deadline.

use crate::driver::{run_games, Control, Mode, PlayStats, SelfPlayConfig};
use crate::encoding::Encoder;
use crate::samples::GameRecord;
use search::{Evaluator, EvaluatorError, SearchConfig};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// When [`play_parallel`] stops.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limit {
    /// Games to start over all threads (`None`: no limit).
    pub games: Option<usize>,
    /// Stop at this instant, dropping the games in flight (`None`: no deadline).
    pub until: Option<Instant>,
}

struct Shared<'a> {
    limit: Limit,
    started: &'a AtomicUsize,
    stop: &'a AtomicBool,
    on_game: &'a (dyn Fn(u64, GameRecord) + Sync),
}

impl Control<'_> for Shared<'_> {
    fn start_game(&mut self) -> Option<u64> {
        if self.stop() {
            return None;
        }
        let n = self.started.fetch_add(1, Ordering::SeqCst);
        match self.limit.games {
            Some(max) if n >= max => None,
            _ => Some(n as u64),
        }
    }

    fn game_over(&mut self, _: usize, tag: u64, record: GameRecord, _: &PlayStats) -> bool {
        (self.on_game)(tag, record);
        true
    }

    fn stop(&mut self) -> bool {
        if self.limit.until.is_some_and(|t| Instant::now() >= t) {
            self.stop.store(true, Ordering::SeqCst);
        }
        self.stop.load(Ordering::Relaxed)
    }
}

/// Self-play on one thread per evaluator until `limit`. Every game gets a number unique over
/// all threads (in start order), handed to `on_game` with its record when it ends; thread `t`
/// seeds its games from `seed` and `t`. Returns the threads' statistics merged (wall time:
/// the longest thread's); the first evaluator error stops every thread and is returned.
pub fn play_parallel<'e>(
    encoder: &Encoder,
    evaluators: Vec<Box<dyn Evaluator + Send + 'e>>,
    search: &SearchConfig,
    cfg: &SelfPlayConfig,
    limit: Limit,
    seed: u64,
    on_game: &(dyn Fn(u64, GameRecord) + Sync),
) -> Result<PlayStats, EvaluatorError> {
    let started = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Vec<Result<PlayStats, EvaluatorError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = evaluators
            .into_iter()
            .enumerate()
            .map(|(t, ev)| {
                let (started, stop) = (&started, &stop);
                scope.spawn(move || {
                    let mut control = Shared {
                        limit,
                        started,
                        stop,
                        on_game,
                    };
                    let thread_seed =
                        rules::SplitMix64(seed ^ (t as u64).rotate_left(32)).next_u64();
                    let evs: Vec<Box<dyn Evaluator + 'e>> = vec![ev];
                    let r = run_games(
                        encoder,
                        evs,
                        std::slice::from_ref(search),
                        cfg,
                        Mode::SelfPlay,
                        thread_seed,
                        &mut control,
                    );
                    if r.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("self-play thread panicked"))
            .collect()
    });
    let mut all = PlayStats::default();
    for r in results {
        all.merge(&r?);
    }
    Ok(all)
}
