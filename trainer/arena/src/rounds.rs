//! The search loop shared by our players and the USI engine: how a search spends its budget.
//!
//! Gumbel's sequential halving needs its budget up front: a search of a huge budget cut short
//! by the clock stops in its first phase, which spreads visits evenly over the considered
//! moves. So a Gumbel search without a fixed budget (a time limit, `infinite`, pondering) runs
//! in rounds of doubling size over the same tree, each a whole halving; any other search is
//! one start of its whole budget.

use crate::error::ArenaError;
use encoding::Encoder;
use rules::{Move, Position};
use search::{Algorithm, Request, Search};

/// Largest doubling of the first round's budget (its size then stays, capped by what is left).
const MAX_DOUBLINGS: u32 = 20;

/// The budgets of a search's starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounds {
    /// Rounds of doubling size (else one round of everything left).
    chunked: bool,
    /// Simulations of the first round.
    base: u64,
    /// Rounds started so far.
    round: u32,
}

impl Rounds {
    /// The rounds of an `algorithm` search; `open_ended`: no fixed budget (a time limit, or
    /// none until `stop`), then Gumbel runs rounds starting at `base` simulations.
    pub(crate) fn new(algorithm: Algorithm, open_ended: bool, base: u32) -> Rounds {
        Rounds {
            chunked: algorithm == Algorithm::Gumbel && open_ended,
            base: u64::from(base.max(1)),
            round: 0,
        }
    }

    /// The budget of the next start with `left` simulations still allowed; None when the
    /// search is over (nothing left, or the one round of an unchunked search has run).
    pub(crate) fn next(&mut self, left: u64) -> Option<u32> {
        if left == 0 || (self.round > 0 && !self.chunked) {
            return None;
        }
        let budget = if self.chunked {
            left.min(self.base << self.round.min(MAX_DOUBLINGS))
        } else {
            left
        };
        self.round += 1;
        Some(budget.min(u64::from(u32::MAX)) as u32)
    }
}

/// What the search loop asks of its caller.
pub(crate) trait Driver {
    /// Simulations the search may still add (0 ends it); asked before each round.
    fn left(&mut self, search: &Search) -> u64;
    /// Whether to stop now; asked between network calls once the root is evaluated.
    fn stop(&mut self, search: &Search) -> bool;
    /// Leaves one network call evaluates at most (1: one at a time, no virtual loss).
    fn batch(&self) -> usize;
    /// The encoder of the network's positions.
    fn encoder(&self) -> &Encoder;
    /// Sees each leaf before it is evaluated.
    fn on_leaf(&mut self, _leaf: &Position) {}
    /// Answers `r`: the logits of its wanted moves and the WDL of each position.
    fn evaluate(&mut self, r: &mut Request) -> Result<(), ArenaError>;
}

/// Runs `search` (no noise) round after round until `rounds` or `driver` ends it. A root with
/// one legal move, or with a move that forces a win (`mate_plies`), gets one round (a search
/// there finishes at once).
pub(crate) fn run(
    search: &mut Search,
    mut rounds: Rounds,
    driver: &mut impl Driver,
) -> Result<(), ArenaError> {
    let single = search.root().legal_moves().len() == 1;
    let encoder = driver.encoder().clone();
    let batch = driver.batch().max(1);
    let mut r = Request::default();
    while let Some(budget) = rounds.next(driver.left(search)) {
        search.start(budget, false);
        while !search.finished() {
            if search.root_visits() > 0 && driver.stop(search) {
                return Ok(());
            }
            r.clear();
            if batch == 1 {
                if search.select() {
                    let leaf = search.leaf_position();
                    driver.on_leaf(leaf);
                    add_leaf(&encoder, &mut r, leaf, search.leaf_moves());
                    answer(driver, &mut r)?;
                    search.expand(&r.logits, r.wdl[0]);
                }
            } else {
                let n = search.select_batch(batch, |leaf, moves| {
                    driver.on_leaf(leaf);
                    add_leaf(&encoder, &mut r, leaf, moves);
                });
                if n > 0 {
                    answer(driver, &mut r)?;
                    search.expand_batch(&r);
                }
            }
        }
        if single || search.forced_win() {
            break;
        }
    }
    Ok(())
}

