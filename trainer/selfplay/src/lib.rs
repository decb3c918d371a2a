//! Self-play side of the trainer, free of libtorch: position encoding for the network.

pub mod encoding;

pub use encoding::{Encoder, EncodingSpec};
