//! Export of a compiled [`Variant`] to a Fairy-Stockfish `variants.ini` section.
//!
//! The output is written for Fairy-Stockfish 11.1 (the Debian 12 package) in its large-board
//! build (files up to 12, ranks up to 10). 11.1 cannot define a piece from Betza: it only knows
//! a fixed list of piece types, so each of our pieces must move exactly like one of them. The two are compared as move sets on the variant's own board, so
//! `R` and `R9` on a 9x9 board are the same piece.
//!
//! Every rule of the variant is either written as a Fairy-Stockfish key or refused: nothing is
//! dropped silently. [`to_fsf_ini`] returns every rule it cannot express at once, each as a
//! sentence naming the piece or config key, so one run shows all that stands in the way.
//!
//! One rule maps with a different mechanism but the same game results: `drop.no_mate`
//! (uchifuzume) makes a mating pawn drop illegal here, while Fairy-Stockfish's
//! `shogiPawnDropMateIllegal` generates the drop and scores it as a loss for the side that
//! dropped. Its perft therefore also counts such drops.

use crate::betza::{self, MoveAtom, MAX_HOPS};
use crate::bitset::SquareSet;
use crate::spec::PieceDropSpec;
use crate::types::{Color, Kind, Letter};
use crate::values::{MatchRule, PromotionMode, StalemateValue};
use crate::variant::Variant;
use crate::Position;
use std::collections::BTreeMap;
use thiserror::Error;

/// Our variants that are built into Fairy-Stockfish, with its names for them.
const BUILTIN_COUNTERPARTS: &[(&str, &str)] = &[
    ("minishogi", "minishogi"),
    ("kyoto", "kyotoshogi"),
    ("micro", "micro"),
    ("judkins", "judkins"),
    ("shogi", "shogi"),
    ("sho", "shoshogi"),
    ("tori", "torishogi"),
    ("yari", "yarishogi"),
];

/// The names of Fairy-Stockfish's built-in variants that are counterparts of ours.
pub fn builtin_counterpart_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_COUNTERPARTS.iter().map(|&(_, fsf)| fsf)
}

/// Fairy-Stockfish's built-in name for our variant `name`, if it has one.
pub fn builtin_counterpart(name: &str) -> Option<&'static str> {
    BUILTIN_COUNTERPARTS
        .iter()
        .find(|(ours, _)| *ours == name)
        .map(|&(_, fsf)| fsf)
}

/// The Fairy-Stockfish release the output is written for and tested against.
pub const FSF_VERSION: &str = "11.1";

/// Appended to the variant's name to form the section name. Fairy-Stockfish ignores a section
/// whose name is already taken (it only prints "Variant 'shogi' already exists." on stderr), and
/// `UCI_Variant shogi` would then silently select its built-in rules instead of ours; a suffix
/// that no built-in variant has keeps the two apart.
pub const SECTION_SUFFIX: &str = "-export";

/// Refusal text for a piece our immobility rule and Fairy-Stockfish's judge differently.
const IMMOBILE_DIFFERS: &str = "our immobility rule counts its moves that need another piece \
     (captures, jumps) and Fairy-Stockfish's immobilityIllegal does not (it looks at quiet moves \
     on an empty board), so they disagree on where it could never move";

/// Largest board of Fairy-Stockfish's large-board build.
const MAX_FILES: u8 = 12;
const MAX_RANKS: u8 = 10;

/// An exported variant: its section name (the `UCI_Variant` value) and the `variants.ini` text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsfVariant {
    /// Section name, to pass as `setoption name UCI_Variant value <name>`.
    pub name: String,
    /// A complete `variants.ini` file: a comment header and the one section.
    pub ini: String,
}

/// The variant has rules Fairy-Stockfish cannot express; `refusals` names every one of them.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "variant {variant:?} cannot be exported to Fairy-Stockfish 11.1:\n  - {}",
    .refusals.join("\n  - ")
)]
pub struct FsfExportError {
    /// The variant's name.
    pub variant: String,
    /// One sentence per rule that cannot be expressed, naming the piece or config key.
    pub refusals: Vec<String>,
}

/// A built-in Fairy-Stockfish piece type, with its movement in our Betza dialect.
struct FsfType {
    /// The `variants.ini` key naming the type.
    name: &'static str,
    /// Its movement as our parser reads it (FSF 11.1's `src/piece.cpp` step tables).
    betza: &'static str,
    /// Letter for the type when none of our pieces lends one (a promoted-only type).
    letter: char,
}

const fn fsf_type(name: &'static str, betza: &'static str, letter: char) -> FsfType {
    FsfType {
        name,
        betza,
        letter,
    }
}

/// Index of `king` in [`FSF_TYPES`]: the only royal type.
const KING: usize = 0;
/// Index of `shogiPawn`: the only type nifu and drop-mate rules apply to.
const SHOGI_PAWN: usize = 19;
/// Index of `soldier`, whose sideways step depends on `soldierPromotionRank`.
const SOLDIER: usize = 27;

/// The piece types of Fairy-Stockfish 11.1 that move by steps, slides and the xiangqi cannon's
/// hop only. Left out: `pawn` (double step, en passant, its own promotion), the lame leapers
/// `horse`, `elephant`, `janggiElephant` and `banner` (our Betza has no lame moves), `clobber`
/// and `immobile` (no quiet move), and `janggiCannon` (it may not jump or take cannons).
const FSF_TYPES: &[FsfType] = &[
    fsf_type("king", "K", 'k'),
    fsf_type("commoner", "K", 'm'),
    fsf_type("knight", "N", 'n'),
    fsf_type("bishop", "B", 'b'),
    fsf_type("rook", "R", 'r'),
    fsf_type("queen", "Q", 'q'),
    fsf_type("fers", "F", 'f'),
    fsf_type("alfil", "A", 'e'),
    fsf_type("fersAlfil", "FA", 'e'),
    fsf_type("silver", "FfW", 's'),
    fsf_type("aiwok", "RNF", 'a'),
    fsf_type("bers", "RF", 'd'),
    fsf_type("archbishop", "BN", 'a'),
    fsf_type("chancellor", "RN", 'c'),
    fsf_type("amazon", "QN", 'a'),
    fsf_type("knibis", "mNcB", 'i'),
    fsf_type("biskni", "mBcN", 'i'),
    fsf_type("kniroo", "mNcR", 'i'),
    fsf_type("rookni", "mRcN", 'i'),
    fsf_type("shogiPawn", "fW", 'p'),
    fsf_type("lance", "fR", 'l'),
    fsf_type("shogiKnight", "ffN", 'n'),
    fsf_type("euroshogiKnight", "ffNsW", 'n'),
    fsf_type("gold", "WfF", 'g'),
    fsf_type("dragonHorse", "BW", 'h'),
    fsf_type("breakthrough", "mfWfF", 'p'),
    fsf_type("cannon", "mRcpR", 'c'),
    fsf_type("soldier", "fsW", 'p'),
    fsf_type("wazir", "W", 'w'),
    fsf_type("centaur", "KN", 'c'),
];

/// A piece's moves on one board, in a form where two spellings of the same movement compare
/// equal: per (step, pieces jumped), the farthest quiet move and the farthest capture (0: none,
/// `u8::MAX`: as far as the board allows).
type MoveSet = BTreeMap<(i8, i8, u8), (u8, u8)>;

