//! Shogi-variant rules from config files.
//!
//! A variant is described in TOML ([`VariantSpec`]) and compiled once into a [`Variant`] with
//! precomputed move tables; a [`Position`] holds a board, hands and the game history, generates
//! legal moves, plays and takes back moves, reads and writes SFEN and USI, and reports the
//! game's [`Outcome`].
//!
//! ```
//! use rules::{perft, Position, Variant};
//! use std::sync::Arc;
//! let shogi = Arc::new(Variant::builtin("shogi").unwrap());
//! let mut pos = Position::start(shogi);
//! assert_eq!(pos.legal_moves().len(), 30);
//! assert_eq!(perft(&mut pos, 2), 900);
//! ```

pub mod betza;
mod bitset;
mod checks;
mod compile;
mod compound;
mod error;
pub mod fsf;
mod movegen;
mod outcome;
mod perft;
mod position;
mod powers;
mod rng;
mod sfen;
mod spec;
mod tables;
mod tomlpath;
mod types;
mod usi;
mod values;
mod variant;

pub use bitset::{Bits, SquareSet, SquareSetIter, WORDS};
pub use compound::{Compound, CompoundTable, CompoundType, Step};
pub use error::{Error, Result};
pub use outcome::{EndReason, GameResult, Outcome};
pub use perft::{perft, perft_divide, MAX_PERFT_DEPTH};
pub use position::{Position, MAX_HAND_KINDS};
pub use rng::SplitMix64;
pub use spec::{
    CaptureSpec, DropSpec, EndSpec, LionSpec, PieceDropSpec, PieceSpec, PromotedSpec,
    PromotionEffectsSpec, PromotionSpec, RepeatSpec, RevertsNearSpec, ShootSpec, SkipOver,
    VariantSpec, WithoutSpec,
};
pub use types::{Color, Kind, Letter, Move, Piece, Square};
pub use values::{
    ConnectDirections, FlipOn, MatchRule, MovesFrom, PerpetualCheck, PromotionMode, PromotionMoves,
    RepetitionFor, StalemateValue,
};
pub use variant::{
    KindInfo, Links, Powers, Variant, MAX_HAND_COUNT, MAX_KINDS, MAX_SIDE, MAX_SQUARES,
};
