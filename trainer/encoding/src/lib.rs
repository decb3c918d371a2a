//! Network input and policy encoding of positions, derived from the variant (DESIGN.md §4).
//!
//! Everything is seen from the side to move: for gote the board is rotated 180 degrees
//! (square `(x, y)` becomes `(files-1-x, ranks-1-y)`, i.e. index `sq` becomes `n-1-sq`) and
//! "own" means the side to move, so a position and its colour-flipped twin encode identically.
//!
//! Input, shape `[C, ranks, files]` (row-major, plane-major), `C = 2 * kinds + 2 * hand_kinds + 3`:
//! - planes `0..kinds`: own pieces, one plane per kind in `variant.kinds` order (promoted
//!   kinds included), 1.0 where such a piece stands;
//! - planes `kinds..2*kinds`: the opponent's pieces, same order;
//! - per hand kind (in `variant.hand_kinds` order) two constant planes: own count, then the
//!   opponent's count, each divided by the number of pieces of that kind in the start position
//!   (board and both hands, promoted forms counted with their base kind; at least 1);
//! - repetition: constant `(repetition_count - 1) / 3`, capped at 1;
//! - in check: constant 0 or 1;
//! - ones: constant 1 (lets convolutions see the board edge through zero padding).
//!
//! Policy, shape `[P, ranks, files]` with `P = 2 * move_types + doubles + hand_kinds`: a board
//! move is `(move type, promotion)` at plane `type * 2 + promote`, at its origin square; a
//! move of several steps (Chu shogi's Lion; the Lion Dog's three steps along a line, first
//! step `(0, 0)`) is at plane `2 * move_types + d`, `d` its (first step, whole offset) type,
//! at its origin square; a drop of the hand kind `h` is at plane `2 * move_types + doubles +
//! h`, at its destination square (where a variant drops pieces promoted side up too, those
//! drops follow at `... + hand_kinds + h`). A variant that promotes by capture (Dai-dai shogi)
//! has no promotion to choose: one plane per move type, `1 * move_types` for `2 * move_types`.
//! Squares are in the
//! mover's orientation. Move types are the distinct offsets `(dx, dy)` any piece of the variant
//! can make on the board, in Betza convention from the mover's side (`dy > 0` forward, `dx > 0`
//! to the mover's right): every leap, and every multiple `1..=range` of each riding direction
//! that fits on the board. For standard shogi this is AlphaZero's 9x9x139 layout.
//!
//! That is the `generic` layout, the default. The `attacks` layout
//! ([`EncodingLayout::Attacks`]) appends, to the same planes and policy, what each side's
//! pieces attack (the squares where they could capture an enemy piece), as dlshogi's input
//! does for standard shogi, for any variant: per side (own, then the opponent's) one plane per
//! kind in `variant.kinds` order, 1.0 on the squares pieces of that kind attack, then three
//! planes, 1.0 where at least 1, 2 and 3 of that side's pieces attack the square. A small
//! network sees at once which pieces hang and which squares are defended, where it would
//! otherwise spend layers tracing rides. Standard shogi may instead use dlshogi's layout
//! ([`EncodingLayout::Dlshogi`], see the `dlshogi` module), which dlshogi and FukauraOu read.
//!
//! The crate also names the inference [`Precision`] and the [`Device`] networks run on:
//! what the libtorch-free side of the trainer (self-play, matches, configs) decides about the
//! network it runs.

mod device;
pub mod dlshogi;
mod encoder;
mod precision;

pub use device::{Device, DeviceError};
pub use encoder::{
    DoubleType, Encoder, EncodingError, EncodingLayout, EncodingSpec, ENCODING_VERSION,
};
pub use precision::{ParsePrecisionError, Precision};
