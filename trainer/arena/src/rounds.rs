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
use search::{Algorithm, EvalCache, Request, Search};

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
    /// The network's answers kept by position, if any: leaves found there skip the network.
    fn cache(&mut self) -> Option<&mut EvalCache> {
        None
    }
}

/// Where each leaf of a minibatch gets its answer: a row of the network's request (with the
/// leaf's cache key), or a row of the answers found in the cache.
enum Source {
    Net(usize, u64),
    Cached(usize),
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
    // A minibatch's answers found in the cache, where each leaf's answer comes from, and,
    // when some came from the cache, all the answers in leaf order.
    let mut hits = Request::default();
    let mut all = Request::default();
    let mut sources: Vec<Source> = Vec::new();
    let cached = driver.cache().is_some_and(|c| c.enabled());
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
                    let key = cached.then(|| encoder.cache_key(leaf));
                    let moves = search.leaf_moves().len();
                    if let Some(k) = key {
                        if let Some((logits, wdl)) = driver.cache().and_then(|c| c.get(k, moves)) {
                            search.expand(logits, wdl);
                            continue;
                        }
                    }
                    add_leaf(&encoder, &mut r, leaf, search.leaf_moves());
                    answer(driver, &mut r)?;
                    if let (Some(k), Some(c)) = (key, driver.cache()) {
                        c.insert(k, &r.logits, r.wdl[0]);
                    }
                    search.expand(&r.logits, r.wdl[0]);
                }
            } else {
                hits.clear();
                sources.clear();
                let n = search.select_batch(batch, |leaf, moves| {
                    driver.on_leaf(leaf);
                    let key = cached.then(|| encoder.cache_key(leaf));
                    let hit = key.and_then(|k| driver.cache().and_then(|c| c.get(k, moves.len())));
                    if let Some((logits, wdl)) = hit {
                        sources.push(Source::Cached(hits.len()));
                        hits.logits.extend_from_slice(logits);
                        hits.wdl.push(wdl);
                        hits.ends.push(hits.logits.len() as u32);
                    } else {
                        sources.push(Source::Net(r.len(), key.unwrap_or(0)));
                        add_leaf(&encoder, &mut r, leaf, moves);
                    }
                });
                if n > 0 {
                    if !r.is_empty() {
                        answer(driver, &mut r)?;
                    }
                    if cached {
                        if let Some(c) = driver.cache() {
                            for source in &sources {
                                if let Source::Net(row, key) = *source {
                                    c.insert(key, &r.logits[r.range(row)], r.wdl[row]);
                                }
                            }
                        }
                    }
                    if hits.is_empty() {
                        search.expand_batch(&r);
                    } else {
                        // The answers in leaf order, from the network's rows and the cache's.
                        all.clear();
                        for source in &sources {
                            let (from, row) = match *source {
                                Source::Net(row, _) => (&r, row),
                                Source::Cached(row) => (&hits, row),
                            };
                            all.logits.extend_from_slice(&from.logits[from.range(row)]);
                            all.wdl.push(from.wdl[row]);
                            all.ends.push(all.logits.len() as u32);
                        }
                        search.expand_batch(&all);
                    }
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

    /// A fixed budget, the network's answers (and a cache of them, if any), and the size of
    /// every network call.
    struct Counting {
        encoder: Encoder,
        net: Box<dyn Evaluator>,
        cache: Option<EvalCache>,
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
        fn cache(&mut self) -> Option<&mut EvalCache> {
            self.cache.as_mut()
        }
    }

    /// Answers that differ from position to position (a function of the encoded input), so
    /// that a search depends on every answer.
    struct Varied(UniformEvaluator);

    impl Evaluator for Varied {
        fn input_len(&self) -> usize {
            self.0.input_len
        }
        fn policy_len(&self) -> usize {
            self.0.policy_len
        }
        fn evaluate(
            &mut self,
            x: &[f32],
            n: usize,
        ) -> Result<Vec<search::Evaluation>, search::EvaluatorError> {
            let mut out = self.0.evaluate(x, n)?;
            for (e, input) in out.iter_mut().zip(x.chunks(self.0.input_len)) {
                let h = input.iter().enumerate().fold(1u64, |h, (k, &v)| {
                    h.rotate_left(5) ^ (k as u64).wrapping_mul((v * 3.0) as u64 + 1)
                });
                for (m, l) in e.policy_logits.iter_mut().enumerate() {
                    *l = ((h ^ m as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as f32 / 4.0;
                }
                let w = (h % 64) as f32 / 128.0;
                e.wdl = [w, 0.2, 0.8 - w];
            }
            Ok(out)
        }
    }

    fn uniform(encoder: &Encoder) -> UniformEvaluator {
        UniformEvaluator {
            input_len: encoder.input_len(),
            policy_len: encoder.policy_len(),
        }
    }

    #[test]
    fn the_cache_changes_no_search_and_saves_network_calls() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let encoder = Encoder::new(v.clone());
        let mut pos = Position::start(v.clone());
        for k in [3, 5, 2, 7] {
            let legal = pos.legal_moves();
            pos.make_move(legal[k % legal.len()]);
        }
        for algorithm in [Algorithm::Gumbel, Algorithm::Puct] {
            for batch in [1usize, 16] {
                // A search, then another two plies on (our move and a reply), as in a game:
                // the second meets positions the first evaluated.
                let searched = |cache: Option<EvalCache>| {
                    let mut d = Counting {
                        net: Box::new(Varied(uniform(&encoder))),
                        cache,
                        encoder: encoder.clone(),
                        batch,
                        budget: 400,
                        calls: Vec::new(),
                        leaves: 0,
                    };
                    let config = SearchConfig {
                        algorithm,
                        ..SearchConfig::default()
                    };
                    let mut root = pos.clone();
                    let mut out = Vec::new();
                    for _ in 0..2 {
                        let mut search = Search::new(config.clone(), root.clone(), 1);
                        run(&mut search, Rounds::new(algorithm, true, 100), &mut d).unwrap();
                        let r = search.result();
                        root.make_move(r.best);
                        root.make_move(root.legal_moves()[0]);
                        out.push((r.visits, r.best));
                    }
                    (out, d.leaves, d.calls.iter().sum::<usize>())
                };
                let (plain, leaves, from_net) = searched(None);
                assert_eq!(leaves, from_net);
                let (cached, cleaves, cnet) = searched(Some(EvalCache::new(1 << 12)));
                let what = format!("{algorithm:?} batch {batch}");
                assert_eq!(cached, plain, "{what}: the cache changed the searches");
                assert_eq!(cleaves, leaves, "{what}");
                assert!(
                    cnet < leaves,
                    "{what}: no leaf from the cache ({cnet} of {leaves})"
                );
            }
        }
    }

    #[test]
    fn the_driver_batch_sets_the_size_of_network_calls() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let encoder = Encoder::new(v.clone());
        for algorithm in [Algorithm::Gumbel, Algorithm::Puct] {
            for batch in [1usize, 16] {
                let mut d = Counting {
                    net: Box::new(uniform(&encoder)),
                    cache: None,
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
