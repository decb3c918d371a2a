//! libtorch's side of the [`Device`] (whose spelling is the `encoding` crate's): whether this
//! machine has it, what `auto` means here, and libtorch's device, made here only so that no
//! other crate names libtorch.

pub use encoding::{Device, DeviceError};
use serde::{Deserialize, Deserializer};

/// What a [`Device`] is on this machine.
pub trait DeviceExt: Sized {
    /// The concrete device: `Auto` becomes CUDA's first device or the CPU, the others stay.
    fn resolved(self) -> Device;
    /// Whether networks on this device run on CUDA.
    fn is_cuda(&self) -> bool;
    /// The device if this machine has it (`auto` and `cpu` always); else why not (`cuda` and
    /// `cuda:0` on a machine without CUDA: [`DeviceError::NoCuda`]).
    fn checked(self) -> Result<Device, DeviceError>;
}

impl DeviceExt for Device {
    fn resolved(self) -> Device {
        match self {
            Device::Auto if tch::Cuda::is_available() => Device::Cuda(0),
            Device::Auto => Device::Cpu,
            d => d,
        }
    }

    fn is_cuda(&self) -> bool {
        matches!(self.resolved(), Device::Cuda(_))
    }

    fn checked(self) -> Result<Device, DeviceError> {
        let Device::Cuda(index) = self else {
            return Ok(self);
        };
        let count = tch::Cuda::device_count().max(0) as usize;
        match (index, count) {
            (0, 0) => Err(DeviceError::NoCuda),
            _ if index >= count => Err(DeviceError::Missing { index, count }),
            _ => Ok(self),
        }
    }
}

/// Parses a spelling and checks that this machine has the device (`cuda`, `cuda:N`), so that
/// a device read from a flag is one networks can run on; `auto` always is.
pub fn parse_device(s: &str) -> Result<Device, DeviceError> {
    s.parse::<Device>()?.checked()
}

/// Reads a config's device as [`parse_device`] does (for `#[serde(deserialize_with)]`).
pub fn deserialize_device<'de, D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
    Device::deserialize(d)?
        .checked()
        .map_err(serde::de::Error::custom)
}

/// libtorch's device of a [`Device`], and back.
pub(crate) trait TorchDevice {
    /// libtorch's device (`auto` resolved).
    fn torch(self) -> tch::Device;
    /// The device of libtorch's `d` (every device this crate makes is the CPU or CUDA).
    fn of(d: tch::Device) -> Self;
}

impl TorchDevice for Device {
    fn torch(self) -> tch::Device {
        match self.resolved() {
            Device::Cuda(n) => tch::Device::Cuda(n),
            _ => tch::Device::Cpu,
        }
    }

    fn of(d: tch::Device) -> Device {
        match d {
            tch::Device::Cuda(n) => Device::Cuda(n),
            _ => Device::Cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_resolve_and_convert() {
        assert_eq!(Device::Cpu.resolved(), Device::Cpu);
        assert_eq!(Device::Cuda(1).resolved(), Device::Cuda(1));
        assert!(!Device::Cpu.is_cuda() && Device::Cuda(0).is_cuda());
        assert_eq!(Device::of(tch::Device::Cuda(2)), Device::Cuda(2));
        assert_eq!(Device::Cuda(2).torch(), tch::Device::Cuda(2));
        assert_eq!(Device::Cpu.torch(), tch::Device::Cpu);
        assert_eq!(parse_device("cpu"), Ok(Device::Cpu));
        assert_eq!(parse_device("auto"), Ok(Device::Auto));
        let e = parse_device("cuda:999").unwrap_err().to_string();
        assert!(e.contains("cuda:999"), "{e}");
        if !tch::Cuda::is_available() {
            assert_eq!(parse_device("cuda"), Err(DeviceError::NoCuda));
        }
    }

    /// A config's device this machine lacks is refused when the config is read.
    #[test]
    fn configs_refuse_missing_devices() {
        #[derive(serde::Deserialize)]
        struct C {
            #[serde(deserialize_with = "deserialize_device")]
            device: Device,
        }
        let c: C = toml::from_str("device = \"auto\"").unwrap();
        assert_eq!(c.device, Device::Auto);
        let e = toml::from_str::<C>("device = \"tpu\"").err().unwrap();
        assert!(
            e.message().contains("expected cpu, cuda, cuda:N or auto"),
            "{e}"
        );
        assert!(toml::from_str::<C>("device = \"cuda:999\"").is_err());
    }
}
