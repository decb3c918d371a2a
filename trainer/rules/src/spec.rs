//! `VariantSpec`: a variant as written in its TOML file, before compilation.
//!
//! Every key is optional at this level so that a file that `extends` another may list only its
//! differences; [`crate::Variant::compile`] then reports missing or invalid keys by name. Keys
//! that take one of a fixed set of words are enums ([`crate::StalemateValue`], ...): a word
//! outside its set is refused as the file is read, with the key and the allowed words.

use crate::error::{Error, Result};
use crate::values::{
    ConnectDirections, FlipOn, MatchRule, MovesFrom, PerpetualCheck, PromotionMode, PromotionMoves,
    RepetitionFor, StalemateValue,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A variant config as written (see `configs/variants/README.md` for every key).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Variant name (defaults to the file stem).
    pub name: Option<String>,
    /// Name of a variant this one starts from; only differences need to be listed.
    pub extends: Option<String>,
    /// One line for humans.
    pub description: Option<String>,
    /// Number of files (columns), 1 to 36.
    pub files: Option<u8>,
    /// Number of ranks (rows), 1 to 36.
    pub ranks: Option<u8>,
    /// Start position in SFEN (board, side, hands, move number).
    pub start: Option<String>,
    /// Letters of inherited pieces to drop from this variant.
    pub remove_pieces: Option<Vec<String>>,
    /// The pieces; with `extends`, an entry replaces the inherited piece of the same letter.
    pub pieces: Option<Vec<PieceSpec>>,
    /// Promotion rules.
    pub promotion: Option<PromotionSpec>,
    /// Drop rules.
    pub drops: Option<DropSpec>,
    /// How a game ends.
    pub end: Option<EndSpec>,
    /// Match rule for the arena: `single` (default) or `consecutive-wins:N`.
    #[serde(rename = "match")]
    pub match_rule: Option<MatchRule>,
    /// Whose moves a piece makes: `own` (default) or `behind` (Annan shogi: a piece with a
    /// friendly piece directly behind it moves as that piece).
    pub moves_from: Option<MovesFrom>,
    /// Capture rules between pieces marked `lion` (Chu shogi's Lion-trading rules).
    pub lions: Option<LionSpec>,
    /// Captures besides taking a piece by moving onto it (Hasami shogi's custodian capture).
    pub capture: Option<CaptureSpec>,
}

/// Captures other than by displacement, as in Hasami shogi.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// After a move, every orthogonal line of enemy pieces enclosed between the piece that
    /// moved (or was dropped) and another friendly piece is captured (default false).
    pub custodian: Option<bool>,
    /// With `custodian`: an enemy piece in a corner is also captured when the move completes
    /// the occupation of both squares orthogonally next to it (default false).
    pub custodian_corners: Option<bool>,
    /// A piece that ends its move next to an enemy piece with `burn` is captured itself,
    /// unless the move took or burnt every such piece (Tenjiku shogi's Fire Demon, as HaChu
    /// plays it; default false).
    pub passive_burn: Option<bool>,
}

/// Capture rules between Lions (pieces with `lion = true`), as in Chu shogi.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LionSpec {
    /// A Lion may not capture a Lion two squares away when the captured Lion's square is
    /// attacked by its side after the move, unless the move's first step captured a piece of a
    /// kind not in `bridge_exempt` (default false).
    pub protected: Option<bool>,
    /// Letters of the unpromoted kinds whose capture on the first step does not allow taking a
    /// protected Lion (Chu shogi: pawn and go-between).
    pub bridge_exempt: Option<Vec<String>>,
    /// After a Lion is captured by a piece that is not a Lion, the other side may not capture a
    /// Lion with a piece that is not a Lion on its next move (default false).
    pub counter_strike: Option<bool>,
}