/// How many times a step fits on the board (0: it never lands on it).
fn reach(dx: i8, dy: i8, files: u8, ranks: u8) -> u32 {
    let fit = |d: i8, side: u8| match d {
        0 => u32::MAX,
        d => (u32::from(side) - 1) / u32::from(d.unsigned_abs()),
    };
    fit(dx, files).min(fit(dy, ranks))
}

fn move_set(atoms: &[MoveAtom], files: u8, ranks: u8) -> MoveSet {
    let mut set = MoveSet::new();
    for a in atoms {
        let reach = reach(a.dx, a.dy, files, ranks);
        if reach == 0 {
            continue;
        }
        // A range the board cannot exceed is no limit.
        let range = if a.range == 0 || u32::from(a.range) >= reach {
            u8::MAX
        } else {
            a.range
        };
        for h in 0..=MAX_HOPS as u8 {
            if a.hops >> h & 1 != 0 {
                let e = set.entry((a.dx, a.dy, h)).or_insert((0, 0));
                if a.can_move {
                    e.0 = e.0.max(range);
                }
                if a.can_capture {
                    e.1 = e.1.max(range);
                }
            }
        }
    }
    set
}

/// What keeps these atoms from matching a built-in type, if one thing stands out.
fn why_unmatched(atoms: &[MoveAtom], files: u8, ranks: u8) -> Option<String> {
    let most_jumped = atoms
        .iter()
        .map(|a| 7 - a.hops.leading_zeros() as u8)
        .max()
        .unwrap_or(0);
    if most_jumped >= 2 {
        return Some(format!(
            "jumps over up to {most_jumped} pieces ((paf){most_jumped})"
        ));
    }
    if most_jumped == 1 {
        return Some(
            "jumps over a piece, which of its types only the xiangqi cannon (mRcpR) and the \
             janggi cannon (which may not jump over or take cannons) do"
                .into(),
        );
    }
    atoms
        .iter()
        .find(|a| a.range > 1 && u32::from(a.range) < reach(a.dx, a.dy, files, ranks))
        .map(|a| format!("slides at most {} squares", a.range))
}

/// Section name for a variant name: the name with [`SECTION_SUFFIX`], characters other than
/// ASCII letters, digits, `-` and `_` replaced by `-` (`]`, `:` and spaces mean something in
/// `variants.ini` or in the UCI `setoption` line).
pub fn fsf_section_name(variant_name: &str) -> String {
    let base: String = variant_name
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => c,
            _ => '-',
        })
        .collect();
    format!("{base}{SECTION_SUFFIX}")
}

/// Fairy-Stockfish's FEN of a position given as our SFEN (as [`Position::to_sfen`] writes it):
/// the board as is (`+` marks promoted pieces), the hands in brackets with one letter per
/// piece, and the colours of the side field swapped, since Fairy-Stockfish calls sente (upper
/// case, moving first) "white" (`w`).
pub fn sfen_to_fsf_fen(sfen: &str) -> String {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    let board = fields.first().copied().unwrap_or("");
    let side = if fields.get(1) == Some(&"w") {
        "b"
    } else {
        "w"
    };
    let mut hand = String::new();
    let mut count = 0usize;
    for c in fields.get(2).copied().unwrap_or("-").chars() {
        if let Some(d) = c.to_digit(10) {
            count = count * 10 + d as usize;
        } else if c != '-' {
            hand.extend(std::iter::repeat_n(c, count.max(1)));
            count = 0;
        }
    }
    format!("{board}[{hand}] {side} - - 0 1")
}

/// Fairy-Stockfish's FEN of a position (see [`sfen_to_fsf_fen`]).
pub fn to_fsf_fen(pos: &Position) -> String {
    sfen_to_fsf_fen(&pos.to_sfen())
}

/// Writes `v` as a Fairy-Stockfish `variants.ini` file with one section (named by
/// [`fsf_section_name`]), or lists every rule of `v` that Fairy-Stockfish 11.1 cannot express.
pub fn to_fsf_ini(v: &Variant) -> Result<FsfVariant, FsfExportError> {
    let mut ex = Exporter::new(v);
    ex.board();
    ex.royals();
    ex.pieces();
    ex.promotion();
    ex.drops();
    ex.immobility_and_drop_regions();
    ex.end();
    if !ex.refusals.is_empty() {
        return Err(FsfExportError {
            variant: v.name.clone(),
            refusals: ex.refusals,
        });
    }
    let name = fsf_section_name(&v.name);
    let ini = ex.render(&name);
    Ok(FsfVariant { name, ini })
}

/// One `key = value` line and the comment above it.
struct Line {
    comment: String,
    key: &'static str,
    value: String,
}

struct Exporter<'a> {
    v: &'a Variant,
    refusals: Vec<String>,
    lines: Vec<Line>,
    /// Header notes on rules that have no key (and cannot change moves or results).
    notes: Vec<String>,
    /// Parsed moves per kind (empty if the Betza does not parse, which compiling prevents).
    atoms: Vec<Vec<MoveAtom>>,
    /// Fairy-Stockfish type per kind, where one moves the same.
    ty: Vec<Option<usize>>,
    /// Fairy-Stockfish letter per kind (lower case), once its type has one.
    letter: Vec<Option<char>>,
}

impl<'a> Exporter<'a> {
    fn new(v: &'a Variant) -> Exporter<'a> {
        let atoms = v
            .kinds
            .iter()
            .map(|k| betza::parse(&k.betza).unwrap_or_default())
            .collect();
        Exporter {
            v,
            refusals: Vec::new(),
            lines: Vec::new(),
            notes: Vec::new(),
            atoms,
            ty: vec![None; v.kinds.len()],
            letter: vec![None; v.kinds.len()],
        }
    }

    fn set(&mut self, comment: impl Into<String>, key: &'static str, value: impl ToString) {
        self.lines.push(Line {
            comment: comment.into(),
            key,
            value: value.to_string(),
        });
    }

    fn refuse(&mut self, reason: String) {
        self.refusals.push(reason);
    }

    /// `N (knight)`, `+N (promoted knight)`.
    fn label(&self, k: usize) -> String {
        format!(
            "{} ({})",
            self.v.kind_token(k as Kind),
            self.v.kinds[k].name
        )
    }

    fn base_kinds(&self) -> impl Iterator<Item = usize> + 'a {
        self.v
            .kinds
            .iter()
            .enumerate()
            .filter(|(_, k)| !k.promoted)
            .map(|(i, _)| i)
    }

    fn board(&mut self) {
        let v = self.v;
        if v.files > MAX_FILES || v.ranks > MAX_RANKS {
            self.refuse(format!(
                "board {}x{} (files, ranks): Fairy-Stockfish's large-board build has at most \
                 {MAX_FILES} files and {MAX_RANKS} ranks",
                v.files, v.ranks
            ));
        }
        self.set("files, ranks", "maxFile", v.files);
        self.set("", "maxRank", v.ranks);
    }

    fn royals(&mut self) {
        let v = self.v;
        for (k, info) in v.kinds.iter().enumerate() {
            if !info.royal {
                continue;
            }
            if info.promoted {
                self.refuse(format!(
                    "promoted form {} is royal (pieces[].promoted.royal): a side may hold two \
                     royal pieces and loses with its last one, but Fairy-Stockfish 11.1 has one \
                     king per side and no rule for several royal pieces",
                    self.label(k)
                ));
            } else if let Some(p) = info.promotes_to {
                if !v.kinds[p as usize].royal {
                    self.refuse(format!(
                        "royal piece {} promotes to {}: Fairy-Stockfish's king cannot promote",
                        self.label(k),
                        self.label(p as usize)
                    ));
                }
            }
        }
    }

