//! The input features of Fairy-Stockfish's networks (`HalfKAv2Variants`) for one variant.
//!
//! Fairy-Stockfish numbers the features of a variant from its own definition of it
//! (`Variant::conclude` in its src/variant.cpp, `HalfKAv2Variants` in
//! src/nnue/features/half_ka_v2_variants.cpp):
//!
//! - its piece types, in the order of its `PieceType` enum, the king type last; own and enemy
//!   pieces of a type are two planes of one square each, except that both kings share one;
//!   a promoted piece is the type it promotes to (a tokin is a gold);
//! - with drops, `2 * files` hand slots per type and colour (the king's excepted): the `i`-th
//!   piece of a type in hand is slot `i`;
//! - all of that once per square of the perspective's own king (`HalfKA`);
//! - squares numbered from the bottom left as sente sees the board, rank by rank; for gote's
//!   perspective the ranks are mirrored (not rotated: files stay where they are).
//!
//! The layer stack (and PSQT bucket) of a position is `(pieces on board - 1) * 8 / pieces at
//! the start`, at most 7.
//!
//! [`FsfRules`] is what of a Fairy-Stockfish variant decides this: for its built-in shogi
//! variants from a table of their definitions, for the others read from the `variants.ini`
//! section our exporter writes (`rules::fsf::to_fsf_ini`). [`FeatureLayout`] maps our variant's
//! kinds onto those piece types and computes the indices.

use super::error::NnueError;
use rules::{Color, Kind, Position, Variant};

/// Fairy-Stockfish's `KING` piece type (`PIECE_TYPE_NB - 1`).
pub const KING: u8 = 63;
/// Fairy-Stockfish's `COMMONER` (a non-royal king, Sho shogi's king).
pub const COMMONER: u8 = 35;
/// Its first custom piece type (`customPiece1`).
pub const CUSTOM_PIECE_1: u8 = 37;
/// Its last custom piece type open to `variants.ini` (`CUSTOM_PIECES_ROYAL` is reserved).
const CUSTOM_PIECE_LAST: u8 = 61;

/// Fairy-Stockfish's piece types by their `variants.ini` name (src/piece.cpp) and their value
/// in its `PieceType` enum (src/types.h); `customPieceN` is `CUSTOM_PIECE_1 + N - 1`.
const PIECE_TYPES: &[(&str, u8)] = &[
    ("pawn", 1),
    ("knight", 2),
    ("bishop", 3),
    ("rook", 4),
    ("queen", 5),
    ("fers", 6),
    ("alfil", 7),
    ("fersAlfil", 8),
    ("silver", 9),
    ("aiwok", 10),
    ("bers", 11),
    ("archbishop", 12),
    ("chancellor", 13),
    ("amazon", 14),
    ("knibis", 15),
    ("biskni", 16),
    ("kniroo", 17),
    ("rookni", 18),
    ("shogiPawn", 19),
    ("lance", 20),
    ("shogiKnight", 21),
    ("gold", 22),
    ("dragonHorse", 23),
    ("clobber", 24),
    ("breakthrough", 25),
    ("immobile", 26),
    ("cannon", 27),
    ("janggiCannon", 28),
    ("soldier", 29),
    ("horse", 30),
    ("elephant", 31),
    ("janggiElephant", 32),
    ("banner", 33),
    ("wazir", 34),
    ("commoner", 35),
    ("centaur", 36),
    ("king", 63),
];

/// The `PieceType` value of a `variants.ini` piece name (`gold`, `customPiece3`).
pub fn piece_type_named(name: &str) -> Option<u8> {
    if let Some(digits) = name.strip_prefix("customPiece") {
        if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u8 = digits.parse().ok()?;
        let t = CUSTOM_PIECE_1.checked_add(n.checked_sub(1)?)?;
        return (t <= CUSTOM_PIECE_LAST).then_some(t);
    }
    PIECE_TYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, t)| t)
}