/// One piece kind (with its promoted form, if any).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieceSpec {
    /// One ASCII letter, optionally followed by a mark (`'`, `!`, `^`, `~`, `=`, `?`, `@`, `$`,
    /// `%`, `&`, `:` or `;`, for variants with more kinds than letters); uppercase in the file,
    /// lowercase for gote in SFEN.
    pub letter: String,
    /// Name for humans.
    pub name: Option<String>,
    /// Movement in Betza/XBetza notation.
    pub betza: String,
    /// Whether this is the royal piece (checkmating it wins).
    #[serde(default)]
    pub royal: bool,
    /// Whether it is a Lion for the `[lions]` capture rules.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lion: bool,
    /// Promoted form; written `+letter` in SFEN and USI.
    pub promoted: Option<PromotedSpec>,
    /// `optional` (default when a promoted form exists), `forced` (must promote whenever it
    /// may: Hand shogi's knight) or `flip` (turns over to its other side by itself on every
    /// move, or every capture with `promotion.flip_on = "capture"`: Kyoto and Micro shogi).
    pub promotion: Option<PromotionMode>,
    /// Drop restrictions of this piece.
    pub drop: Option<PieceDropSpec>,
    /// Extra moves while the piece stands on its owner's last rank (Whale shogi's dolphin:
    /// `bB`), in Betza.
    pub last_rank_betza: Option<String>,
    /// No move of this piece onto another file already holding this many own unpromoted pieces
    /// of its kind (Whale shogi's dolphins: 2); drops follow `drop.max_per_file`.
    pub move_max_per_file: Option<u8>,
    /// When this piece is captured, the captor gets a piece of this letter in hand instead
    /// (Whale shogi's porpoise becomes a killer whale); the piece itself is never in hand.
    pub captured_as: Option<String>,
    /// A piece that takes this one or its promoted form becomes that promoted form at once,
    /// unless it is royal (then it promotes as on any capture): Maka dai-dai shogi's Deva and
    /// Dark Spirit make their captors Teaching Kings and Buddhist Spirits. Needs `promoted`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contagious: bool,
    /// Promotes into the existing piece with this letter instead of a promoted form of its own
    /// (Tai shogi's pieces that become gold generals), which saves a kind. That piece must not
    /// promote itself, so that a piece promoted into it never promotes again. Only with
    /// promotion by capture and without drops (in hand it would count as the new kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotes_to: Option<String>,
    /// Rank for range captures (Tenjiku shogi's generals): a piece with `range_capture` jumps
    /// only pieces of a lower rank (royal pieces outrank every other); 0 or absent: none.
    pub rank: Option<u8>,
    /// Riders (Betza, e.g. `Q`, `B`) along which the piece also captures by jumping any number
    /// of pieces of either side ranked below it, to take an enemy piece beyond them; it never
    /// moves that way without capturing. Needs `rank`.
    pub range_capture: Option<String>,
    /// The range captures take every piece they jump, of either side, and may also end on an
    /// empty square beyond them (Taikyoku shogi's generals); a move along these lines always
    /// takes what it passes over. Needs `range_capture`, no drops and `end.royal_capture`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sweep: bool,
    /// Rides (Betza, e.g. `vRB`, `sR3`) that jump over the square next to the piece, whatever
    /// stands there, and go on from the second square; a range counts from the piece
    /// (Tenjiku shogi's Heavenly Tetrarchs).
    pub skip_first: Option<String>,
    /// How many squares the first jump of the `skip_first` rides passes over, one number per
    /// jump the piece may make (default `[1]`): `[1, 2, 3]` lands on the second, third or
    /// fourth square whatever stands before it and rides on from there (Taikyoku shogi's
    /// mountain crane); `[2]` only on the third. An item `"3:fB"` adds a jump over that many
    /// squares along other rides only (its free eagle: `[1, 2, "3:fB"]`). A range still
    /// counts from the piece.
    pub skip_over: Option<Vec<SkipOver>>,
    /// An area move of up to this many king steps through empty squares, turning freely, to an
    /// empty square or an enemy piece (the capture ends the move); 0 or absent: none.
    pub area: Option<u8>,
    /// Hook moves (Betza riders, `R` or `B`): a ride along one of these lines that may turn 90
    /// degrees once, at an empty square, and ride on (Dai-dai shogi's hook mover `R`, long-nosed
    /// goblin `B`); a capture ends it.
    pub hook: Option<String>,
    /// After each of its moves, every enemy piece on the eight squares around where it ends is
    /// captured too (Tenjiku shogi's Fire Demon).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub burn: bool,
    /// Leaps to any square of the board: any empty square, and any enemy piece that is not
    /// protected (Maka dai-dai shogi's Emperor): a piece is protected when, with this piece on
    /// its square, an enemy piece attacks that square, or the enemy has such a leaper of its
    /// own and this piece would stand unprotected there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leap_anywhere: bool,
    /// Lion power along one line (Betza rides with a range of 2 or 3, e.g. `Q3`: the Lion
    /// Dog): up to that many steps along one of these lines, taking enemy pieces on the squares
    /// it stops on and ending on any of them, or back on its own square; never past its own
    /// square. The plain jumps to the squares of the line must be in `betza` (`KADGH`).
    pub lion_line: Option<String>,
    /// Shooting (Ko shogi's bows and guns): the piece moves, then takes enemy pieces at a
    /// distance without moving again.
    pub shoot: Option<ShootSpec>,
    /// Several moves in one turn (Ko shogi's sumo wrestler: `K` twice): each may capture.
    pub repeat: Option<RepeatSpec>,
    /// Letters (`+L` for a promoted form) of kinds this piece never captures, by moving onto
    /// them, on the way or by shooting (Ko shogi's bows and the shield).
    pub spares: Option<Vec<String>>,
    /// Letters of the only kinds this piece captures by moving onto them (its shots may take
    /// others): Ko shogi's Taoist priest takes only the priest and the monk that way.
    pub displaces_only: Option<Vec<String>>,
    /// Letters (`+L` for a promoted form) of the kinds whose capture promotes this piece at
    /// once, anywhere on the board (Ko shogi: taking the general promotes the captor).
    pub promotes_capturing: Option<Vec<String>>,
    /// Moves it loses while its side has no piece of a kind (Ko shogi: the pawns may not step
    /// forward once their drum is lost).
    pub without: Option<WithoutSpec>,
    /// The letter of a kind without which (promoted or not) its side cannot promote this
    /// piece, and its promoted ones turn back at once (Ko shogi's drum and banner need the
    /// Taoist priest).
    pub promotes_with: Option<String>,
    /// What its promotion does to other pieces (Ko shogi's clerk: its side's guards promote,
    /// the enemy's poison flames die).
    pub promotion_effects: Option<PromotionEffectsSpec>,
    /// It can be shot only from at least this many squares away.
    pub shot_from: Option<u8>,
}