    /// Maps every kind to a Fairy-Stockfish type and gives each type in use a letter.
    fn pieces(&mut self) {
        self.match_types();
        let owner = self.base_letters();
        self.promoted_letters(&owner);
        self.type_lines();
    }

    /// The Fairy-Stockfish type of each kind that moves like one (royal kinds: the king).
    fn match_types(&mut self) {
        let v = self.v;
        let sets: Vec<MoveSet> = FSF_TYPES
            .iter()
            .map(|t| {
                let atoms = betza::parse(t.betza).expect("the type table's Betza parses");
                move_set(&atoms, v.files, v.ranks)
            })
            .collect();
        for (k, info) in v.kinds.iter().enumerate() {
            if info.royal && info.promoted {
                continue; // refused in royals()
            }
            let set = move_set(&self.atoms[k], v.files, v.ranks);
            let found = if info.royal {
                (set == sets[KING]).then_some(KING)
            } else {
                (0..FSF_TYPES.len()).find(|&t| t != KING && sets[t] == set)
            };
            match found {
                Some(t) => self.ty[k] = Some(t),
                None if info.royal => self.refuse(format!(
                    "royal piece {}: betza {:?}, but Fairy-Stockfish's royal piece (king) \
                     moves as K",
                    self.label(k),
                    info.betza
                )),
                None => self.refuse(format!(
                    "piece {}: betza {:?}{}: no Fairy-Stockfish 11.1 piece type moves like \
                     this, and 11.1 cannot define pieces from Betza",
                    self.label(k),
                    info.betza,
                    why_unmatched(&self.atoms[k], v.files, v.ranks)
                        .map(|w| format!(" {w}"))
                        .unwrap_or_default()
                )),
            }
        }
    }

    /// Unpromoted pieces appear in positions by their letter: one type each. Gives them their
    /// letters and returns the unpromoted kind owning each type.
    fn base_letters(&mut self) -> Vec<Option<usize>> {
        let v = self.v;
        let mut owner: Vec<Option<usize>> = vec![None; FSF_TYPES.len()];
        for k in self.base_kinds().collect::<Vec<_>>() {
            let Some(t) = self.ty[k] else { continue };
            match owner[t] {
                Some(first) => {
                    self.refuse(format!(
                        "pieces {} and {} both move as Fairy-Stockfish's {} ({}); a piece type \
                         has one letter there, so the two cannot both exist",
                        self.label(first),
                        self.label(k),
                        FSF_TYPES[t].name,
                        FSF_TYPES[t].betza
                    ));
                    self.ty[k] = None;
                }
                None => {
                    owner[t] = Some(k);
                    match v.kinds[k].letter.unmarked() {
                        Some(c) => self.letter[k] = Some(c.to_ascii_lowercase()),
                        None => self.refuse(format!(
                            "piece {}: Fairy-Stockfish 11.1 names pieces with one letter, \
                             without a mark",
                            self.label(k)
                        )),
                    }
                }
            }
        }
        owner
    }

    /// Promoted forms are written `+X` and need no letter of their own, but their type must be
    /// declared with one: the base piece's (of `owner`) when it shares the type, else a free
    /// letter.
    fn promoted_letters(&mut self, owner: &[Option<usize>]) {
        let v = self.v;
        let mut used: Vec<char> = self.letter.iter().flatten().copied().collect();
        for k in 0..v.kinds.len() {
            let Some(t) = self.ty[k] else { continue };
            if !v.kinds[k].promoted {
                continue;
            }
            if let Some(b) = owner[t] {
                self.letter[k] = self.letter[b];
                // Promotion belongs to the type in Fairy-Stockfish, not to the piece.
                if v.kinds[b].promotes_to.is_some() {
                    self.refuse(format!(
                        "promoted form {} moves as Fairy-Stockfish's {}, the type of piece {}, \
                         which promotes: Fairy-Stockfish would let {} promote again",
                        self.label(k),
                        FSF_TYPES[t].name,
                        self.label(b),
                        v.kind_token(k as Kind)
                    ));
                }
                continue;
            }
            let shared = (0..k).find(|&j| v.kinds[j].promoted && self.ty[j] == Some(t));
            self.letter[k] = match shared {
                Some(j) => self.letter[j],
                None => {
                    let preferred = FSF_TYPES[t].letter;
                    let l = std::iter::once(preferred)
                        .chain('a'..='z')
                        .find(|c| !used.contains(c));
                    if let Some(l) = l {
                        used.push(l);
                    }
                    l
                }
            };
            if self.letter[k].is_none() {
                self.refuse(format!(
                    "promoted form {}: no letter is left for its Fairy-Stockfish type {}",
                    self.label(k),
                    FSF_TYPES[t].name
                ));
            }
        }
    }

    /// One line per type in use, listing our pieces of that type.
    fn type_lines(&mut self) {
        let v = self.v;
        let mut done = vec![false; FSF_TYPES.len()];
        for k in 0..v.kinds.len() {
            let (Some(t), Some(l)) = (self.ty[k], self.letter[k]) else {
                continue;
            };
            if done[t] {
                continue;
            }
            done[t] = true;
            let ours: Vec<String> = (0..v.kinds.len())
                .filter(|&j| self.ty[j] == Some(t))
                .map(|j| self.label(j))
                .collect();
            let comment = format!("{}: {}", ours.join(", "), v.kinds[k].betza);
            self.set(comment, FSF_TYPES[t].name, l);
        }
    }

    fn promotion(&mut self) {
        let v = self.v;
        let promoting: Vec<usize> = self
            .base_kinds()
            .filter(|&k| v.kinds[k].promotes_to.is_some())
            .collect();
        let flipping: Vec<usize> = promoting
            .iter()
            .copied()
            .filter(|&k| v.kinds[k].promotion == PromotionMode::Flip)
            .collect();
        let in_zone: Vec<usize> = promoting
            .iter()
            .copied()
            .filter(|&k| v.kinds[k].promotion != PromotionMode::Flip)
            .collect();
        let pairs: Vec<String> = promoting
            .iter()
            .filter_map(|&k| {
                let p = v.kinds[k].promotes_to? as usize;
                Some(format!("{}:{}", self.letter[k]?, self.letter[p]?))
            })
            .collect();
        if !flipping.is_empty() && !in_zone.is_empty() {
            for &k in &flipping {
                self.refuse(format!(
                    "piece {} turns over by itself (promotion = \"flip\") while {} promotes in \
                     the zone: Fairy-Stockfish's promotion zone and demotion rule apply to every \
                     piece alike",
                    self.label(k),
                    self.label(in_zone[0])
                ));
            }
            return;
        }
        if !flipping.is_empty() {
            self.flip_promotion(&pairs);
        } else {
            self.zone_promotion(&in_zone, &pairs);
        }
    }

    /// Turning over anywhere = a zone covering the board, promotion and demotion forced.
    fn flip_promotion(&mut self, pairs: &[String]) {
        let v = self.v;
        self.set(
            "promotion = \"flip\": every piece that can turns over (promotes or demotes) \
             anywhere, with no choice: a zone covering the board (promotion.zone_depth then \
             only matters for drop.in_zone, compared with the drop regions below)",
            "promotionRank",
            1,
        );
        self.set("", "promotedPieceType", pairs.join(" "));
        self.set("", "mandatoryPiecePromotion", true);
        self.set("", "pieceDemotion", true);
        self.set(
            format!(
                "promotion.flip_on = {:?}",
                if v.flip_on_capture { "capture" } else { "move" }
            ),
            "piecePromotionOnCapture",
            v.flip_on_capture,
        );
    }