// Piece types of the built-in shogi variants.
const SHOGI_PAWN: u8 = 19;
const LANCE: u8 = 20;
const SHOGI_KNIGHT: u8 = 21;
const GOLD: u8 = 22;
const DRAGON_HORSE: u8 = 23;
const BISHOP: u8 = 3;
const ROOK: u8 = 4;
const SILVER: u8 = 9;
const BERS: u8 = 11;
const fn custom(n: u8) -> u8 {
    CUSTOM_PIECE_1 + n - 1
}

/// The rules of a Fairy-Stockfish variant that decide its network's features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsfRules {
    /// Its `UCI_Variant` name; Fairy-Stockfish uses a network only if the file's name starts
    /// with it.
    pub name: String,
    /// The `variants.ini` text that defines it (load with `VariantPath`); `None` for a
    /// built-in variant.
    pub ini: Option<String>,
    /// Board files and ranks.
    pub files: u8,
    /// Board ranks.
    pub ranks: u8,
    /// Its piece types (`PieceType` values) with their letters (lower case), in any order.
    pub types: Vec<(u8, char)>,
    /// `promotedPieceType`: (type, the type it promotes to).
    pub promoted: Vec<(u8, u8)>,
    /// Whether pieces are dropped (`pieceDrops`: its FEN then has hands in brackets).
    pub drops: bool,
    /// Whether hands are features (`nnueUsePockets`: drops of captured pieces).
    pub pockets: bool,
    /// The board of its start position (FEN, `+` before promoted pieces).
    pub start_board: String,
    /// Whether a commoner is its royal piece by extinction (Sho shogi), which makes the
    /// commoner the king of the features unless a promotion creates one.
    pub royal_commoner: bool,
}

/// Fairy-Stockfish's built-in name for our variant `name`, if it has one (the one table is
/// the rules crate's).
pub use rules::fsf::builtin_counterpart;

fn builtin_rules(
    name: &str,
    files: u8,
    ranks: u8,
    types: &[(u8, char)],
    promoted: &[(u8, u8)],
    start_board: &str,
) -> FsfRules {
    FsfRules {
        name: name.to_string(),
        ini: None,
        files,
        ranks,
        types: types.to_vec(),
        promoted: promoted.to_vec(),
        drops: true,
        pockets: true,
        start_board: start_board.to_string(),
        royal_commoner: false,
    }
}