/// Moves a piece loses while its side has no piece of a kind (`without`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WithoutSpec {
    /// The kind's letter; its promoted form counts too.
    pub letter: String,
    /// The moves lost (Betza, a part of the piece's `betza`).
    pub loses: String,
}

/// What a piece's promotion does to other pieces (`promotion_effects`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromotionEffectsSpec {
    /// Letters of its side's kinds that promote with it.
    #[serde(default)]
    pub promotes: Vec<String>,
    /// Letters (`+L`: a promoted form) of the opponent's kinds that are captured then.
    #[serde(default)]
    pub kills: Vec<String>,
}

/// A promoted piece that turns back near another (`reverts_near`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RevertsNearSpec {
    /// The letter (`+L`: a promoted form) of the kind, of either side, that makes it turn back.
    pub letter: String,
    /// How near: on one of the eight lines through it, at most this many squares away.
    pub within: u8,
}

/// One jump of the `skip_first` rides (`skip_over`): over this many squares along all of them,
/// or (`"3:fB"`) along the rides written after the colon.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum SkipOver {
    /// Over this many squares along every `skip_first` ride.
    All(u8),
    /// `"n:rides"`: over n squares along these rides (Betza, as in `skip_first`).
    Along(String),
}

/// The promoted side of a piece.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromotedSpec {
    /// Name for humans.
    pub name: Option<String>,
    /// Movement in Betza/XBetza notation.
    pub betza: String,
    /// Whether the promoted form is royal too (Sho shogi's crown prince): a side then has
    /// several royal pieces, and only its last one must not be left in check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub royal: bool,
    /// Whether the promoted form is a Lion for the `[lions]` capture rules (Chu shogi's
    /// promoted kirin).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lion: bool,
    /// Rank for range captures (Tenjiku shogi's generals): a piece with `range_capture` jumps
    /// only pieces of a lower rank (royal pieces outrank every other); 0 or absent: none.
    pub rank: Option<u8>,
    /// Riders (Betza, e.g. `Q`, `B`) along which the piece also captures by jumping any number
    /// of pieces of either side ranked below it, to take an enemy piece beyond them; it never
    /// moves that way without capturing. Needs `rank`.
    pub range_capture: Option<String>,
    /// The range captures take every piece they jump, of either side, and may also end on an
    /// empty square beyond them (Taikyoku shogi's generals); a move along these lines always
    /// takes what it passes over. Needs `range_capture`, no drops and `end.royal_capture`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sweep: bool,
    /// Rides (Betza, e.g. `vRB`, `sR3`) that jump over the square next to the piece, whatever
    /// stands there, and go on from the second square; a range counts from the piece
    /// (Tenjiku shogi's Heavenly Tetrarchs).
    pub skip_first: Option<String>,
    /// How many squares the first jump of the `skip_first` rides passes over, one number per
    /// jump the piece may make (default `[1]`): `[1, 2, 3]` lands on the second, third or
    /// fourth square whatever stands before it and rides on from there (Taikyoku shogi's
    /// mountain crane); `[2]` only on the third. An item `"3:fB"` adds a jump over that many
    /// squares along other rides only (its free eagle: `[1, 2, "3:fB"]`). A range still
    /// counts from the piece.
    pub skip_over: Option<Vec<SkipOver>>,
    /// An area move of up to this many king steps through empty squares, turning freely, to an
    /// empty square or an enemy piece (the capture ends the move); 0 or absent: none.
    pub area: Option<u8>,
    /// Hook moves (Betza riders, `R` or `B`): a ride along one of these lines that may turn 90
    /// degrees once, at an empty square, and ride on (Dai-dai shogi's hook mover `R`, long-nosed
    /// goblin `B`); a capture ends it.
    pub hook: Option<String>,
    /// After each of its moves, every enemy piece on the eight squares around where it ends is
    /// captured too (Tenjiku shogi's Fire Demon).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub burn: bool,
    /// Leaps to any square of the board: any empty square, and any enemy piece that is not
    /// protected (Maka dai-dai shogi's Emperor): a piece is protected when, with this piece on
    /// its square, an enemy piece attacks that square, or the enemy has such a leaper of its
    /// own and this piece would stand unprotected there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leap_anywhere: bool,
    /// Lion power along one line (Betza rides with a range of 2 or 3, e.g. `Q3`: the Lion
    /// Dog): up to that many steps along one of these lines, taking enemy pieces on the squares
    /// it stops on and ending on any of them, or back on its own square; never past its own
    /// square. The plain jumps to the squares of the line must be in `betza` (`KADGH`).
    pub lion_line: Option<String>,
    /// Shooting (Ko shogi's bows and guns): the piece moves, then takes enemy pieces at a
    /// distance without moving again.
    pub shoot: Option<ShootSpec>,
    /// Several moves in one turn (Ko shogi's sumo wrestler: `K` twice): each may capture.
    pub repeat: Option<RepeatSpec>,
    /// Letters (`+L` for a promoted form) of kinds this piece never captures, by moving onto
    /// them, on the way or by shooting (Ko shogi's bows and the shield).
    pub spares: Option<Vec<String>>,
    /// Letters of the only kinds this piece captures by moving onto them (its shots may take
    /// others): Ko shogi's Taoist priest takes only the priest and the monk that way.
    pub displaces_only: Option<Vec<String>>,
    /// The promoted piece turns back to its unpromoted side whenever a piece of this kind, of
    /// either side, stands near it (Ko shogi's five-li fog near the immaculate light).
    pub reverts_near: Option<RevertsNearSpec>,
    /// It can be shot only from at least this many squares away (Ko shogi's five-li fog: 6).
    pub shot_from: Option<u8>,
}