    /// Promotion in the zone, optional or forced (`in_zone`: the kinds that promote there).
    fn zone_promotion(&mut self, in_zone: &[usize], pairs: &[String]) {
        let v = self.v;
        if v.zone_depth == 0 {
            // Promotion by capture has no zone; it is refused as such.
            if !in_zone.is_empty() && !v.promote_by_capture {
                self.refuse(format!(
                    "promotion.zone_depth = 0 with promoting pieces ({}): Fairy-Stockfish's \
                     promotionRank cannot describe an empty promotion zone",
                    self.label(in_zone[0])
                ));
            }
            return;
        }
        let forced: Vec<usize> = in_zone
            .iter()
            .copied()
            .filter(|&k| v.kinds[k].promotion == PromotionMode::Forced)
            .collect();
        let optional = in_zone
            .iter()
            .find(|&&k| v.kinds[k].promotion != PromotionMode::Forced);
        if let (false, Some(&o)) = (forced.is_empty(), optional) {
            for &k in &forced {
                self.refuse(format!(
                    "piece {} must promote (promotion = \"forced\") while {} may choose: \
                     Fairy-Stockfish's mandatoryPiecePromotion applies to every promoting piece",
                    self.label(k),
                    self.label(o)
                ));
            }
        }
        self.set(
            format!(
                "promotion.zone_depth = {}: the zone starts at this rank from the owner's side",
                v.zone_depth
            ),
            "promotionRank",
            v.ranks - v.zone_depth + 1,
        );
        if !pairs.is_empty() {
            self.set(
                "the promoted forms (promotion on a move into, out of or within the zone)",
                "promotedPieceType",
                pairs.join(" "),
            );
        }
        let all_forced = !forced.is_empty() && optional.is_none();
        self.set(
            match all_forced {
                true => "promotion = \"forced\": a promoting piece must promote in the zone",
                false => "promotion = \"optional\": promoting in the zone is a choice",
            },
            "mandatoryPiecePromotion",
            all_forced,
        );
        self.set("", "pieceDemotion", false);
        self.set("", "piecePromotionOnCapture", false);
    }

    /// The drop keys and the per-piece drop rules other than squares.
    fn drops(&mut self) {
        let v = self.v;
        self.set(
            format!("drops.enabled = {}", v.drops),
            "pieceDrops",
            v.drops,
        );
        self.set("", "capturesToHand", v.drops);
        self.set(
            format!("drops.promoted = {}", v.promoted_drops),
            "dropPromoted",
            v.drops && v.promoted_drops,
        );
        self.set(
            "captured promoted pieces go to hand demoted",
            "dropLoop",
            false,
        );
        let (mut nifu, mut no_mate) = (false, false);
        // Fairy-Stockfish's nifu and drop-mate rules look at every piece of type shogiPawn.
        let promoted_pawn =
            (0..v.kinds.len()).find(|&k| v.kinds[k].promoted && self.ty[k] == Some(SHOGI_PAWN));
        let hand_kinds: Vec<usize> = if v.drops {
            v.hand_kinds.iter().map(|&k| k as usize).collect()
        } else {
            Vec::new()
        };
        for k in hand_kinds {
            let (k_nifu, k_no_mate) = self.hand_kind_rules(k, promoted_pawn);
            nifu |= k_nifu;
            no_mate |= k_no_mate;
        }
        self.pawn_rule_keys(nifu, no_mate);
    }

    /// Refuses the drop rules of hand kind `k` that Fairy-Stockfish cannot express; returns
    /// whether it has nifu and drop-mate rules that map to the pawn's (`promoted_pawn`: a
    /// promoted form moving as Fairy-Stockfish's pawn).
    fn hand_kind_rules(&mut self, k: usize, promoted_pawn: Option<usize>) -> (bool, bool) {
        let info = &self.v.kinds[k];
        if info.drop_must_check {
            self.refuse(format!(
                "drops of {} must give check (drop.must_check = true): Fairy-Stockfish 11.1 \
                 has no such rule (its dropChecks can only forbid checking drops)",
                self.label(k)
            ));
        }
        // A piece without a type is refused already; its drop rules follow from that.
        let Some(t) = self.ty[k] else {
            return (false, false);
        };
        let as_type = format!(
            "Fairy-Stockfish's {} ({})",
            FSF_TYPES[t].name, FSF_TYPES[t].betza
        );
        let no_mate = info.no_drop_mate && self.drop_mate_maps(k, t, &as_type, promoted_pawn);
        let nifu = self.nifu_maps(k, t, &as_type, promoted_pawn);
        (nifu, no_mate)
    }

    /// Whether the drop-mate rule of hand kind `k` (of type `t`, described by `as_type`) is
    /// Fairy-Stockfish's pawn-drop-mate rule; refuses it otherwise.
    fn drop_mate_maps(
        &mut self,
        k: usize,
        t: usize,
        as_type: &str,
        promoted_pawn: Option<usize>,
    ) -> bool {
        let v = self.v;
        let info = &v.kinds[k];
        let flips_up = v.promoted_drops && info.promotes_to.is_some();
        if t != SHOGI_PAWN {
            self.refuse(format!(
                "drops of {} may not checkmate (drop.no_mate = true): Fairy-Stockfish's \
                 shogiPawnDropMateIllegal applies only to its shogiPawn type (fW), and {} \
                 moves as {as_type}",
                self.label(k),
                v.kind_token(k as Kind)
            ));
        } else if let Some(p) = promoted_pawn {
            self.refuse(format!(
                "drops of {} may not checkmate (drop.no_mate = true), but promoted form {} \
                 also moves as shogiPawn: Fairy-Stockfish would count its mates as \
                 pawn-drop mates",
                self.label(k),
                self.label(p)
            ));
        } else if flips_up || info.promotion == PromotionMode::Flip {
            self.refuse(format!(
                "drops of {} may not checkmate (drop.no_mate = true) while it turns over \
                 or is dropped promoted: Fairy-Stockfish's shogiPawnDropMateIllegal \
                 covers only drops of the pawn side",
                self.label(k)
            ));
        } else {
            return true;
        }
        false
    }

    /// Whether hand kind `k` (of type `t`, described by `as_type`) has a per-file drop limit
    /// that is Fairy-Stockfish's nifu rule; refuses other limits.
    fn nifu_maps(
        &mut self,
        k: usize,
        t: usize,
        as_type: &str,
        promoted_pawn: Option<usize>,
    ) -> bool {
        let v = self.v;
        let info = &v.kinds[k];
        let flips_up = v.promoted_drops && info.promotes_to.is_some();
        match info.max_per_file {
            Some(n @ 2..) => self.refuse(format!(
                "drops of {} may not go to a file holding {n} own unpromoted ones \
                 (drop.max_per_file = {n}): Fairy-Stockfish 11.1 forbids only a second one \
                 (shogiDoubledPawn)",
                self.label(k)
            )),
            Some(1) if t != SHOGI_PAWN => self.refuse(format!(
                "drops of {} may not go to a file holding an own unpromoted {} \
                 (drop.nifu = true): Fairy-Stockfish's nifu rule (shogiDoubledPawn = \
                 false) applies only to its shogiPawn type (fW), and {} moves as {as_type}",
                self.label(k),
                v.kind_token(k as Kind),
                v.kind_token(k as Kind)
            )),
            Some(1) => match promoted_pawn {
                Some(p) => self.refuse(format!(
                    "drops of {} obey nifu (drop.nifu = true), but promoted form {} also moves \
                     as shogiPawn: Fairy-Stockfish would count it as a pawn on the file",
                    self.label(k),
                    self.label(p)
                )),
                None if flips_up => self.refuse(format!(
                    "drops of {} obey nifu only when dropped unpromoted (drop.nifu with \
                     drops.promoted): Fairy-Stockfish applies nifu to promoted drops too",
                    self.label(k)
                )),
                None => return true,
            },
            _ => {}
        }
        false
    }

