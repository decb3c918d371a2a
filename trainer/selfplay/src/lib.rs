//! Self-play side of the trainer, free of libtorch: position encoding for the network, games
//! in lockstep (self-play and matches), sample shards, the replay window, and Elo.

pub mod atomic;
pub mod dlshogi;
pub mod driver;
pub mod elo;
pub mod encoding;
pub mod hcpe;
pub mod replay;
pub mod samples;
pub mod server;
pub mod threads;

pub use driver::{
    play_games, run_games, Control, Inference, Mode, PlayStats, Precision, SelfPlayConfig,
};
pub use elo::{elo_estimate, expected_score, fit, place, EloEstimate, Pairing, Rating, Results};
pub use encoding::{Encoder, EncodingError, EncodingLayout, EncodingSpec};
pub use replay::ReplayWindow;
pub use samples::{
    list_shards, read_shard, write_shard, GameRecord, MoveTarget, SampleError, ShardHeader,
};
pub use server::{InferenceServer, ServerEvaluator, SimulatedDevice};
pub use threads::{play_parallel, Limit};