/// A shooting power (`shoot`): the piece makes one of its `betza` moves, then may take up to
/// `targets` enemy pieces along the eight lines from where it landed, at most `range` squares
/// away, without moving; `times` such moves in one turn.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShootSpec {
    /// The moves it makes before shooting (Betza leaps and rides; `m` for moves to empty
    /// squares only, as the bows).
    pub betza: String,
    /// How far it shoots along the eight lines from where it lands, in squares.
    pub range: u8,
    /// Shots pass over pieces of either side (Ko shogi's cannon); otherwise every square
    /// between the shooter and its target must be empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over: bool,
    /// Different enemy pieces it may take after one move (default 1; the Frankish cannon 2).
    pub targets: Option<u8>,
    /// How many moves, each followed by its shots, it makes in one turn (default 1; the
    /// five-li fog 2). It may stop after any of them.
    pub times: Option<u8>,
}

/// Several moves in one turn (`repeat`): up to `times` of the `betza` moves one after the
/// other, each capturing what it lands on.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// The moves it repeats (Betza leaps and rides).
    pub betza: String,
    /// How many of them it may make in one turn (2 to 5).
    pub times: u8,
    /// The moves keep to the line of the first (the Wikipedia notation's `dh`): each later
    /// move goes the first one's main direction (a knight's long leg), or is the reverse of
    /// the one before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub line: bool,
}