/// Adds `leaf` and its legal `moves` to `r`.
pub(crate) fn add_leaf(encoder: &Encoder, r: &mut Request, leaf: &Position, moves: &[Move]) {
    encoder.encode(leaf, r.add_position(encoder.input_len()));
    r.moves.extend(
        moves
            .iter()
            .map(|&mv| encoder.move_to_index(leaf, mv) as u32),
    );
    r.end_position();
}

/// Has `driver` answer `r`, checking that every position got its logits and WDL.
fn answer(driver: &mut impl Driver, r: &mut Request) -> Result<(), ArenaError> {
    driver.evaluate(r)?;
    if r.wdl.len() != r.len() || r.logits.len() != r.moves.len() {
        return Err(ArenaError::ShortAnswer {
            positions: r.wdl.len(),
            wanted: r.len(),
            logits: r.logits.len(),
            moves: r.moves.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;
    use search::{Evaluator, SearchConfig, UniformEvaluator};
    use std::sync::Arc;

    /// A fixed budget, uniform answers, and the size of every network call.
    struct Counting {
        encoder: Encoder,
        net: UniformEvaluator,
        batch: usize,
        budget: u64,
        calls: Vec<usize>,
        leaves: usize,
    }

    impl Driver for Counting {
        fn left(&mut self, search: &Search) -> u64 {
            self.budget - u64::from(search.root_visits().saturating_sub(1))
        }
        fn stop(&mut self, _: &Search) -> bool {
            false
        }
        fn batch(&self) -> usize {
            self.batch
        }
        fn encoder(&self) -> &Encoder {
            &self.encoder
        }
        fn on_leaf(&mut self, _: &Position) {
            self.leaves += 1;
        }
        fn evaluate(&mut self, r: &mut Request) -> Result<(), ArenaError> {
            self.calls.push(r.len());
            Ok(self.net.evaluate_request(r)?)
        }
    }

    #[test]
    fn the_driver_batch_sets_the_size_of_network_calls() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let encoder = Encoder::new(v.clone());
        for algorithm in [Algorithm::Gumbel, Algorithm::Puct] {
            for batch in [1usize, 16] {
                let mut d = Counting {
                    net: UniformEvaluator {
                        input_len: encoder.input_len(),
                        policy_len: encoder.policy_len(),
                    },
                    encoder: encoder.clone(),
                    batch,
                    budget: 500,
                    calls: Vec::new(),
                    leaves: 0,
                };
                let config = SearchConfig {
                    algorithm,
                    ..SearchConfig::default()
                };
                let mut search = Search::new(config, Position::start(v.clone()), 1);
                run(&mut search, Rounds::new(algorithm, true, 100), &mut d).unwrap();
                assert_eq!(search.root_visits(), 501, "{algorithm:?} batch {batch}");
                assert_eq!(d.calls.iter().sum::<usize>(), d.leaves);
                assert!(d.calls.iter().all(|&n| n >= 1 && n <= batch));
                let mean = d.leaves as f64 / d.calls.len() as f64;
                assert!(
                    mean >= batch as f64 / 2.0,
                    "{algorithm:?} batch {batch}: {mean} leaves a call"
                );
            }
        }
    }

    fn budgets(mut r: Rounds, mut left: u64) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some(b) = r.next(left) {
            out.push(b);
            left -= u64::from(b);
        }
        out
    }

    #[test]
    fn rounds_double_under_a_time_limit_only_for_gumbel() {
        let timed = Rounds::new(Algorithm::Gumbel, true, 100);
        assert_eq!(budgets(timed, 1000), [100, 200, 400, 300]);
        assert_eq!(budgets(timed, 50), [50]);
        assert_eq!(
            budgets(Rounds::new(Algorithm::Gumbel, false, 100), 1000),
            [1000]
        );
        assert_eq!(
            budgets(Rounds::new(Algorithm::Puct, true, 100), 1000),
            [1000]
        );
        assert_eq!(budgets(timed, 0), Vec::<u32>::new());
        let mut r = Rounds::new(Algorithm::Gumbel, true, 1);
        for _ in 0..40 {
            r.next(u64::MAX);
        }
        assert_eq!(r.next(u64::MAX), Some(1 << MAX_DOUBLINGS));
    }
}