impl FsfRules {
    /// A built-in shogi variant of Fairy-Stockfish by its name, as src/variant.cpp defines it
    /// (unchanged from the 2024 WebAssembly release to its 2026 sources).
    pub fn builtin(name: &str) -> Option<FsfRules> {
        // minishogi_variant_base(): the pieces of minishogi, judkins, kyoto, micro and shogi.
        let mini: &[(u8, char)] = &[
            (SHOGI_PAWN, 'p'),
            (SILVER, 's'),
            (GOLD, 'g'),
            (BISHOP, 'b'),
            (DRAGON_HORSE, 'h'),
            (ROOK, 'r'),
            (BERS, 'd'),
            (KING, 'k'),
        ];
        let mini_promoted: &[(u8, u8)] = &[
            (SHOGI_PAWN, GOLD),
            (SILVER, GOLD),
            (BISHOP, DRAGON_HORSE),
            (ROOK, BERS),
        ];
        let with = |extra: &[(u8, char)]| -> Vec<(u8, char)> {
            mini.iter().chain(extra).copied().collect()
        };
        let lance_knight = with(&[(LANCE, 'l'), (SHOGI_KNIGHT, 'n')]);
        Some(match name {
            "minishogi" | "mini" => {
                builtin_rules(name, 5, 5, mini, mini_promoted, "rbsgk/4p/5/P4/KGSBR")
            }
            "kyotoshogi" => builtin_rules(
                name,
                5,
                5,
                &lance_knight,
                &[
                    (LANCE, GOLD),
                    (SILVER, BISHOP),
                    (SHOGI_KNIGHT, GOLD),
                    (SHOGI_PAWN, ROOK),
                ],
                "p+nks+l/5/5/5/+LSK+NP",
            ),
            "micro" => builtin_rules(
                name,
                4,
                5,
                &lance_knight,
                &[
                    (LANCE, SILVER),
                    (BISHOP, GOLD),
                    (ROOK, GOLD),
                    (SHOGI_PAWN, SHOGI_KNIGHT),
                ],
                "kb+r+l/p3/4/3P/+L+RBK",
            ),
            "judkins" => builtin_rules(
                name,
                6,
                6,
                &with(&[(SHOGI_KNIGHT, 'n')]),
                &[mini_promoted, &[(SHOGI_KNIGHT, GOLD)]].concat(),
                "rbnsgk/5p/6/6/P5/KGSNBR",
            ),
            "shogi" | "shoshogi" => {
                let promoted = [mini_promoted, &[(LANCE, GOLD), (SHOGI_KNIGHT, GOLD)]].concat();
                if name == "shogi" {
                    builtin_rules(
                        name,
                        9,
                        9,
                        &lance_knight,
                        &promoted,
                        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL",
                    )
                } else {
                    // No drops; the king is a commoner, the drunk elephant promotes to one.
                    let mut types = lance_knight.clone();
                    types.retain(|&(t, _)| t != KING);
                    types.extend([(COMMONER, 'k'), (custom(1), 'e')]);
                    let mut promoted = promoted;
                    promoted.push((custom(1), COMMONER));
                    FsfRules {
                        drops: false,
                        pockets: false,
                        royal_commoner: true,
                        ..builtin_rules(
                            name,
                            9,
                            9,
                            &types,
                            &promoted,
                            "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL",
                        )
                    }
                }
            }
            "torishogi" => builtin_rules(
                name,
                7,
                7,
                &[
                    (SHOGI_PAWN, 's'),
                    (KING, 'k'),
                    (custom(1), 'f'),
                    (custom(2), 'c'),
                    (custom(3), 'l'),
                    (custom(4), 'r'),
                    (custom(5), 'p'),
                    (custom(6), 'g'),
                    (custom(7), 'e'),
                ],
                &[(SHOGI_PAWN, custom(6)), (custom(1), custom(7))],
                "rpckcpl/3f3/sssssss/2s1S2/SSSSSSS/3F3/LPCKCPR",
            ),
            "yarishogi" => builtin_rules(
                name,
                7,
                9,
                &[
                    (KING, 'k'),
                    (SHOGI_PAWN, 'p'),
                    (ROOK, 'l'),
                    (custom(1), 'n'),
                    (custom(2), 'b'),
                    (custom(3), 'r'),
                    (custom(4), 'g'),
                    (custom(5), 's'),
                ],
                &[
                    (SHOGI_PAWN, custom(5)),
                    (custom(1), custom(4)),
                    (custom(2), custom(4)),
                    (custom(3), ROOK),
                ],
                "rnnkbbr/7/ppppppp/7/7/7/PPPPPPP/7/RBBKNNR",
            ),
            _ => return None,
        })
    }

