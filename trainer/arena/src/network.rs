//! How the arena opens networks: through a [`NetworkOpener`] its callers give it, so that this
//! crate runs networks only as the `search` crate's [`Evaluator`] and does not depend on the
//! network backend (libtorch).

use crate::error::NetworkError;
use encoding::{Device, EncodingSpec};
use rules::VariantSpec;
use search::Evaluator;
use std::path::Path;

/// What a model file's sidecar says about it.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    /// The name of the variant it was trained for.
    pub variant: String,
    /// That variant's full spec.
    pub variant_spec: VariantSpec,
    /// Its input and policy layout.
    pub encoding: EncodingSpec,
}

/// A network opened from a model file.
pub struct OpenedNetwork {
    /// The network, ready to evaluate.
    pub net: Box<dyn Evaluator + Send>,
    /// The device it runs on (`auto` resolved).
    pub device: Device,
    /// What was loaded, e.g. `b2c16 for minishogi`.
    pub description: String,
}

/// Opens model files (a network backend).
pub trait NetworkOpener: Send + Sync {
    /// Reads the sidecar of the model file `path`.
    fn describe(&self, path: &Path) -> Result<ModelInfo, NetworkError>;
    /// Checks that the model file `path` was trained on the layout `expected`.
    fn check_layout(&self, path: &Path, expected: &EncodingSpec) -> Result<(), NetworkError>;
    /// Opens the model file `path` for the layout `expected` on `device` (f32 inference).
    fn open(
        &self,
        path: &Path,
        expected: &EncodingSpec,
        device: Device,
    ) -> Result<OpenedNetwork, NetworkError>;
    /// `device` if this machine has it; else why not.
    fn check_device(&self, device: Device) -> Result<Device, NetworkError>;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A backend without networks: every model file is missing, every device is there.
    pub(crate) struct NoNetworks;

    fn missing(path: &Path) -> NetworkError {
        NetworkError::new(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no network backend in these tests", path.display()),
        ))
    }

    impl NetworkOpener for NoNetworks {
        fn describe(&self, path: &Path) -> Result<ModelInfo, NetworkError> {
            Err(missing(path))
        }

        fn check_layout(&self, path: &Path, _: &EncodingSpec) -> Result<(), NetworkError> {
            Err(missing(path))
        }

        fn open(
            &self,
            path: &Path,
            _: &EncodingSpec,
            _: Device,
        ) -> Result<OpenedNetwork, NetworkError> {
            Err(missing(path))
        }

        fn check_device(&self, device: Device) -> Result<Device, NetworkError> {
            Ok(device)
        }
    }
}
