//! The network backend of the arena's players and of the USI engine: model files opened
//! through the `model` crate (libtorch).

use arena::{ModelInfo, NetworkError, NetworkOpener, OpenedNetwork};
use encoding::{Device, EncodingSpec, Precision};
use model::DeviceExt;
use std::path::Path;

/// Opens model files (weights and sidecar) with libtorch, for f32 inference.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelOpener;

impl NetworkOpener for ModelOpener {
    fn describe(&self, path: &Path) -> Result<ModelInfo, NetworkError> {
        let meta = model::read_meta(path).map_err(NetworkError::new)?;
        Ok(ModelInfo {
            variant: meta.variant,
            variant_spec: meta.variant_spec,
            encoding: meta.encoding,
        })
    }

    fn check_layout(&self, path: &Path, expected: &EncodingSpec) -> Result<(), NetworkError> {
        let meta = model::read_meta(path).map_err(NetworkError::new)?;
        model::check_encoding(&meta, expected, path).map_err(NetworkError::new)
    }

    fn open(
        &self,
        path: &Path,
        expected: &EncodingSpec,
        device: Device,
    ) -> Result<OpenedNetwork, NetworkError> {
        let device = device.checked().map_err(NetworkError::new)?.resolved();
        let (net, meta) = model::open_evaluator(path, expected, device, Precision::F32)
            .map_err(NetworkError::new)?;
        Ok(OpenedNetwork {
            net: Box::new(net),
            device,
            description: format!("{} for {}", meta.model.name, meta.variant),
        })
    }

    fn check_device(&self, device: Device) -> Result<Device, NetworkError> {
        device.checked().map_err(NetworkError::new)
    }
}
