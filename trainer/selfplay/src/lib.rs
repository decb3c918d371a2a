//! Self-play side of the trainer, free of libtorch: games in lockstep (self-play and matches
//! between in-process players) and their openings, the inference server, sample shards and
//! their HCPE export, and the replay window.

pub mod driver;
mod error;
pub mod hcpe;
pub mod opening;
pub mod replay;
pub mod samples;
pub mod server;

pub use driver::{
    play_games, run_games, Control, GameStart, Inference, Mode, PlayStats, SelfPlayConfig,
};
pub use error::SelfPlayError;
pub use opening::{random_openings, Opening, OpeningError};
pub use replay::ReplayWindow;
pub use samples::{
    list_shards, read_shard, write_shard, GameRecord, MoveTarget, SampleError, ShardHeader,
};
pub use server::{InferenceServer, ServerEvaluator, SimulatedDevice};
