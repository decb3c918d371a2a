//! Policy/value network, training step, checkpoints and export through libtorch.
//!
//! This crate is the only one that will link libtorch; until the network lands it only
//! re-exports the rules it will build its encoding on.

pub use rules::Variant;