    /// Fairy-Stockfish's nifu and pawn-drop-mate keys.
    fn pawn_rule_keys(&mut self, nifu: bool, no_mate: bool) {
        self.set(
            match nifu {
                true => {
                    "drop.nifu: no drop of a pawn (shogiPawn) on a file holding an own \
                         unpromoted one"
                }
                false => "no piece has drop.nifu",
            },
            "shogiDoubledPawn",
            !nifu,
        );
        self.set(
            match no_mate {
                true => {
                    "drop.no_mate: a mating pawn drop is illegal in our rules; \
                         Fairy-Stockfish generates it and scores it as a loss for the side that \
                         dropped (same results, but its perft counts such drops)"
                }
                false => "no piece has drop.no_mate",
            },
            "shogiPawnDropMateIllegal",
            no_mate,
        );
    }

    /// Whether Fairy-Stockfish counts `k` of colour `c` on `sq` as unable to move: it looks at
    /// quiet moves on an empty board only, where ours also counts captures.
    fn fsf_immobile(&self, c: Color, k: usize, sq: usize) -> bool {
        let v = self.v;
        let (x, y) = v.coords(sq);
        !self.atoms[k].iter().any(|a| {
            let (bx, by) = match c {
                Color::Sente => (a.dx, -a.dy),
                Color::Gote => (-a.dx, a.dy),
            };
            let (tx, ty) = (x as i32 + i32::from(bx), y as i32 + i32::from(by));
            a.can_move
                && a.hops & 1 != 0
                && tx >= 0
                && ty >= 0
                && tx < i32::from(v.files)
                && ty < i32::from(v.ranks)
        })
    }

    fn squares(&self) -> impl Iterator<Item = (Color, usize)> {
        let n = self.v.num_squares();
        Color::ALL
            .into_iter()
            .flat_map(move |c| (0..n).map(move |sq| (c, sq)))
    }

    /// Pieces whose moves Fairy-Stockfish's `immobilityIllegal = flag` would treat differently
    /// from `promotion.forbid_immobile`, with the reason.
    fn move_conflicts(&self, flag: bool) -> Vec<String> {
        let v = self.v;
        let ours = v.forbid_immobile_moves;
        let mut out = Vec::new();
        let flag_text = format!(
            "promotion.forbid_immobile = {ours} but drops.forbid_immobile = {}: Fairy-Stockfish \
             has a single immobilityIllegal for moves and drops",
            v.forbid_immobile_drops
        );
        // Unmapped kinds are refused already; their immobility means nothing there.
        for k in (0..v.kinds.len()).filter(|&k| self.ty[k].is_some()) {
            let info = &v.kinds[k];
            // A plain move (no promotion, no turning over) to sq: ours forbids it iff `a`,
            // Fairy-Stockfish iff `b`.
            let plain_differs = |c: Color, sq: usize| {
                let a = ours && v.is_immobile(c, k as Kind, sq);
                let b = flag && self.fsf_immobile(c, k, sq);
                a != b
            };
            let conflict =
                if info.promotion == PromotionMode::Flip {
                    // Turning over is a promotion or demotion there, which it never checks.
                    let other = v.flips_to(k as Kind).unwrap_or(k as Kind);
                    if ours && self.squares().any(|(c, sq)| v.is_immobile(c, other, sq)) {
                        Some(format!(
                            "piece {} may not turn over where its other side could never move \
                         (promotion.forbid_immobile = true): Fairy-Stockfish does not apply its \
                         immobility rule to promotions and demotions",
                            self.label(k)
                        ))
                    } else if v.flip_on_capture
                        && self.squares().any(|(c, sq)| plain_differs(c, sq))
                    {
                        Some(format!("piece {}: {flag_text}", self.label(k)))
                    } else {
                        None
                    }
                } else {
                    let forced = info.promotion == PromotionMode::Forced;
                    self.squares()
                        .filter(|&(c, sq)| !(forced && v.in_zone(c, sq)))
                        .any(|(c, sq)| plain_differs(c, sq))
                        .then(|| {
                            if flag == ours {
                                format!("piece {}: {IMMOBILE_DIFFERS}", self.label(k))
                            } else {
                                format!(
                                "piece {} {} move unpromoted to a square where it can never move \
                                 again, while drops there are {}: {flag_text}",
                                self.label(k),
                                if ours { "may not" } else { "may" },
                                if v.forbid_immobile_drops { "illegal" } else { "legal" }
                            )
                            }
                        })
                };
            out.extend(conflict);
        }
        out
    }

    /// Our drop squares per (colour, hand index, promoted side up), for the drops that exist.
    fn drop_entries(&self) -> Vec<(Color, usize, bool, usize, SquareSet)> {
        let v = self.v;
        let h = v.hand_kinds.len();
        let mut out = Vec::new();
        if !v.drops {
            return out;
        }
        for c in Color::ALL {
            for (hi, &base) in v.hand_kinds.iter().enumerate() {
                for up in [false, true] {
                    let kind = match (up, v.kinds[base as usize].promotes_to) {
                        (false, _) => base,
                        (true, Some(p)) if v.promoted_drops => p,
                        (true, _) => continue,
                    };
                    let set = v.drop_squares[(2 * usize::from(up) + c.index()) * h + hi];
                    out.push((c, hi, up, kind as usize, set));
                }
            }
        }
        out
    }

    /// Fairy-Stockfish's drop region per colour (one for all pieces): every square some piece
    /// may be dropped on.
    fn drop_regions(&self) -> [SquareSet; 2] {
        let mut region = [SquareSet::EMPTY; 2];
        for (c, _, _, _, set) in self.drop_entries() {
            region[c.index()] = region[c.index()].or(set);
        }
        region
    }