/// Drop restrictions of one piece kind.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieceDropSpec {
    /// Whether the piece may be dropped at all (default true).
    pub allowed: Option<bool>,
    /// A second unpromoted piece of this kind may not be dropped on a file (nifu); the same as
    /// `max_per_file = 1`.
    pub nifu: Option<bool>,
    /// No drop on a file already holding this many own unpromoted pieces of this kind (Tori
    /// shogi's swallows: 2); at least 1.
    pub max_per_file: Option<u8>,
    /// A drop of this piece may not give immediate checkmate (uchifuzume).
    pub no_mate: Option<bool>,
    /// A drop of this piece must give check (Hand shogi's hasty and onager).
    pub must_check: Option<bool>,
    /// Ranks where it may not be dropped, counted from the owner's far edge (1 = last rank).
    pub forbidden_ranks: Option<Vec<u8>>,
    /// Whether it may be dropped inside the promotion zone (default true).
    pub in_zone: Option<bool>,
}

/// Promotion rules.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromotionSpec {
    /// Depth of the promotion zone in ranks (the far ranks of each side).
    pub zone_depth: Option<u8>,
    /// A move that would leave an unpromoted piece with no further move (a pawn or lance on the
    /// last rank, a knight on the last two) must promote, and is illegal if it cannot
    /// (default true).
    pub forbid_immobile: Option<bool>,
    /// When pieces with `promotion = "flip"` turn over: `move` (every move, default) or
    /// `capture` (every capture).
    pub flip_on: Option<FlipOn>,
    /// Which moves may promote: `touching` (default: any move starting or ending in the zone)
    /// or `entering` (a move from outside into the zone, or a capture by a piece starting in
    /// it: Chu shogi).
    pub moves: Option<PromotionMoves>,
    /// A move after which the unpromoted piece could never move again may promote even where
    /// the `moves` rule would not allow it (Chu shogi's pawn reaching the last rank; default
    /// false).
    pub immobile_may_promote: Option<bool>,
}

/// Drop rules.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DropSpec {
    /// Whether captured pieces go to the capturer's hand and may be dropped (default true).
    pub enabled: Option<bool>,
    /// No piece may be dropped where it would have no further move (default true).
    pub forbid_immobile: Option<bool>,
    /// A piece with a promoted form may also be dropped promoted side up (Kyoto and Micro
    /// shogi; default false).
    pub promoted: Option<bool>,
    /// Royal pieces may be held in hand and dropped (Unashogi starts with every piece in hand;
    /// default false).
    pub royal: Option<bool>,
    /// While a side's royal piece is in hand, that side may not capture or promote, and its
    /// pieces give no check (Unashogi; default false).
    pub unarmed_until_royal: Option<bool>,
}

/// Game-end rules.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndSpec {
    /// Result for the side with no legal move and not in check: `loss`, `draw` or `win`.
    pub stalemate: Option<StalemateValue>,
    /// The same position (board, hands, side) this many times ends the game; 0 disables.
    pub repetition: Option<u32>,
    /// Result of a repetition for the side to move when it occurs: `draw` (default), `win` (the
    /// player whose move completed it loses: Tori shogi as Fairy-Stockfish plays it) or `loss`.
    pub repetition_result: Option<StalemateValue>,
    /// Whose result `repetition_result` is: `side-to-move` (default) or `sente`, whoever is to
    /// move (minishogi: a repetition loses for sente).
    pub repetition_result_for: Option<RepetitionFor>,
    /// In a repetition, the side that checked with every move: `loss` (shogi) or `draw`.
    pub perpetual_check: Option<PerpetualCheck>,
    /// Plies after which the game is a draw; 0 = no limit.
    pub max_plies: Option<u32>,
    /// A side left with nothing but its royal pieces loses (default false; see
    /// `configs/variants/README.md`).
    pub bare_king: Option<bool>,
    /// Unpromoted kinds (letters) that do not help to bare the opponent: a king with only such
    /// pieces left does not win by the bare-king rule (Lishogi's Chu shogi: pawn, go-between).
    pub bare_king_ignores: Option<Vec<String>>,
    /// A side with at most this many pieces (board and hand) loses; 0 (default) disables
    /// (Hasami shogi: 1, "capturing all but one").
    pub bare_pieces: Option<u32>,
    /// A side with this many own pieces in an unbroken line that the opponent cannot break
    /// by one capturing move wins; 0 (default) disables (Dai hasami shogi: 5).
    pub connect: Option<u8>,
    /// Which lines count for `connect`: `orthogonal` (default) or `all` (diagonals too).
    pub connect_directions: Option<ConnectDirections>,
    /// Pieces on their owner's first this many ranks do not count for `connect` (default 0).
    pub connect_outside_ranks: Option<u8>,
    /// Royal pieces may be left attacked and moved into attack; a side loses when its last
    /// royal piece has been captured (the historical rule of the large variants; default
    /// false: a move leaving the last royal piece attacked is illegal).
    pub royal_capture: Option<bool>,
    /// With `royal_capture`: letters of kinds that stand in for the royal pieces together. A
    /// side that has lost its royal pieces plays on while it still has a piece (promoted or
    /// not) of every one of these kinds (Ko shogi: the middle troop and the banner).
    pub royal_reserve: Option<Vec<String>>,
}

