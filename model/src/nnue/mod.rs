//! Networks for Fairy-Stockfish: its NNUE architecture, trained here through libtorch on our
//! self-play positions and written as the `.nnue` file it reads.
//!
//! The architecture is the one current Fairy-Stockfish evaluates (src/nnue/nnue_architecture.h):
//! `HalfKAv2Variants` features ([`layout`]) into a 512-wide feature transformer per side with
//! 8 PSQT buckets, then one of 8 layer stacks 1024 -> 16 -> 32 -> 1 chosen by the number of
//! pieces on the board. [`file`] is the byte layout, [`infer`] the integer inference (exactly
//! Fairy-Stockfish's arithmetic, so that its `eval` can be checked against ours), [`train`]
//! the float model, its training and its quantisation (variant-nnue-pytorch's scales).
//!
//! Scores: Fairy-Stockfish's trainers map an internal evaluation `e` of the network to a win
//! probability `sigmoid(e / 361)`, and a training score `s` to `sigmoid(s / 410)`
//! (variant-nnue-pytorch's model.py). Our values are `v` in [-1, 1], win probability
//! `(1 + v) / 2`: [`score_of_value`] is the inverse of the second mapping.

pub mod error;
pub mod file;
pub mod infer;
pub mod layout;
mod notation;
pub mod train;

pub use error::NnueError;
pub use file::{LayerStack, NnueNet};
pub use infer::Evaluation;
pub use layout::{FeatureLayout, FsfRules};
pub use train::{train, NnueTrainConfig, TrainReport, TrainingSet};

/// Feature transformer outputs per side.
pub const L1: usize = 512;
/// First hidden layer.
pub const L2: usize = 16;
/// Second hidden layer.
pub const L3: usize = 32;
/// PSQT buckets.
pub const PSQT_BUCKETS: usize = 8;
/// Layer stacks.
pub const LAYER_STACKS: usize = 8;
/// `OutputScale`: the network's output over the evaluation.
pub const OUTPUT_SCALE: i32 = 16;
/// `WeightScaleBits`: the shift of the hidden layers.
pub const WEIGHT_SCALE_BITS: u32 = 6;
/// Network evaluation units per logit of win probability (`out_scaling`).
pub const EVAL_SCALE: f64 = 361.0;
/// Training score units per logit of win probability (`in_scaling`).
pub const SCORE_SCALE: f64 = 410.0;
/// The largest score [`score_of_value`] writes (`VALUE_KNOWN_WIN`): a sure win or loss.
pub const SCORE_LIMIT: i32 = 10_000;

/// The training score (Fairy-Stockfish's internal units) of our value `v` in [-1, 1] for the
/// side to move: `410 ln(p / (1 - p))` with `p = (1 + v) / 2`, within +-[`SCORE_LIMIT`].
pub fn score_of_value(v: f32) -> i32 {
    let p = ((f64::from(v) + 1.0) / 2.0).clamp(0.0, 1.0);
    let s = SCORE_SCALE * (p / (1.0 - p)).ln();
    if s.is_nan() {
        return 0;
    }
    s.clamp(-f64::from(SCORE_LIMIT), f64::from(SCORE_LIMIT))
        .round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_invert_the_trainers_sigmoid() {
        assert_eq!(score_of_value(0.0), 0);
        assert_eq!(score_of_value(1.0), SCORE_LIMIT);
        assert_eq!(score_of_value(-1.0), -SCORE_LIMIT);
        assert_eq!(score_of_value(f32::NAN), 0);
        for v in [-0.9f32, -0.3, 0.2, 0.75] {
            let s = score_of_value(v);
            let p = 1.0 / (1.0 + (-f64::from(s) / SCORE_SCALE).exp());
            assert!((p - (1.0 + f64::from(v)) / 2.0).abs() < 1e-3, "{v} {s}");
        }
        assert_eq!(score_of_value(0.5), (410.0f64 * 3f64.ln()).round() as i32);
    }
}