    /// The Fairy-Stockfish variant a network for our variant `v` is for: `fsf_name` when
    /// given (one of its built-in shogi variants, or the section our exporter writes for
    /// `v`), else `v`'s built-in counterpart if it has one, else our export of `v`. A variant
    /// Fairy-Stockfish cannot play is refused with every rule that stands in the way.
    pub fn for_variant(v: &Variant, fsf_name: Option<&str>) -> Result<FsfRules, NnueError> {
        let export_name = rules::fsf::fsf_section_name(&v.name);
        let name = match fsf_name {
            Some(n) => n.to_string(),
            None => builtin_counterpart(&v.name)
                .map(str::to_string)
                .unwrap_or_else(|| export_name.clone()),
        };
        if let Some(r) = FsfRules::builtin(&name) {
            return Ok(r);
        }
        if name != export_name {
            let known: Vec<&str> = rules::fsf::builtin_counterpart_names().collect();
            return Err(NnueError::Unplayable {
                variant: v.name.clone(),
                reason: format!(
                    "{name:?} is neither a built-in Fairy-Stockfish variant we know ({}) nor \
                     our export of this variant ({export_name:?})",
                    known.join(", ")
                ),
            });
        }
        let exported = rules::fsf::to_fsf_ini(v).map_err(|e| NnueError::Unplayable {
            variant: v.name.clone(),
            reason: e.to_string(),
        })?;
        FsfRules::from_ini(&exported.ini)
    }

    /// The rules of the one section of a `variants.ini` text as our exporter writes it. Keys
    /// that change the features in ways this module does not follow are refused.
    pub fn from_ini(text: &str) -> Result<FsfRules, NnueError> {
        let bad = |reason: String| NnueError::Layout {
            variant: "variants.ini".into(),
            reason,
        };
        let mut name = None;
        let mut keys: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(section) = line.strip_prefix('[') {
                let section = section
                    .strip_suffix(']')
                    .ok_or_else(|| bad(format!("malformed section line {line:?}")))?;
                if name.is_some() {
                    return Err(bad("more than one section".into()));
                }
                if section.contains(':') {
                    return Err(bad(format!(
                        "section [{section}] inherits from another variant, which is not followed"
                    )));
                }
                name = Some(section.to_string());
                continue;
            }
            let (k, val) = line
                .split_once('=')
                .ok_or_else(|| bad(format!("line {line:?} is not key = value")))?;
            keys.push((k.trim().to_string(), val.trim().to_string()));
        }
        let name = name.ok_or_else(|| bad("no section".into()))?;
        let get = |k: &str| {
            keys.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let flag = |k: &str| get(k) == Some("true");
        let dim = |k: &str| -> Result<u8, NnueError> {
            get(k)
                .and_then(|v| v.parse().ok())
                .filter(|&n| (1..=12).contains(&n))
                .ok_or_else(|| bad(format!("{k} missing or out of range")))
        };
        let (files, ranks) = (dim("maxFile")?, dim("maxRank")?);
        let mut types = Vec::new();
        for (k, val) in &keys {
            if let Some(t) = piece_type_named(k) {
                let c = val.chars().next().filter(char::is_ascii_alphabetic);
                let c = c.ok_or_else(|| bad(format!("{k} = {val:?}: no letter")))?;
                types.push((t, c.to_ascii_lowercase()));
            }
        }
        for k in [
            "extinctionPieceTypes",
            "mustDrop",
            "seirawanGating",
            "twoBoards",
            "flagRegionBlack",
            "flagRegionWhite",
            "mobilityRegionWhiteKing",
            "mobilityRegionBlackKing",
            "pieceToCharTable",
        ] {
            if get(k).is_some() {
                return Err(bad(format!(
                    "key {k} is not followed by our feature layout"
                )));
            }
        }
        let letter_type = |c: char| {
            types
                .iter()
                .find(|&&(_, l)| l == c.to_ascii_lowercase())
                .map(|&(t, _)| t)
        };
        let mut promoted = Vec::new();
        for pair in get("promotedPieceType").unwrap_or("").split_whitespace() {
            let (a, b) = pair
                .split_once(':')
                .ok_or_else(|| bad(format!("promotedPieceType {pair:?}")))?;
            let one = |s: &str| {
                let mut cs = s.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => letter_type(c),
                    _ => None,
                }
            };
            match (one(a), one(b)) {
                (Some(x), Some(y)) => promoted.push((x, y)),
                _ => return Err(bad(format!("promotedPieceType {pair:?}: unknown letters"))),
            }
        }
        let start = get("startFen").ok_or_else(|| bad("no startFen".into()))?;
        let start_board = start
            .split(['[', ' '])
            .next()
            .unwrap_or_default()
            .to_string();
        Ok(FsfRules {
            name,
            ini: Some(text.to_string()),
            files,
            ranks,
            types,
            promoted,
            drops: flag("pieceDrops"),
            pockets: flag("pieceDrops") && flag("capturesToHand"),
            start_board,
            royal_commoner: false,
        })
    }

    fn promotes_to(&self, t: u8) -> Option<u8> {
        self.promoted.iter().find(|p| p.0 == t).map(|p| p.1)
    }
}