/// The built-in variant files, embedded so the binary works from any directory.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "shogi",
        include_str!("../../../configs/variants/shogi.toml"),
    ),
    (
        "minishogi",
        include_str!("../../../configs/variants/minishogi.toml"),
    ),
    (
        "cannon-shosu",
        include_str!("../../../configs/variants/cannon-shosu.toml"),
    ),
    ("hand", include_str!("../../../configs/variants/hand.toml")),
    (
        "judkins",
        include_str!("../../../configs/variants/judkins.toml"),
    ),
    ("yari", include_str!("../../../configs/variants/yari.toml")),
    ("tori", include_str!("../../../configs/variants/tori.toml")),
    (
        "kyoto",
        include_str!("../../../configs/variants/kyoto.toml"),
    ),
    (
        "micro",
        include_str!("../../../configs/variants/micro.toml"),
    ),
    ("sho", include_str!("../../../configs/variants/sho.toml")),
    (
        "cannon",
        include_str!("../../../configs/variants/cannon.toml"),
    ),
    (
        "annan",
        include_str!("../../../configs/variants/annan.toml"),
    ),
    (
        "unashogi",
        include_str!("../../../configs/variants/unashogi.toml"),
    ),
    ("chu", include_str!("../../../configs/variants/chu.toml")),
    ("wa", include_str!("../../../configs/variants/wa.toml")),
    (
        "heian",
        include_str!("../../../configs/variants/heian.toml"),
    ),
    (
        "whale",
        include_str!("../../../configs/variants/whale.toml"),
    ),
    (
        "heian-dai",
        include_str!("../../../configs/variants/heian-dai.toml"),
    ),
    ("dai", include_str!("../../../configs/variants/dai.toml")),
    (
        "hasami",
        include_str!("../../../configs/variants/hasami.toml"),
    ),
    (
        "dai-hasami",
        include_str!("../../../configs/variants/dai-hasami.toml"),
    ),
    (
        "tenjiku",
        include_str!("../../../configs/variants/tenjiku.toml"),
    ),
    (
        "dai-dai",
        include_str!("../../../configs/variants/dai-dai.toml"),
    ),
    (
        "maka-dai-dai",
        include_str!("../../../configs/variants/maka-dai-dai.toml"),
    ),
    ("tai", include_str!("../../../configs/variants/tai.toml")),
    (
        "taikyoku",
        include_str!("../../../configs/variants/taikyoku.toml"),
    ),
    ("ko", include_str!("../../../configs/variants/ko.toml")),
];

/// Where a variant's text came from (for error messages and for resolving `extends`).
#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    Builtin(String),
}

impl Source {
    fn label(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Builtin(n) => format!("<built-in {n}>"),
        }
    }
}

impl VariantSpec {
    /// Parses one TOML text (no `extends` resolution). `file` names it in errors, with the
    /// key (`end.stalemate`) where the error can be placed on one.
    pub fn from_toml(text: &str, file: &str) -> Result<VariantSpec> {
        toml::from_str(text).map_err(|e| toml_error(text, file, &e))
    }

