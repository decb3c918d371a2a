//! Search: the [`Evaluator`] trait through which a network (or any other oracle) scores
//! positions, and the tree search built on it.

mod evaluator;

pub use evaluator::{Evaluation, Evaluator, EvaluatorError, UniformEvaluator};
