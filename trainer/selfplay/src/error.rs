//! The error of the self-play crate's settings, game records and hcpe export.

use thiserror::Error;

/// Why settings, a game record or a position are refused.
#[derive(Debug, Error)]
pub enum SelfPlayError {
    /// A `[selfplay]` setting out of range.
    #[error("selfplay.{key}: {reason}")]
    Config {
        /// The key within `[selfplay]`.
        key: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// A value-target setting out of range; the key is bare (the caller names its section).
    #[error("{key}: {reason}")]
    ValueTargets {
        /// The key of [`crate::replay::ValueTargets`] (or `policy_surprise_weight`).
        key: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// A game record's start position is not a position of the variant.
    #[error(transparent)]
    Start(#[from] rules::Error),
    /// A recorded move is not legal.
    #[error("ply {ply}: {source}")]
    Move {
        /// The move's ply, from the start position.
        ply: usize,
        /// Why it is refused.
        source: rules::Error,
    },
    /// A recorded training target is out of range.
    #[error("ply {ply}: {reason}")]
    Target {
        /// The target's ply, from the start position.
        ply: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A position the hcpe format cannot hold.
    #[error("{0}")]
    Hcpe(String),
}

impl SelfPlayError {
    /// A `[selfplay]` setting error.
    pub(crate) fn config(key: &'static str, reason: impl Into<String>) -> SelfPlayError {
        SelfPlayError::Config {
            key,
            reason: reason.into(),
        }
    }

    /// A value-target setting error.
    pub(crate) fn value_targets(key: &'static str, reason: impl Into<String>) -> SelfPlayError {
        SelfPlayError::ValueTargets {
            key,
            reason: reason.into(),
        }
    }

    /// A bad training target at `ply`.
    pub(crate) fn target(ply: usize, reason: impl Into<String>) -> SelfPlayError {
        SelfPlayError::Target {
            ply,
            reason: reason.into(),
        }
    }
}