    /// Loads a variant file, resolving `extends` against sibling files, then built-ins.
    pub fn load(path: &Path) -> Result<VariantSpec> {
        let mut spec = load_chain(Source::File(path.to_path_buf()), &mut Vec::new())?;
        if spec.name.is_none() {
            spec.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(spec)
    }

    /// A built-in variant by name (`shogi`, `minishogi`, `cannon-shosu`, `hand`, `judkins`,
    /// `yari`, `tori`).
    pub fn builtin(name: &str) -> Result<VariantSpec> {
        let mut spec = load_chain(Source::Builtin(name.to_string()), &mut Vec::new())?;
        if spec.name.is_none() {
            spec.name = Some(name.to_string());
        }
        Ok(spec)
    }

    /// Names of the built-in variants.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }
}

/// A TOML error as a config error: the key path it points at (else its byte range), and
/// toml's message (for a word outside its set, the allowed words).
fn toml_error(text: &str, file: &str, e: &toml::de::Error) -> Error {
    let msg = e.message().to_string();
    let key = match e.span() {
        Some(span) => crate::tomlpath::key_path(text, span.clone())
            .unwrap_or_else(|| format!("byte {}..{}", span.start, span.end)),
        None => "-".to_string(),
    };
    Error::config(file, key, msg)
}

fn read_source(src: &Source) -> Result<String> {
    match src {
        Source::File(p) => std::fs::read_to_string(p)
            .map_err(|e| Error::config(&p.display().to_string(), "-", format!("cannot read: {e}"))),
        Source::Builtin(n) => BUILTIN
            .iter()
            .find(|(name, _)| name == n)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| {
                Error::config(
                    n,
                    "-",
                    format!(
                        "no such built-in variant (built-ins: {})",
                        VariantSpec::builtin_names().join(", ")
                    ),
                )
            }),
    }
}

fn load_chain(src: Source, seen: &mut Vec<String>) -> Result<VariantSpec> {
    let label = src.label();
    if seen.contains(&label) {
        return Err(Error::config(
            &label,
            "extends",
            format!("cycle: {}", seen.join(" -> ")),
        ));
    }
    seen.push(label.clone());
    let text = read_source(&src)?;
    let spec = VariantSpec::from_toml(&text, &label)?;
    let Some(parent_name) = spec.extends.clone() else {
        return Ok(spec);
    };
    let parent_src = match &src {
        Source::File(p) => {
            let sib = p
                .parent()
                .unwrap_or(Path::new("."))
                .join(format!("{parent_name}.toml"));
            if sib.exists() {
                Source::File(sib)
            } else {
                Source::Builtin(parent_name.clone())
            }
        }
        Source::Builtin(_) => Source::Builtin(parent_name.clone()),
    };
    let parent = load_chain(parent_src, seen).map_err(|e| match e {
        Error::Config { file, key, reason } if file == parent_name => Error::config(
            &label,
            "extends",
            format!("cannot load parent {parent_name:?}: {key}: {reason}"),
        ),
        e => e,
    })?;
    merge(parent, spec, &label)
}

/// Child keys override parent keys; tables merge key by key; pieces merge by letter.
fn merge(parent: VariantSpec, child: VariantSpec, file: &str) -> Result<VariantSpec> {
    let pieces = merge_pieces(
        parent.pieces.unwrap_or_default(),
        child.remove_pieces.as_deref().unwrap_or_default(),
        child.pieces.unwrap_or_default(),
        file,
    )?;
    Ok(VariantSpec {
        name: child.name,
        extends: None,
        description: child.description.or(parent.description),
        files: child.files.or(parent.files),
        ranks: child.ranks.or(parent.ranks),
        start: child.start.or(parent.start),
        remove_pieces: None,
        pieces: Some(pieces),
        promotion: Some(child.promotion.unwrap_or_default().over(parent.promotion)),
        drops: Some(child.drops.unwrap_or_default().over(parent.drops)),
        end: Some(child.end.unwrap_or_default().over(parent.end)),
        match_rule: child.match_rule.or(parent.match_rule),
        moves_from: child.moves_from.or(parent.moves_from),
        lions: match (child.lions, parent.lions) {
            (Some(c), p @ Some(_)) => Some(c.over(p)),
            (c, p) => c.or(p),
        },
        capture: match (child.capture, parent.capture) {
            (Some(c), p @ Some(_)) => Some(c.over(p)),
            (c, p) => c.or(p),
        },
    })
}