/// The features of one variant: our kinds mapped onto Fairy-Stockfish's piece types and the
/// index arithmetic of `HalfKAv2Variants`.
#[derive(Clone, Debug)]
pub struct FeatureLayout {
    rules: FsfRules,
    files: usize,
    ranks: usize,
    /// Fairy-Stockfish's piece types in its feature order (`PieceType` values, king last).
    order: Vec<u8>,
    /// Per kind of ours: the index of its piece type in `order`.
    kind_type: Vec<usize>,
    /// Number of piece types.
    num_types: usize,
    /// Whether the last type is the king of the features (`nnueKing`).
    has_king: bool,
    /// Squares of the board.
    squares: usize,
    /// Hand slots per type and colour (0 without pockets).
    pockets: usize,
    /// Board features (`nnueNonDropPieceIndices`).
    board_features: usize,
    /// Features per king square (`nnuePieceIndices`).
    piece_indices: usize,
    /// All features.
    dims: usize,
    /// Pieces on the board at the start (`nnueMaxPieces`).
    max_pieces: usize,
}

impl FeatureLayout {
    /// The layout of `rules` for our variant `v`, which must be the same game: same board, same
    /// start, every kind of ours one of its piece types.
    pub fn new(v: &Variant, rules: &FsfRules) -> Result<FeatureLayout, NnueError> {
        let bad = |reason: String| NnueError::Layout {
            variant: format!("{} as Fairy-Stockfish's {}", v.name, rules.name),
            reason,
        };
        if (v.files, v.ranks) != (rules.files, rules.ranks) {
            return Err(bad(format!(
                "board {}x{} here, {}x{} there",
                v.files, v.ranks, rules.files, rules.ranks
            )));
        }
        let ours = v.start_sfen.split_whitespace().next().unwrap_or_default();
        if ours != rules.start_board {
            return Err(bad(format!(
                "start position {ours:?} here, {:?} there",
                rules.start_board
            )));
        }
        // Fairy-Stockfish's order: by PieceType value, the king of the features last.
        let mut order: Vec<u8> = rules.types.iter().map(|t| t.0).collect();
        order.sort_unstable();
        order.dedup();
        let king = Self::nnue_king(v, rules);
        if let Some(k) = king {
            order.retain(|&t| t != k);
            order.push(k);
        }
        let type_of_letter = |c: char| {
            rules
                .types
                .iter()
                .find(|&&(_, l)| l == c.to_ascii_lowercase())
                .map(|&(t, _)| t)
        };
        let mut kind_type = Vec::with_capacity(v.kinds.len());
        for (k, info) in v.kinds.iter().enumerate() {
            let label = v.kind_token(k as Kind);
            let base = &v.kinds[info.demoted as usize];
            let base_type = match base.letter.mark {
                None => type_of_letter(base.letter.ch),
                Some(_) => None,
            }
            .ok_or_else(|| bad(format!("piece {label}: no piece type of that letter")))?;
            let t = if info.promoted {
                rules.promotes_to(base_type).ok_or_else(|| {
                    bad(format!(
                        "piece {label}: its piece type there does not promote"
                    ))
                })?
            } else {
                base_type
            };
            let idx = order.iter().position(|&o| o == t).ok_or_else(|| {
                bad(format!(
                    "piece {label}: its promoted type is not a piece type there"
                ))
            })?;
            kind_type.push(idx);
        }
        let num_types = order.len();
        let squares = usize::from(v.files) * usize::from(v.ranks);
        let pockets = if rules.pockets {
            2 * usize::from(v.files)
        } else {
            0
        };
        let has_king = king.is_some();
        let board_features = (2 * num_types - usize::from(has_king)) * squares;
        let piece_indices = board_features + 2 * (num_types - usize::from(has_king)) * pockets;
        let king_squares = if has_king { squares } else { 1 };
        let max_pieces = ours
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .count()
            .max(1);
        Ok(FeatureLayout {
            rules: rules.clone(),
            files: usize::from(v.files),
            ranks: usize::from(v.ranks),
            order,
            kind_type,
            num_types,
            has_king,
            squares,
            pockets,
            board_features,
            piece_indices,
            dims: king_squares * piece_indices,
            max_pieces,
        })
    }

