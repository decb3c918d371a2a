//! Our MCTS in-process, as a player: a network opened from a model file, or the uniform
//! evaluator.

use crate::error::ArenaError;
use crate::network::NetworkOpener;
use crate::rounds::{self, Driver, Rounds};
use encoding::{Device, Encoder};
use rules::{Move, Position, Variant};
use search::{
    Algorithm, EvalCache, Evaluator, Request, Search, SearchConfig, SearchResult, UniformEvaluator,
};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Simulations of the first round of a time-limited search (the rounds double from there).
const TIMED_FIRST_ROUND: u32 = 200;

/// Our MCTS in-process: a network from a model file, or the uniform evaluator (uniform policy,
/// even value) without one.
pub struct Searcher {
    encoder: Encoder,
    net: Box<dyn Evaluator>,
    nodes: u32,
    seed: u64,
    request: Request,
    /// The network's answers by position, kept from move to move (the uniform evaluator's
    /// cost nothing to recompute: none kept).
    cache: EvalCache,
}

/// The network's own view of a position: its WDL and its policy over the legal moves.
#[derive(Clone, Debug)]
pub struct NetView {
    /// Win, draw, loss for the side to move.
    pub wdl: [f32; 3],
    /// The legal moves with their probabilities (softmax of their logits), most likely first.
    pub moves: Vec<(Move, f32)>,
}

impl Searcher {
    /// A searcher with `nodes` simulations per move on a uniform policy and even value.
    pub fn uniform(variant: &Arc<Variant>, nodes: u32) -> Searcher {
        let encoder = Encoder::new(variant.clone());
        let uniform = UniformEvaluator {
            input_len: encoder.input_len(),
            policy_len: encoder.policy_len(),
        };
        Searcher::with(encoder, Box::new(uniform), nodes, 0)
    }

    /// A searcher with `nodes` simulations per move on the network of the model file `path`,
    /// opened by `opener` on `device` in the layout its sidecar records. Errors: the sidecar
    /// does not read, its layout does not fit `variant`, or the network does not open for it.
    pub fn network(
        variant: &Arc<Variant>,
        path: &Path,
        nodes: u32,
        device: Device,
        opener: &dyn NetworkOpener,
    ) -> Result<Searcher, ArenaError> {
        let meta = opener.describe(path).map_err(|reason| ArenaError::Load {
            path: path.to_path_buf(),
            reason,
        })?;
        // The model's own layout (generic, attacks or dlshogi), as recorded in its sidecar.
        let encoder = Encoder::for_spec(variant.clone(), &meta.encoding).map_err(|reason| {
            ArenaError::Layout {
                path: path.to_path_buf(),
                reason,
            }
        })?;
        let opened = opener
            .open(path, &encoder.spec(), device)
            .map_err(|reason| ArenaError::WrongModel {
                path: path.to_path_buf(),
                model_variant: meta.variant.clone(),
                variant: variant.name.clone(),
                reason,
            })?;
        Ok(Searcher::with(
            encoder,
            opened.net,
            nodes,
            search::DEFAULT_EVAL_CACHE,
        ))
    }

    fn with(encoder: Encoder, net: Box<dyn Evaluator>, nodes: u32, cache: usize) -> Searcher {
        Searcher {
            encoder,
            net,
            nodes: nodes.max(1),
            seed: 0,
            request: Request::default(),
            cache: EvalCache::new(cache),
        }
    }

    /// The variant's encoder.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// What the lockstep runner plays this searcher with: its encoder, its network and the
    /// search of [`Searcher::choose`].
    pub(crate) fn lockstep_parts(&mut self) -> (&Encoder, &mut dyn Evaluator, SearchConfig) {
        (&self.encoder, &mut *self.net, search_config(self.nodes))
    }

    /// Evaluates `pos` and its legal moves `moves` in one request; returns the moves' logits
    /// (in the order of `moves`) and the WDL.
    fn evaluate(
        &mut self,
        pos: &Position,
        moves: &[Move],
    ) -> Result<(&[f32], [f32; 3]), ArenaError> {
        let r = &mut self.request;
        r.clear();
        rounds::add_leaf(&self.encoder, r, pos, moves);
        self.net.evaluate_request(r)?;
        let wdl = *r.wdl.first().ok_or(ArenaError::NoEvaluation)?;
        Ok((&r.logits, wdl))
    }

    /// The network alone on `pos`: its WDL and its policy over the legal moves.
    pub fn net_view(&mut self, pos: &Position) -> Result<NetView, ArenaError> {
        let legal = pos.legal_moves();
        let (logits, wdl) = self.evaluate(pos, &legal)?;
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exp: Vec<f32> = logits.iter().map(|&l| (l - max).exp()).collect();
        let sum: f32 = exp.iter().sum();
        let mut moves: Vec<(Move, f32)> = legal
            .iter()
            .copied()
            .zip(exp.iter().map(|e| e / sum))
            .collect();
        moves.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(NetView { wdl, moves })
    }