/// The parent's pieces less `remove`, with the child's replacing those of the same letter and
/// the others added.
fn merge_pieces(
    mut pieces: Vec<PieceSpec>,
    remove: &[String],
    child_pieces: Vec<PieceSpec>,
    file: &str,
) -> Result<Vec<PieceSpec>> {
    for (i, letter) in remove.iter().enumerate() {
        let before = pieces.len();
        pieces.retain(|p| !p.letter.eq_ignore_ascii_case(letter));
        if pieces.len() == before {
            return Err(Error::config(
                file,
                format!("remove_pieces[{i}]"),
                format!("the parent variant has no piece {letter:?}"),
            ));
        }
    }
    for (i, p) in child_pieces.iter().enumerate() {
        if child_pieces[..i]
            .iter()
            .any(|q| q.letter.eq_ignore_ascii_case(&p.letter))
        {
            return Err(Error::config(
                file,
                format!("pieces[{i}].letter"),
                format!("letter {:?} used twice", p.letter),
            ));
        }
    }
    for p in child_pieces {
        match pieces
            .iter_mut()
            .find(|q| q.letter.eq_ignore_ascii_case(&p.letter))
        {
            Some(q) => *q = p,
            None => pieces.push(p),
        }
    }
    Ok(pieces)
}

impl PromotionSpec {
    /// These keys, with the parent's where this table has none.
    fn over(self, parent: Option<PromotionSpec>) -> PromotionSpec {
        let p = parent.unwrap_or_default();
        PromotionSpec {
            zone_depth: self.zone_depth.or(p.zone_depth),
            forbid_immobile: self.forbid_immobile.or(p.forbid_immobile),
            flip_on: self.flip_on.or(p.flip_on),
            moves: self.moves.or(p.moves),
            immobile_may_promote: self.immobile_may_promote.or(p.immobile_may_promote),
        }
    }
}

impl DropSpec {
    /// These keys, with the parent's where this table has none.
    fn over(self, parent: Option<DropSpec>) -> DropSpec {
        let p = parent.unwrap_or_default();
        DropSpec {
            enabled: self.enabled.or(p.enabled),
            forbid_immobile: self.forbid_immobile.or(p.forbid_immobile),
            promoted: self.promoted.or(p.promoted),
            royal: self.royal.or(p.royal),
            unarmed_until_royal: self.unarmed_until_royal.or(p.unarmed_until_royal),
        }
    }
}

impl EndSpec {
    /// These keys, with the parent's where this table has none.
    fn over(self, parent: Option<EndSpec>) -> EndSpec {
        let p = parent.unwrap_or_default();
        EndSpec {
            stalemate: self.stalemate.or(p.stalemate),
            repetition: self.repetition.or(p.repetition),
            repetition_result: self.repetition_result.or(p.repetition_result),
            repetition_result_for: self.repetition_result_for.or(p.repetition_result_for),
            perpetual_check: self.perpetual_check.or(p.perpetual_check),
            max_plies: self.max_plies.or(p.max_plies),
            bare_king: self.bare_king.or(p.bare_king),
            bare_king_ignores: self.bare_king_ignores.or(p.bare_king_ignores),
            bare_pieces: self.bare_pieces.or(p.bare_pieces),
            connect: self.connect.or(p.connect),
            connect_directions: self.connect_directions.or(p.connect_directions),
            connect_outside_ranks: self.connect_outside_ranks.or(p.connect_outside_ranks),
            royal_capture: self.royal_capture.or(p.royal_capture),
            royal_reserve: self.royal_reserve.or(p.royal_reserve),
        }
    }
}

impl LionSpec {
    /// These keys, with the parent's where this table has none.
    fn over(self, parent: Option<LionSpec>) -> LionSpec {
        let p = parent.unwrap_or_default();
        LionSpec {
            protected: self.protected.or(p.protected),
            bridge_exempt: self.bridge_exempt.or(p.bridge_exempt),
            counter_strike: self.counter_strike.or(p.counter_strike),
        }
    }
}

impl CaptureSpec {
    /// These keys, with the parent's where this table has none.
    fn over(self, parent: Option<CaptureSpec>) -> CaptureSpec {
        let p = parent.unwrap_or_default();
        CaptureSpec {
            custodian: self.custodian.or(p.custodian),
            custodian_corners: self.custodian_corners.or(p.custodian_corners),
            passive_burn: self.passive_burn.or(p.passive_burn),
        }
    }
}