    /// `nnueKing`: the king type when there is one, it never results from or takes part in a
    /// promotion, and each side starts with exactly one.
    fn nnue_king(v: &Variant, rules: &FsfRules) -> Option<u8> {
        let has = |t: u8| rules.types.iter().any(|x| x.0 == t);
        let king = if has(KING) {
            KING
        } else if rules.royal_commoner && has(COMMONER) {
            COMMONER
        } else {
            return None;
        };
        if rules.promoted.iter().any(|&(a, b)| a == king || b == king) {
            return None;
        }
        let letter = rules.types.iter().find(|x| x.0 == king)?.1;
        let board = v.start_sfen.split_whitespace().next().unwrap_or_default();
        let count = |c: char| board.chars().filter(|&x| x == c).count();
        (count(letter.to_ascii_uppercase()) == 1 && count(letter) == 1).then_some(king)
    }

    /// The Fairy-Stockfish variant.
    pub fn rules(&self) -> &FsfRules {
        &self.rules
    }

    /// Files and ranks.
    pub fn board(&self) -> (usize, usize) {
        (self.files, self.ranks)
    }

    /// Fairy-Stockfish's piece type (`PieceType` value) of our kind `k`.
    pub fn fsf_type_of(&self, k: rules::Kind) -> u8 {
        self.order[self.kind_type[usize::from(k)]]
    }

    /// Number of features (rows of the feature transformer).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Features per king square: a feature's index without its king square is
    /// `index % piece_indices()` (the "virtual" features a factorised trainer shares).
    pub fn piece_indices(&self) -> usize {
        self.piece_indices
    }

    /// Pieces on the board at the start.
    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    /// Fairy-Stockfish's square index of our square `sq` from `perspective`'s side.
    fn oriented(&self, sq: usize, perspective: Color) -> usize {
        let (x, y) = (sq % self.files, sq / self.files);
        match perspective {
            // Rank 1 at the bottom (y = ranks - 1).
            Color::Sente => (self.ranks - 1 - y) * self.files + x,
            // Ranks mirrored: gote's back rank (y = 0) is its rank 1.
            Color::Gote => y * self.files + x,
        }
    }

    /// The layer stack and PSQT bucket of a position.
    pub fn bucket(&self, pos: &Position) -> usize {
        let on_board = pos.occupied_by(Color::Sente).len() + pos.occupied_by(Color::Gote).len();
        (on_board.saturating_sub(1) * 8 / self.max_pieces).min(7)
    }

