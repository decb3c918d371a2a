//! Errors of the model crate.

use thiserror::Error;

/// Any error of the network side.
#[derive(Debug, Error)]
pub enum ModelError {
    /// A model or training config is invalid.
    #[error("{file}: {key}: {reason}")]
    Config {
        /// File (or built-in name).
        file: String,
        /// Key, e.g. `blocks` or `training.lr`.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint or model file does not fit what was asked.
    #[error("{path}: {reason}")]
    Checkpoint {
        /// The file or directory.
        path: String,
        /// What does not match, or what is damaged.
        reason: String,
    },
    /// libtorch failed.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl From<atomic_file::WriteError> for ModelError {
    fn from(e: atomic_file::WriteError) -> Self {
        ModelError::Io {
            path: e.path.display().to_string(),
            source: e.source,
        }
    }
}

/// Result with [`ModelError`].
pub type Result<T> = std::result::Result<T, ModelError>;

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.display().to_string(),
        source,
    }
}
