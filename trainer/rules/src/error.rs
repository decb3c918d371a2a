//! Errors of the rules crate: each names what was wrong and where.

use thiserror::Error;

/// Any error of this crate.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A variant config is invalid.
    #[error("{file}: {key}: {reason}")]
    Config {
        /// The config file (or built-in variant name).
        file: String,
        /// The key, e.g. `pieces[3].betza` (or `-` for the whole file).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An SFEN string is invalid.
    #[error("bad SFEN token {token:?}: {reason}")]
    Sfen {
        /// The offending token.
        token: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A USI move is malformed or illegal.
    #[error("bad USI move {token:?}: {reason}")]
    Usi {
        /// The offending token.
        token: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value outside its allowed set (a game result, a match rule).
    #[error("{what} {value} (expected {expected})")]
    Value {
        /// What the value is of, e.g. `game result`.
        what: String,
        /// The value as written.
        value: String,
        /// The allowed values.
        expected: String,
    },
}

impl Error {
    pub(crate) fn config(file: &str, key: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Config {
            file: file.to_string(),
            key: key.into(),
            reason: reason.into(),
        }
    }
    pub(crate) fn sfen(token: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Sfen {
            token: token.into(),
            reason: reason.into(),
        }
    }
    pub(crate) fn usi(token: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Usi {
            token: token.into(),
            reason: reason.into(),
        }
    }
}

/// Result with this crate's [`enum@Error`].
pub type Result<T> = std::result::Result<T, Error>;
