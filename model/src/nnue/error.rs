//! Errors of the Fairy-Stockfish network side.

use thiserror::Error;

/// Why a network for Fairy-Stockfish could not be made, read or used.
#[derive(Debug, Error)]
pub enum NnueError {
    /// Fairy-Stockfish cannot play the variant (its rules, or its board, are beyond it).
    #[error("variant {variant:?}: no Fairy-Stockfish network: {reason}")]
    Unplayable {
        /// Our variant.
        variant: String,
        /// Why, naming every rule in the way.
        reason: String,
    },
    /// Our variant and the Fairy-Stockfish variant do not match.
    #[error("{variant}: {reason}")]
    Layout {
        /// The two variants.
        variant: String,
        /// What differs.
        reason: String,
    },
    /// A `.nnue` file (or network) is damaged or not of this architecture.
    #[error("network file: {reason}")]
    File {
        /// What is wrong.
        reason: String,
    },
    /// Training data or options are unusable.
    #[error("training: {reason}")]
    Training {
        /// What is wrong.
        reason: String,
    },
    /// libtorch failed.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}