    /// The active features of `pos` from `perspective`'s side, appended to `out` in
    /// Fairy-Stockfish's order (board squares, then hands). A position of another board, or a
    /// hand count past the layout's slots, yields no feature for that piece.
    pub fn features(&self, pos: &Position, perspective: Color, out: &mut Vec<u32>) {
        let v = pos.variant();
        if usize::from(v.files) != self.files
            || usize::from(v.ranks) != self.ranks
            || v.kinds.len() != self.kind_type.len()
        {
            return;
        }
        let king_type = self.has_king.then_some(self.num_types - 1);
        // The square of the perspective's king (the first, should a hostile position hold
        // several); a missing king counts as square 0 (Fairy-Stockfish's SQ_A1).
        let king_offset = king_type
            .and_then(|kt| {
                pos.occupied_by(perspective)
                    .iter()
                    .find(|&sq| self.kind_type[pos.piece_at(sq).kind() as usize] == kt)
            })
            .map_or(0, |k| self.oriented(k, perspective) * self.piece_indices);
        let mut push = |idx: usize| {
            if idx < self.dims {
                out.push(idx as u32);
            }
        };
        for color in Color::ALL {
            for sq in pos.occupied_by(color).iter() {
                let t = self.kind_type[pos.piece_at(sq).kind() as usize];
                let plane = 2 * t + usize::from(color != perspective && Some(t) != king_type);
                push(self.oriented(sq, perspective) + plane * self.squares + king_offset);
            }
        }
        if self.pockets == 0 {
            return;
        }
        for color in Color::ALL {
            for &k in &v.hand_kinds {
                let t = self.kind_type[k as usize];
                if Some(t) == king_type {
                    continue;
                }
                let slot = (2 * t + usize::from(color != perspective)) * self.pockets;
                for i in 0..usize::from(pos.hand_count(color, k)) {
                    if i < self.pockets {
                        push(self.board_features + slot + i + king_offset);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn layout(name: &str) -> (Arc<Variant>, FeatureLayout) {
        let v = Arc::new(Variant::builtin(name).unwrap());
        let r = FsfRules::for_variant(&v, None).unwrap();
        let l = FeatureLayout::new(&v, &r).unwrap();
        (v, l)
    }

    #[test]
    fn dimensions_follow_fairy_stockfish_formula() {
        // minishogi: 8 types (king last), 25 squares, 10 slots: (15*25 + 2*7*10) * 25.
        assert_eq!(layout("minishogi").1.dims(), (15 * 25 + 140) * 25);
        // kyoto: 10 types: (19*25 + 2*9*10) * 25.
        assert_eq!(layout("kyoto").1.dims(), (19 * 25 + 180) * 25);
        // judkins: 9 types, 36 squares, 12 slots.
        assert_eq!(layout("judkins").1.dims(), (17 * 36 + 2 * 8 * 12) * 36);
        assert_eq!(layout("shogi").1.dims(), (19 * 81 + 2 * 9 * 18) * 81);
        // Sho: no drops, and no king of the features (the elephant promotes to the commoner).
        assert_eq!(layout("sho").1.dims(), 2 * 11 * 81);
    }

    #[test]
    fn start_features_of_minishogi() {
        let (v, l) = layout("minishogi");
        let pos = Position::start(v.clone());
        let mut f = Vec::new();
        l.features(&pos, Color::Sente, &mut f);
        assert_eq!(f.len(), 12);
        // Types in enum order: B R S D(bers) P G H K.
        // Sente's king on 5e, Fairy-Stockfish a1 = square 0: offset 0. Its bishop on 2e (d1, 3).
        let bishop = v.kind_by_letter('B', false).unwrap();
        assert_eq!(l.kind_type[bishop as usize], 0);
        assert!(f.contains(&3));
        // Gote's bishop on 4a (b5): enemy plane 1; from sente's side square b5 = 21.
        assert!(f.contains(&(25 + 21)));
        // The kings share plane 14; gote's king on 1a is e5 = 24.
        assert!(f.contains(&(14 * 25 + 24)));
        assert!(f.contains(&(14 * 25)));
        // From gote's side ranks are mirrored: its king (1a) sits on e1 = 4.
        let mut g = Vec::new();
        l.features(&pos, Color::Gote, &mut g);
        let off = 4 * l.piece_indices() as u32;
        assert!(g.contains(&(14 * 25 + 4 + off)));
        // Its own bishop (4a) is b1 = 1 on its own plane 0.
        assert!(g.contains(&(1 + off)));
        assert_eq!(l.bucket(&pos), 7);
    }

    #[test]
    fn hands_fill_slots_in_order() {
        let (v, l) = layout("minishogi");
        let mut pos = Position::from_sfen(&v, "rbsgk/5/5/S3G/K2BR b 2P 1").unwrap();
        assert!(pos.legal_moves().len() > 1);
        let mut f = Vec::new();
        l.features(&pos, Color::Sente, &mut f);
        // Pawn type index 4: own slots start at board features + 8 * 10.
        let base = (15 * 25 + 8 * 10) as u32;
        assert!(f.contains(&base) && f.contains(&(base + 1)));
        assert_eq!(f.len(), 12);
        pos.play_usi("P*3c").unwrap();
        f.clear();
        l.features(&pos, Color::Sente, &mut f);
        assert!(f.contains(&base) && !f.contains(&(base + 1)));
    }

    #[test]
    fn every_builtin_counterpart_maps_every_kind() {
        for ours in rules::VariantSpec::builtin_names() {
            let Some(fsf) = builtin_counterpart(ours) else {
                continue;
            };
            let (v, l) = layout(ours);
            assert_eq!(l.rules().name, fsf);
            assert_eq!(l.kind_type.len(), v.kinds.len());
        }
    }

    #[test]
    fn exports_are_read_from_their_ini() {
        let v = Variant::builtin("kyoto").unwrap();
        let r = FsfRules::for_variant(&v, Some("kyoto-export")).unwrap();
        assert_eq!(r.name, "kyoto-export");
        assert!(r.ini.is_some() && r.pockets);
        let b = FsfRules::builtin("kyotoshogi").unwrap();
        let sorted = |r: &FsfRules| {
            let mut t = r.types.clone();
            t.sort();
            t
        };
        // The export lists the pieces kyoto uses; the built-in also has minishogi's dragons.
        assert!(sorted(&r).iter().all(|t| b.types.contains(t)));
        let l = FeatureLayout::new(&v, &r).unwrap();
        assert_eq!(l.dims(), (2 * 8 - 1) * 25 * 25 + 2 * 7 * 10 * 25);
    }

    #[test]
    fn unplayable_variants_are_refused_with_the_reason() {
        let v = Variant::builtin("chu").unwrap();
        let e = FsfRules::for_variant(&v, None).unwrap_err().to_string();
        assert!(e.contains("12x12"), "{e}");
        let m = Variant::builtin("minishogi").unwrap();
        let e = FsfRules::for_variant(&m, Some("chess"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"chess\""), "{e}");
        // A built-in of another board does not fit.
        let r = FsfRules::builtin("judkins").unwrap();
        assert!(FeatureLayout::new(&m, &r).is_err());
    }

    #[test]
    fn hostile_ini_is_an_error() {
        for text in [
            "",
            "[x]\nmaxFile = 99\nmaxRank = 5\n",
            "[x:shogi]\n",
            "[x]\nmaxFile = 5\nmaxRank = 5\nking = \nstartFen = 5/5/5/5/5 w 0 1\n",
            "[x]\nmaxFile = 5\nmaxRank = 5\nking = k\npromotedPieceType = k:q\nstartFen = k\n",
            "[x]\n[y]\n",
            "[x\n",
            "[x]\nnot a key\n",
        ] {
            assert!(FsfRules::from_ini(text).is_err(), "{text:?}");
        }
        assert_eq!(piece_type_named("customPiece1"), Some(CUSTOM_PIECE_1));
        assert_eq!(piece_type_named("customPiece25"), Some(CUSTOM_PIECE_LAST));
        assert_eq!(piece_type_named("customPiece26"), None);
        assert_eq!(piece_type_named("customPiece0"), None);
        assert_eq!(piece_type_named("customPiece01"), None);
    }
}