    /// Drops that the region and `immobilityIllegal = flag` would allow on other squares than
    /// ours, with the reason.
    fn drop_mismatches(&self, flag: bool) -> Vec<String> {
        let v = self.v;
        let region = self.drop_regions();
        let mut bad: Vec<(usize, bool)> = Vec::new();
        for (c, hi, up, kind, ours) in self.drop_entries() {
            let mut theirs = region[c.index()];
            if flag {
                for sq in theirs.iter() {
                    if self.fsf_immobile(c, kind, sq) {
                        theirs.remove(sq);
                    }
                }
            }
            if theirs != ours && self.ty[kind].is_some() && !bad.contains(&(hi, up)) {
                bad.push((hi, up));
            }
        }
        bad.into_iter()
            .map(|(hi, up)| {
                let k = v.hand_kinds[hi] as usize;
                let info = &v.kinds[k];
                let spec = self.drop_spec(k);
                let up_text = if up { " promoted side up" } else { "" };
                let ranks = spec.forbidden_ranks.clone().unwrap_or_default();
                if !info.droppable {
                    format!(
                        "piece {} may not be dropped (drop.allowed = false), but Fairy-Stockfish \
                         lets every piece in hand be dropped (its drop regions are the same for \
                         all pieces)",
                        self.label(k)
                    )
                } else if !ranks.is_empty() || spec.in_zone == Some(false) {
                    let mut rules = Vec::new();
                    if spec.in_zone == Some(false) {
                        rules.push("drop.in_zone = false".to_string());
                    }
                    if !ranks.is_empty() {
                        rules.push(format!("drop.forbidden_ranks = {ranks:?}"));
                    }
                    format!(
                        "drops of {}{up_text} are kept off some ranks ({}) unlike other pieces: \
                         Fairy-Stockfish 11.1's drop regions (whiteDropRegion, blackDropRegion) \
                         are the same for every piece",
                        self.label(k),
                        rules.join(", ")
                    )
                } else if flag == v.forbid_immobile_drops {
                    format!("drops of {}{up_text}: {IMMOBILE_DIFFERS}", self.label(k))
                } else {
                    format!(
                        "drops of {}{up_text} where it could never move are {} \
                         (drops.forbid_immobile = {}) but such moves are {} \
                         (promotion.forbid_immobile = {}): Fairy-Stockfish has a single \
                         immobilityIllegal for moves and drops",
                        self.label(k),
                        if v.forbid_immobile_drops {
                            "illegal"
                        } else {
                            "legal"
                        },
                        v.forbid_immobile_drops,
                        if v.forbid_immobile_moves {
                            "illegal"
                        } else {
                            "legal"
                        },
                        v.forbid_immobile_moves
                    )
                }
            })
            .collect()
    }

    /// The drop restrictions of a piece as written in its config.
    fn drop_spec(&self, k: usize) -> PieceDropSpec {
        let letter = self.v.kinds[k].letter;
        self.v
            .spec
            .pieces
            .iter()
            .flatten()
            .find(|p| Letter::parse(&p.letter).map(|(l, _)| l) == Some(letter))
            .and_then(|p| p.drop.clone())
            .unwrap_or_default()
    }

    /// `immobilityIllegal` (one flag for moves and drops) and the drop regions (one per colour
    /// for all pieces): chosen so that they give our drop squares and moves, or refused.
    fn immobility_and_drop_regions(&mut self) {
        let v = self.v;
        let has_drops = !self.drop_entries().is_empty();
        let preferred = match has_drops {
            true => v.forbid_immobile_drops,
            false => v.forbid_immobile_moves,
        };
        let problems = |flag: bool| {
            let mut p = self.move_conflicts(flag);
            p.extend(self.drop_mismatches(flag));
            p
        };
        let (first, second) = (problems(preferred), problems(!preferred));
        let (flag, found) = match second.len() < first.len() {
            true => (!preferred, second),
            false => (preferred, first),
        };
        for r in found {
            self.refuse(r);
        }
        self.set(
            format!(
                "promotion.forbid_immobile = {}, drops.forbid_immobile = {}: moves and drops \
                 leaving a piece where it can never move again are {}",
                v.forbid_immobile_moves,
                v.forbid_immobile_drops,
                if flag { "illegal" } else { "legal" }
            ),
            "immobilityIllegal",
            flag,
        );
        let region = self.drop_regions();
        let all = v.all_squares;
        for (c, key) in [
            (Color::Sente, "whiteDropRegion"),
            (Color::Gote, "blackDropRegion"),
        ] {
            let r = region[c.index()];
            if has_drops && r != all {
                let comment = format!(
                    "squares where some piece may be dropped ({})",
                    match c {
                        Color::Sente => "sente",
                        Color::Gote => "gote",
                    }
                );
                let text = self.region_text(r);
                self.set(comment, key, text);
            }
        }
    }

    /// A square set in Fairy-Stockfish's notation: `*3` for a whole rank, `c4` for a square
    /// (file a = our leftmost file, rank 1 = sente's back rank).
    fn region_text(&self, set: SquareSet) -> String {
        let v = self.v;
        let (files, ranks) = (v.files as usize, v.ranks as usize);
        let mut parts = Vec::new();
        for y in (0..ranks).rev() {
            let rank = ranks - y;
            let row: Vec<usize> = (0..files)
                .filter(|&x| set.contains(v.square(x, y)))
                .collect();
            if row.len() == files {
                parts.push(format!("*{rank}"));
            } else {
                parts.extend(
                    row.iter()
                        .map(|&x| format!("{}{rank}", (b'a' + x as u8) as char)),
                );
            }
        }
        parts.join(" ")
    }

    /// The game-end keys, then the refusals of rules Fairy-Stockfish has no key for.
    fn end(&mut self) {
        self.end_values();
        self.refuse_piece_rules();
        self.refuse_game_rules();
        self.refuse_hasami_rules();
        self.refuse_power_rules();
        let v = self.v;
        self.set("no chess castling", "castling", false);
        if let MatchRule::ConsecutiveWins(n) = v.match_rule {
            self.notes.push(format!(
                "Not expressed: match = \"consecutive-wins:{n}\", an arena rule over successive \
                 games that changes neither the moves nor any game's result."
            ));
        }
        if self.ty.contains(&Some(SOLDIER)) {
            self.set(
                "soldiers (fsW) step sideways everywhere",
                "soldierPromotionRank",
                1,
            );
        }
    }

    /// The results of checkmate, stalemate, repetition and perpetual check.
    fn end_values(&mut self) {
        let v = self.v;
        let value = StalemateValue::as_str;
        self.set("checkmating the royal piece wins", "checkmateValue", "loss");
        self.set(
            format!("end.stalemate = {:?}", value(v.stalemate)),
            "stalemateValue",
            value(v.stalemate),
        );
        self.set(
            format!(
                "end.repetition = {}: the same position (board, hands, side) this many times is \
                 a draw (0: never)",
                v.repetition
            ),
            "nFoldRule",
            v.repetition,
        );
        // Relative to the side to move when the repetition happens, or (absolute) to the first
        // player, as our rule.
        self.set(
            format!("end.repetition_result = {:?}", value(v.repetition_result)),
            "nFoldValue",
            value(v.repetition_result),
        );
        self.set(
            if v.repetition_for_sente {
                "end.repetition_result_for = \"sente\"".to_string()
            } else {
                String::new()
            },
            "nFoldValueAbsolute",
            v.repetition_for_sente,
        );
        self.set(
            format!(
                "end.perpetual_check = {:?}",
                if v.perpetual_check_loses {
                    "loss"
                } else {
                    "draw"
                }
            ),
            "perpetualCheckIllegal",
            v.perpetual_check_loses,
        );
        self.set(
            "no fifty-move rule (end.max_plies is refused unless 0)",
            "nMoveRule",
            0,
        );
    }

