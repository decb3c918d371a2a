//! Errors of the arena crate.

/// How an external engine failed to produce a move (each loses the game for it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The process exited, could not be started, or its pipe broke.
    #[error("crash: {0}")]
    Crash(String),
    /// No answer within the time allowed.
    #[error("timeout: {0}")]
    Timeout(String),
    /// An answer that is not a move.
    #[error("malformed reply: {0}")]
    Malformed(String),
}

/// A protocol name other than `usi` or `uci`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol {0:?}: expected usi or uci")]
pub struct ParseProtocolError(pub String);