    /// A Gumbel search of `nodes` simulations (no noise) on `pos`, stopped early at `time` if
    /// given; `None` when the position has no legal move. Under a time limit the search runs
    /// in rounds of doubling size over one tree, from `TIMED_FIRST_ROUND` (200) simulations,
    /// so that its move comes from whole rounds of sequential halving.
    pub fn analyse(
        &mut self,
        pos: &Position,
        nodes: u32,
        time: Option<Duration>,
    ) -> Result<Option<SearchResult>, ArenaError> {
        if pos.legal_moves().is_empty() {
            return Ok(None);
        }
        let started = Instant::now();
        let nodes = nodes.max(1);
        let config = search_config(nodes);
        self.seed = self.seed.wrapping_add(1);
        let mut search = Search::new(config, pos.clone(), self.seed);
        let rounds = Rounds::new(Algorithm::Gumbel, time.is_some(), TIMED_FIRST_ROUND);
        let mut driver = Timed {
            searcher: self,
            nodes,
            deadline: time.map(|t| (started, t)),
        };
        rounds::run(&mut search, rounds, &mut driver)?;
        Ok(Some(search.result()))
    }

    /// The move to play in `pos` (not a finished game): Gumbel search without noise, `nodes`
    /// simulations, stopped early at `time` if given.
    pub fn choose(&mut self, pos: &Position, time: Option<Duration>) -> Result<Move, ArenaError> {
        let legal = pos.legal_moves();
        match legal.len() {
            0 => return Err(ArenaError::NoLegalMove),
            1 => return Ok(legal[0]),
            _ => {}
        }
        let nodes = self.nodes;
        let r = self.analyse(pos, nodes, time)?;
        Ok(r.ok_or(ArenaError::NoLegalMove)?.best)
    }
}

/// A searcher's search of at most `nodes` simulations, stopped at a deadline.
struct Timed<'a> {
    searcher: &'a mut Searcher,
    nodes: u32,
    /// When the search started, and how long it may run.
    deadline: Option<(Instant, Duration)>,
}

impl Driver for Timed<'_> {
    fn left(&mut self, search: &Search) -> u64 {
        let done = search.root_visits().saturating_sub(1);
        u64::from(self.nodes.saturating_sub(done))
    }

    fn stop(&mut self, _: &Search) -> bool {
        self.deadline
            .is_some_and(|(started, t)| started.elapsed() >= t)
    }

    fn batch(&self) -> usize {
        1
    }

    fn encoder(&self) -> &Encoder {
        &self.searcher.encoder
    }

    fn evaluate(&mut self, r: &mut Request) -> Result<(), ArenaError> {
        Ok(self.searcher.net.evaluate_request(r)?)
    }

    fn cache(&mut self) -> Option<&mut EvalCache> {
        Some(&mut self.searcher.cache)
    }
}

/// Our players' search: Gumbel without noise, a fresh tree every move.
fn search_config(nodes: u32) -> SearchConfig {
    SearchConfig {
        algorithm: Algorithm::Gumbel,
        simulations: nodes,
        reuse_tree: false,
        ..SearchConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Visits of the most visited root move over those of the least visited.
    fn spread(r: &SearchResult) -> f64 {
        let max = r.visits.iter().max().copied().unwrap_or(0);
        let min = r.visits.iter().min().copied().unwrap_or(0);
        f64::from(max) / f64::from(min.max(1))
    }

    /// Under a time limit with a node budget far beyond it, the search still ends with whole
    /// rounds of sequential halving: its visits gather on the last survivors, where one search
    /// of the whole budget cut short would have spread them evenly over the considered moves
    /// (its first phase).
    #[test]
    fn a_time_limited_search_completes_halving_rounds() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let pos = Position::start(v.clone());
        let mut s = Searcher::uniform(&v, 1);
        let timed = s
            .analyse(&pos, 100_000_000, Some(Duration::from_millis(300)))
            .unwrap()
            .unwrap();
        let sims: u32 = timed.visits.iter().sum();
        assert!(sims > 3 * TIMED_FIRST_ROUND, "{sims} simulations");
        assert!(spread(&timed) > 2.0, "{:?}", timed.visits);
        // A node-limited search of that size halves the same way.
        let fixed = s.analyse(&pos, sims, None).unwrap().unwrap();
        assert!(spread(&fixed) > 2.0, "{:?}", fixed.visits);
        // The whole budget in one start, cut short by the clock: still in its first phase.
        let config = search_config(100_000_000);
        let mut search = Search::new(config, pos.clone(), 1);
        search.start(100_000_000, false);
        while search.root_visits() <= sims {
            if search.select() {
                let (logits, wdl) = s
                    .evaluate(search.leaf_position(), search.leaf_moves())
                    .unwrap();
                search.expand(logits, wdl);
            }
        }
        let cut = search.result();
        assert!(spread(&cut) < 1.5, "{:?}", cut.visits);
    }
}