    /// Refuses the drop and piece rules Fairy-Stockfish 11.1 has no key for.
    fn refuse_piece_rules(&mut self) {
        let v = self.v;
        if v.royal_drops {
            self.refuse(
                "drops.royal = true: the king starts in hand and is dropped; Fairy-Stockfish 11.1 \
                 never holds a king in hand"
                    .to_string(),
            );
        }
        if v.unarmed_until_royal {
            self.refuse(
                "drops.unarmed_until_royal = true: a side with its king in hand may not capture \
                 or promote and gives no check; Fairy-Stockfish 11.1 has no such rule"
                    .to_string(),
            );
        }
        for k in v.kinds.iter().filter(|k| k.last_rank_betza.is_some()) {
            self.refuse(format!(
                "{} has extra moves on its last rank (last_rank_betza); Fairy-Stockfish 11.1 \
                 has no rank-dependent moves",
                k.name
            ));
        }
        for k in v.kinds.iter().filter(|k| k.move_max_per_file.is_some()) {
            self.refuse(format!(
                "{} may not move onto a file holding too many of its kind (move_max_per_file); \
                 Fairy-Stockfish 11.1 limits drops only",
                k.name
            ));
        }
        for (i, k) in v.kinds.iter().enumerate() {
            if !k.promoted && k.captured_as as usize != i {
                self.refuse(format!(
                    "{} goes to hand as {} when captured (captured_as); Fairy-Stockfish 11.1 \
                     has no such rule",
                    k.name, v.kinds[k.captured_as as usize].name
                ));
            }
        }
        for k in v.kinds.iter().filter(|k| !k.legs.is_empty()) {
            self.refuse(format!(
                "{} ({:?}) has two-step moves (Lion power); Fairy-Stockfish 11.1 has no \
                 multi-leg moves",
                k.name, k.betza
            ));
        }
    }

    /// Refuses the capture, promotion, movement and game-end rules Fairy-Stockfish 11.1 has no
    /// key for.
    fn refuse_game_rules(&mut self) {
        let v = self.v;
        if v.lion_protected || v.lion_counter_strike {
            self.refuse(
                "[lions]: Chu shogi's Lion capture rules; Fairy-Stockfish 11.1 has none"
                    .to_string(),
            );
        }
        if v.promotion_entering {
            self.refuse(
                "promotion.moves = \"entering\": promotion only on entering the zone or \
                 capturing from it; Fairy-Stockfish 11.1 promotes on any move touching the zone"
                    .to_string(),
            );
        }
        for k in v
            .kinds
            .iter()
            .filter(|k| !k.promoted && k.contagion.is_some())
        {
            self.refuse(format!(
                "piece {} ({}) is contagious (pieces[].contagious): its captor becomes its promoted \
                 form; Fairy-Stockfish 11.1 has no such rule",
                k.letter, k.name
            ));
        }
        if v.promote_by_capture {
            self.refuse(
                "promotion.moves = \"capture\": every capture promotes, anywhere; Fairy-Stockfish \
                 11.1 promotes in a zone"
                    .to_string(),
            );
        }
        if v.immobile_may_promote {
            self.refuse(
                "promotion.immobile_may_promote = true: Fairy-Stockfish 11.1 has no such rule"
                    .to_string(),
            );
        }
        if v.moves_from_behind {
            self.refuse(
                "moves_from = \"behind\": a piece moves as the friendly piece directly behind it; \
                 Fairy-Stockfish 11.1 has no such rule"
                    .to_string(),
            );
        }
        if v.bare_king {
            self.refuse(
                "end.bare_king = true: a side left with only its king loses; Fairy-Stockfish 11.1 \
                 has no bare-king rule for shogi variants"
                    .to_string(),
            );
        }
        if v.max_plies > 0 {
            self.refuse(format!(
                "end.max_plies = {}: a draw after {} plies; Fairy-Stockfish has no game-length \
                 limit (its nMoveRule is a fifty-move-style rule)",
                v.max_plies, v.max_plies
            ));
        }
    }

    /// Refuses the large variants' powers and royal capture (Tenjiku shogi), which
    /// Fairy-Stockfish 11.1 has no key for.
    fn refuse_power_rules(&mut self) {
        let v = self.v;
        for k in v.kinds.iter().filter(|k| k.powers.any()) {
            let p = &k.powers;
            let mut what = Vec::new();
            if !p.range_capture.is_empty() {
                what.push(format!("range capture (rank {})", p.rank));
            }
            if !p.skip_first.is_empty() {
                what.push("rides that jump their first square (skip_first)".to_string());
            }
            if p.area > 0 {
                what.push(format!("an area move of {} steps", p.area));
            }
            if !p.hook.is_empty() {
                what.push("hook moves (hook)".to_string());
            }
            if p.burn {
                what.push("burning (burn)".to_string());
            }
            if !p.lion_line.is_empty() {
                what.push("Lion power along a line (lion_line)".to_string());
            }
            if p.anywhere {
                what.push("leaps to any unprotected square (leap_anywhere)".to_string());
            }
            if p.repeat.is_some() {
                what.push("several moves a turn (repeat)".to_string());
            }
            if p.shoot.is_some() {
                what.push("shooting (shoot)".to_string());
            }
            self.refuse(format!(
                "piece {}{} ({}): {}; Fairy-Stockfish 11.1 has no such moves",
                if k.promoted { "+" } else { "" },
                k.letter,
                k.name,
                what.join(", ")
            ));
        }
        for k in &v.kinds {
            let name = format!(
                "piece {}{} ({})",
                if k.promoted { "+" } else { "" },
                k.letter,
                k.name
            );
            if !k.links.spares.is_empty() || k.links.displaces_only.is_some() {
                self.refuse(format!(
                    "{name}: spares or displaces_only; Fairy-Stockfish 11.1 lets every piece \
                     take every enemy piece"
                ));
            }
            if !k.links.promotes_capturing.is_empty() {
                self.refuse(format!(
                    "{name}: promotes_capturing; Fairy-Stockfish 11.1 promotes by zone only"
                ));
            }
            let fates = [
                (
                    k.links.without.is_some(),
                    "without: moves lost while a kind is missing",
                ),
                (
                    k.links.promotes_with.is_some(),
                    "promotes_with: promotion tied to another kind",
                ),
                (
                    k.links.promotion_effects.is_some(),
                    "promotion_effects: a promotion changing other pieces",
                ),
                (
                    k.links.reverts_near.is_some(),
                    "reverts_near: turning back near another piece",
                ),
                (k.links.shot_from > 0, "shot_from: shots only from afar"),
            ];
            for (_, what) in fates.iter().filter(|f| f.0) {
                self.refuse(format!(
                    "{name}: {what}; Fairy-Stockfish 11.1 has no such rule"
                ));
            }
        }
        if !v.royal_reserve.is_empty() {
            self.refuse(
                "end.royal_reserve: pieces that stand in for the royal ones; Fairy-Stockfish \
                 11.1 has no such goal"
                    .to_string(),
            );
        }
        if v.passive_burn {
            self.refuse(
                "capture.passive_burn = true: a piece ending next to an enemy burning piece is \
                 taken; Fairy-Stockfish 11.1 has no such rule"
                    .to_string(),
            );
        }
        if v.royal_capture {
            self.refuse(
                "end.royal_capture = true: royal pieces may be left attacked and are captured; \
                 Fairy-Stockfish 11.1 plays shogi variants with check"
                    .to_string(),
            );
        }
    }

    /// Refuses custodian capture and the material and line goals (Hasami shogi), which
    /// Fairy-Stockfish 11.1 has no key for.
    fn refuse_hasami_rules(&mut self) {
        let v = self.v;
        if v.custodian {
            self.refuse(
                "capture.custodian = true: pieces enclosed between two enemy pieces are taken \
                 (Hasami shogi); Fairy-Stockfish 11.1 captures by displacement only"
                    .to_string(),
            );
        }
        if v.custodian_corners {
            self.refuse(
                "capture.custodian_corners = true: a piece in a corner is taken by enclosure; \
                 Fairy-Stockfish 11.1 has no custodian capture"
                    .to_string(),
            );
        }
        if v.bare_pieces > 0 {
            self.refuse(format!(
                "end.bare_pieces = {}: a side left with at most that many pieces loses; \
                 Fairy-Stockfish 11.1 has no such rule for shogi variants",
                v.bare_pieces
            ));
        }
        if v.connect > 0 {
            self.refuse(format!(
                "end.connect = {} (with end.connect_directions, end.connect_outside_ranks): a \
                 line that the opponent cannot break at once wins; Fairy-Stockfish 11.1 has no \
                 such rule",
                v.connect
            ));
        }
    }

