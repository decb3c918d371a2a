//! Search: the [`Evaluator`] trait through which a network (or any other oracle) scores
//! positions, and the tree search built on it.
//!
//! [`Search`] holds one game's tree and never calls a network itself: the driver asks it for a
//! leaf ([`Search::select`]), evaluates the leaves of many games in one batch and hands each
//! its evaluation ([`Search::expand`]). Two algorithms ([`Algorithm`]): AlphaZero PUCT and
//! Gumbel AlphaZero, configured by [`SearchConfig`]; they share one search loop and differ only
//! in their parts (root preparation, root and interior selection, outputs: `parts.rs`).

mod cache;
mod config;
mod evaluator;
mod mcts;
mod parts;
mod rng;
mod tree;

pub use cache::{EvalCache, DEFAULT_EVAL_CACHE};
pub use config::{Algorithm, SearchConfig, SearchError, MAX_MATE_PLIES};
pub use evaluator::{Evaluation, Evaluator, EvaluatorError, Request, Ticket, UniformEvaluator};
pub use mcts::{sample_move, sample_policy, Search, SearchResult};
