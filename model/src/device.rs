//! Where networks run, as configs and flags name it; libtorch's device is made from it here
//! only, so no other crate names libtorch.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// The device networks run on: configs and flags spell it `cpu`, `cuda` (the first GPU),
/// `cuda:N` or `auto` (CUDA when this machine has it, else the CPU).
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

impl Device {
    /// The concrete device: `Auto` becomes CUDA's first device or the CPU, the others stay.
    pub fn resolved(self) -> Device {
        match self {
            Device::Auto if tch::Cuda::is_available() => Device::Cuda(0),
            Device::Auto => Device::Cpu,
            d => d,
        }
    }

    /// Whether networks on this device run on CUDA.
    pub fn is_cuda(self) -> bool {
        matches!(self.resolved(), Device::Cuda(_))
    }

    /// libtorch's device.
    pub(crate) fn torch(self) -> tch::Device {
        match self.resolved() {
            Device::Cuda(n) => tch::Device::Cuda(n),
            _ => tch::Device::Cpu,
        }
    }

    /// The device of libtorch's `d` (every device this crate makes is the CPU or CUDA).
    pub(crate) fn of(d: tch::Device) -> Device {
        match d {
            tch::Device::Cuda(n) => Device::Cuda(n),
            _ => Device::Cpu,
        }
    }
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

/// Parses a spelling and checks that this machine has the device (`cuda`, `cuda:N`), so that
/// a device read from a config or a flag is one networks can run on; `auto` always is.
impl std::str::FromStr for Device {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<Device, DeviceError> {
        let count = || tch::Cuda::device_count().max(0) as usize;
        match s {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "cuda" if tch::Cuda::is_available() => Ok(Device::Cuda(0)),
            "cuda" => Err(DeviceError::NoCuda),
            _ => match s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(index) if index < count() => Ok(Device::Cuda(index)),
                Some(index) => Err(DeviceError::Missing {
                    index,
                    count: count(),
                }),
                None => Err(DeviceError::Unknown(s.to_string())),
            },
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
        assert_eq!(Device::Cuda(3).to_string(), "cuda:3");
        assert_eq!(Device::default(), Device::Auto);
        assert_eq!(Device::Cpu.resolved(), Device::Cpu);
        assert_eq!(Device::Cuda(1).resolved(), Device::Cuda(1));
        assert!(!Device::Cpu.is_cuda() && Device::Cuda(0).is_cuda());
        assert_eq!(Device::of(tch::Device::Cuda(2)), Device::Cuda(2));
        assert_eq!(Device::Cuda(2).torch(), tch::Device::Cuda(2));
        assert_eq!(Device::Cpu.torch(), tch::Device::Cpu);
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
