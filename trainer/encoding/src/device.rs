//! Where networks run, as configs, flags and the USI `Device` option spell it. Whether this
//! machine has the device, and libtorch's own device, are the `model` crate's (its
//! `DeviceExt`), so that this crate stays free of libtorch.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// The device networks run on: spelt `cpu`, `cuda` (the first GPU), `cuda:N` or `auto` (CUDA
/// when this machine has it, else the CPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// CUDA's first device when one is available, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// The CUDA device of this index.
    Cuda(usize),
}

/// A device that is not spelled right or that this machine does not have.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DeviceError {
    /// Not one of the spellings.
    #[error("{0:?}: expected cpu, cuda, cuda:N or auto")]
    Unknown(String),
    /// `cuda` on a machine without CUDA.
    #[error("cuda: no CUDA device is available")]
    NoCuda,
    /// `cuda:N` beyond the devices this machine has.
    #[error("cuda:{index}: only {count} CUDA devices")]
    Missing {
        /// The index asked for.
        index: usize,
        /// CUDA devices available.
        count: usize,
    },
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Auto => f.write_str("auto"),
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

/// Parses a spelling (`cuda` is `cuda:0`); only [`DeviceError::Unknown`] comes from here.
impl std::str::FromStr for Device {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<Device, DeviceError> {
        match s {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "cuda" => Ok(Device::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
                .map(Device::Cuda)
                .ok_or_else(|| DeviceError::Unknown(s.to_string())),
        }
    }
}

impl Serialize for Device {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_parse_and_print_back() {
        for (s, d) in [("auto", Device::Auto), ("cpu", Device::Cpu)] {
            assert_eq!(s.parse::<Device>(), Ok(d));
            assert_eq!(d.to_string(), s);
        }
        assert_eq!("cuda".parse::<Device>(), Ok(Device::Cuda(0)));
        assert_eq!("cuda:3".parse::<Device>(), Ok(Device::Cuda(3)));
        assert_eq!(Device::Cuda(3).to_string(), "cuda:3");
        assert_eq!(Device::default(), Device::Auto);
        for bad in ["gpu", "cuda:x", "", "CPU", "cuda:"] {
            let e = bad.parse::<Device>().unwrap_err();
            assert_eq!(e, DeviceError::Unknown(bad.to_string()));
            assert!(e.to_string().contains("cpu, cuda"), "{bad:?}: {e}");
        }
    }

    /// Configs hold the same spelling: `device = "auto"` reads and writes back as written.
    #[test]
    fn serde_uses_the_spelling() {
        #[derive(Serialize, Deserialize)]
        struct C {
            device: Device,
        }
        let c: C = toml::from_str("device = \"auto\"").unwrap();
        assert_eq!(c.device, Device::Auto);
        assert_eq!(toml::to_string(&c).unwrap().trim(), "device = \"auto\"");
        let e = toml::from_str::<C>("device = \"tpu\"").err().unwrap();
        assert!(
            e.message().contains("expected cpu, cuda, cuda:N or auto"),
            "{e}"
        );
    }
}
