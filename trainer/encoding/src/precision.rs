//! The floating-point format the network runs inference in.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Floating-point format of inference on CUDA (CPU inference is always f32). Configs and
/// flags spell it `auto`, `f32`, `f16` or `bf16`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// bf16 on CUDA, f32 on CPU.
    #[default]
    Auto,
    /// 32-bit floats.
    F32,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
}

impl Precision {
    /// Every precision, in the order the help text names them.
    pub const ALL: [Precision; 4] = [
        Precision::Auto,
        Precision::F32,
        Precision::F16,
        Precision::Bf16,
    ];

    /// The name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::Bf16 => "bf16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A precision name that is none of `auto`, `f32`, `f16`, `bf16`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0:?}: expected auto, f32, f16 or bf16")]
pub struct ParsePrecisionError(pub String);

impl std::str::FromStr for Precision {
    type Err = ParsePrecisionError;

    fn from_str(s: &str) -> Result<Precision, ParsePrecisionError> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ParsePrecisionError(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flags and configs spell a precision the same way: its name parses back, and serde
    /// reads the same names.
    #[test]
    fn names_parse_back_and_match_serde() {
        for p in Precision::ALL {
            assert_eq!(p.to_string().parse::<Precision>(), Ok(p));
            let de: Precision = serde_json::from_value(serde_json::json!(p.name())).unwrap();
            assert_eq!(de, p);
        }
        assert_eq!(Precision::default(), Precision::Auto);
        let e = "fp8".parse::<Precision>().unwrap_err();
        assert!(
            e.to_string().contains("\"fp8\"") && e.to_string().contains("bf16"),
            "{e}"
        );
    }
}