    fn render(&self, name: &str) -> String {
        let v = self.v;
        let mut s = String::new();
        let mut line = |t: &str| {
            s.push_str(t);
            s.push('\n');
        };
        line(&format!(
            "# Fairy-Stockfish variant \"{name}\", generated from the variant config \"{}\"{}.",
            v.name,
            v.spec
                .description
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        ));
        line("# Generated by the rules crate (rules::fsf): edit the config and export again.");
        line(&format!(
            "# Written for Fairy-Stockfish {FSF_VERSION}, large-board build (built-in piece types \
             only)."
        ));
        line(&format!(
            "# Use: setoption name VariantPath value <this file>, then setoption name UCI_Variant \
             value {name}"
        ));
        line(&format!(
            "# The name ends in \"{SECTION_SUFFIX}\": Fairy-Stockfish ignores a section named \
             like a built-in variant."
        ));
        line("# FEN: the SFEN board, hands in brackets, \"w\" = sente (upper case, moves first).");
        for n in &self.notes {
            line(&format!("# {n}"));
        }
        line("");
        line(&format!("[{name}]"));
        for l in &self.lines {
            if !l.comment.is_empty() {
                line(&format!("# {}", l.comment));
            }
            line(&format!("{} = {}", l.key, l.value));
        }
        line(&format!("# start = {:?}", v.start_sfen));
        line(&format!("startFen = {}", sfen_to_fsf_fen(&v.start_sfen)));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::VariantSpec;

    #[test]
    fn shogi_exports_with_its_rules() {
        let out = to_fsf_ini(&Variant::builtin("shogi").unwrap()).unwrap();
        assert_eq!(out.name, "shogi-export");
        for want in [
            "\n[shogi-export]\n",
            "\nmaxFile = 9\n",
            "\nshogiPawn = p\n",
            "\nshogiKnight = n\n",
            "\ngold = g\n",
            "\nbers = d\n",
            "\ndragonHorse = h\n",
            "\npromotionRank = 7\n",
            "\npromotedPieceType = r:d b:h s:g n:g l:g p:g\n",
            "\nmandatoryPiecePromotion = false\n",
            "\nshogiDoubledPawn = false\n",
            "\nshogiPawnDropMateIllegal = true\n",
            "\nimmobilityIllegal = true\n",
            "\nstalemateValue = loss\n",
            "\nnFoldRule = 4\n",
            "\nperpetualCheckIllegal = true\n",
            "\nnMoveRule = 0\n",
            "\nstartFen = lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL[] w - - 0 1\n",
        ] {
            assert!(out.ini.contains(want), "missing {want:?} in\n{}", out.ini);
        }
        // Only comments before the section: Fairy-Stockfish skips text up to the first '['.
        let head = &out.ini[..out.ini.find("\n[").unwrap()];
        assert!(head.lines().all(|l| l.starts_with('#')));
        assert!(!out.ini.contains("whiteDropRegion"));
    }

    #[test]
    fn hand_is_refused_with_every_reason() {
        let err = to_fsf_ini(&Variant::builtin("hand").unwrap()).unwrap_err();
        let text = err.to_string();
        for want in [
            "piece T (tycoon): betza \"B3\" slides at most 3 squares",
            "piece U (shogun): betza \"R3\"",
            "piece D (pard): betza \"AD\"",
            "piece O (onager): betza \"D\"",
            "drops of O (onager) must give check",
            "drops of H (hasty) must give check",
            "drops of P (soldier) may not go to a file",
            "drops of N (knight) are kept off some ranks (drop.in_zone = false)",
            "piece L (lance) may move unpromoted to a square where it can never move again",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert_eq!(err.refusals.len(), 9, "{text}");
    }

    /// Minishogi with every drop kept out of the promotion zone.
    fn minishogi_without_zone_drops() -> VariantSpec {
        let mut spec = VariantSpec::builtin("minishogi").unwrap();
        spec.name = Some("minishogi-no-zone-drops".into());
        for p in spec.pieces.iter_mut().flatten().filter(|p| !p.royal) {
            p.drop.get_or_insert_with(Default::default).in_zone = Some(false);
        }
        spec
    }

    #[test]
    fn a_drop_restriction_of_every_piece_becomes_a_drop_region() {
        let v = Variant::compile(minishogi_without_zone_drops()).unwrap();
        let out = to_fsf_ini(&v).unwrap();
        assert!(
            out.ini.contains("\nwhiteDropRegion = *1 *2 *3 *4\n"),
            "{}",
            out.ini
        );
        assert!(
            out.ini.contains("\nblackDropRegion = *2 *3 *4 *5\n"),
            "{}",
            out.ini
        );
    }

    #[test]
    fn rules_without_a_key_are_refused_and_arena_rules_noted() {
        let mut spec = VariantSpec::builtin("shogi").unwrap();
        spec.end.get_or_insert_with(Default::default).max_plies = Some(300);
        spec.match_rule = Some(MatchRule::ConsecutiveWins(2));
        for p in spec.pieces.iter_mut().flatten() {
            if p.letter == "N" {
                p.promotion = Some(PromotionMode::Forced);
            }
        }
        let err = to_fsf_ini(&Variant::compile(spec.clone()).unwrap()).unwrap_err();
        assert_eq!(err.refusals.len(), 2, "{err}");
        assert!(err.refusals[0].starts_with("piece N (knight) must promote"));
        assert!(err.refusals[1].starts_with("end.max_plies = 300"));
        spec.end.as_mut().unwrap().max_plies = Some(0);
        spec.pieces.as_mut().unwrap().retain(|p| p.letter != "N");
        spec.start = Some("l1sgkgs1l/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/L1SGKGS1L b - 1".into());
        let out = to_fsf_ini(&Variant::compile(spec).unwrap()).unwrap();
        assert!(out
            .ini
            .contains("# Not expressed: match = \"consecutive-wins:2\""));
    }

    #[test]
    fn fen_conversion() {
        assert_eq!(
            sfen_to_fsf_fen("4k/5/5/5/K4 w 2Pg12s 7"),
            "4k/5/5/5/K4[PPgssssssssssss] b - - 0 1"
        );
        assert_eq!(
            sfen_to_fsf_fen("+p4/5/5/5/4K b - 1"),
            "+p4/5/5/5/4K[] w - - 0 1"
        );
        assert_eq!(fsf_section_name("my variant:2"), "my-variant-2-export");
    }

    #[test]
    fn type_table_is_consistent() {
        for (i, t) in FSF_TYPES.iter().enumerate() {
            assert!(betza::parse(t.betza).is_ok(), "{}", t.name);
            assert!(FSF_TYPES[..i].iter().all(|u| u.name != t.name));
        }
        assert_eq!(FSF_TYPES[KING].name, "king");
        assert_eq!(FSF_TYPES[SHOGI_PAWN].name, "shogiPawn");
        assert_eq!(FSF_TYPES[SOLDIER].name, "soldier");
    }
}
