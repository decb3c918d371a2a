//! `Variant`: a compiled variant with the precomputed tables move generation reads.

use crate::betza::{self, MoveAtom, TwoLeg, MAX_HOPS};
use crate::bitset::SquareSet;
use crate::error::{Error, Result};
use crate::spec::{PieceSpec, VariantSpec};
use crate::types::{Color, Kind, Letter};
use std::path::Path;

/// Largest board side supported (squares are indexed by one byte).
pub const MAX_SIDE: u8 = 15;
/// Largest number of squares.
pub const MAX_SQUARES: usize = MAX_SIDE as usize * MAX_SIDE as usize;
/// Largest number of piece kinds, promoted forms included.
pub const MAX_KINDS: usize = 62;
/// Largest number of pieces of one kind (board and hands together, promoted included).
pub const MAX_HAND_COUNT: usize = 255;

/// Mode bits of a leap.
pub(crate) const MOVE: u8 = 1;
pub(crate) const CAPTURE: u8 = 2;

/// Whether a piece promotes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PromotionMode {
    /// No promoted form.
    None,
    /// May promote on a move into, out of or within the zone.
    Optional,
    /// Must promote on any move into, out of or within the zone.
    Forced,
    /// Turns over to its other side (promoted, then back) by itself, anywhere, on every move
    /// or on every capture (`Variant::flip_on_capture`). Set on both sides of the piece.
    Flip,
}

/// What the side to move gets when it has no legal move (stalemate), or when a repetition ends
/// the game.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StalemateValue {
    /// The stalemated side loses (shogi convention).
    Loss,
    /// The game is drawn.
    Draw,
    /// The stalemated side wins.
    Win,
}

/// A match rule for the arena and play.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MatchRule {
    /// One game is one match.
    Single,
    /// A match is won by winning this many games in a row (Hand shogi: 2).
    ConsecutiveWins(u32),
}

/// Everything known about one piece kind.
#[derive(Clone, Debug)]
pub struct KindInfo {
    /// Letter as in SFEN (uppercase, with its mark if any), without the `+`.
    pub letter: Letter,
    /// Whether this is a promoted form (`+letter`).
    pub promoted: bool,
    /// Name for humans.
    pub name: String,
    /// Movement in Betza notation.
    pub betza: String,
    /// Royal piece.
    pub royal: bool,
    /// The promoted kind, if this kind can promote.
    pub promotes_to: Option<Kind>,
    /// The kind it becomes in hand when captured (itself when unpromoted).
    pub demoted: Kind,
    /// Promotion mode.
    pub promotion: PromotionMode,
    /// Index in the hand, if pieces of this kind are held in hand.
    pub hand_index: Option<usize>,
    /// Drop restriction: no drop on a file already holding this many own unpromoted pieces of
    /// this kind (`Some(1)`: nifu); `None`: no limit.
    pub max_per_file: Option<u8>,
    /// Drop restriction: may not drop-mate.
    pub no_drop_mate: bool,
    /// Drop restriction: must drop with check.
    pub drop_must_check: bool,
    /// Whether this kind may be dropped at all.
    pub droppable: bool,
    /// Whether this kind has any sliding or hopping move.
    pub has_rays: bool,
    /// Two-step moves (Chu shogi's Lion power), from the owner's point of view.
    pub legs: Vec<TwoLeg>,
    /// A Lion for the Lion capture rules.
    pub lion: bool,
    /// Capturing this kind on a first step does not let a Lion take a protected Lion (Chu
    /// shogi's pawn and go-between).
    pub bridge_exempt: bool,
    /// Does not help its side to bare the opponent's king (`[end] bare_king_ignores`).
    pub bare_king_ignored: bool,
    /// Extra moves (Betza) while it stands on its owner's last rank.
    pub last_rank_betza: Option<String>,
    /// No move onto another file holding this many own pieces of the kind.
    pub move_max_per_file: Option<u8>,
    /// The kind the captor gets in hand when this one is captured (its unpromoted kind unless
    /// `captured_as` says otherwise); also the kind it counts as in material totals.
    pub captured_as: Kind,
}

/// A leap on the board: (file, rank) vector and its MOVE/CAPTURE modes.
type BoardLeap = ((i8, i8), u8);

/// A two-step move on the board: first step (file, rank), whether it captures, second step.
pub(crate) type BoardLeg = ((i8, i8), bool, (i8, i8));

/// One sliding direction of a piece: ranges per number of jumped pieces.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RayMove {
    /// Index into `Variant::dirs`.
    pub dir: u8,
    /// Largest number of jumped pieces any mode allows.
    pub max_hop: u8,
    /// Largest distance of the whole ray.
    pub max_range: u8,
    /// `move_range[k]`: the farthest empty square reachable after jumping `k` pieces (0: none).
    pub move_range: [u8; MAX_HOPS + 1],
    /// `cap_range[k]`: the farthest capture after jumping `k` pieces (0: none).
    pub cap_range: [u8; MAX_HOPS + 1],
}

/// Reverse ray attack data of one colour for one scan direction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayScan {
    /// Direction walked from the attacked square (opposite of the attack).
    pub dir: u8,
    /// Largest number of pieces an attack along it may jump.
    pub max_hop: u8,
}

/// A compiled variant.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Name (the config file stem for built-ins).
    pub name: String,
    /// The spec it was compiled from (extends resolved).
    pub spec: VariantSpec,
    /// Files (columns).
    pub files: u8,
    /// Ranks (rows).
    pub ranks: u8,
    /// Start position SFEN.
    pub start_sfen: String,
    /// Piece kinds; promoted forms follow the unpromoted kinds.
    pub kinds: Vec<KindInfo>,
    /// Kinds that can be held in hand, in hand order.
    pub hand_kinds: Vec<Kind>,
    /// Promotion zone depth.
    pub zone_depth: u8,
    /// Moves leaving an unpromoted piece immobile must promote (or are illegal).
    pub forbid_immobile_moves: bool,
    /// Captured pieces go to hand and can be dropped.
    pub drops: bool,
    /// Drops where the piece could not move are illegal.
    pub forbid_immobile_drops: bool,
    /// Result of having no legal move while not in check.
    pub stalemate: StalemateValue,
    /// Repetition count ending the game (0: none).
    pub repetition: u32,
    /// Result of a repetition (not a perpetual check) for the side to move when it occurs.
    pub repetition_result: StalemateValue,
    /// Perpetual check loses (otherwise the repetition is a plain draw).
    pub perpetual_check_loses: bool,
    /// Draw after this many plies (0: none).
    pub max_plies: u32,
    /// A side left with nothing but royal pieces loses (the bare-king rule).
    pub bare_king: bool,
    /// Match rule.
    pub match_rule: MatchRule,
    /// Whether any piece can jump over pieces on a line (cannons).
    pub has_hoppers: bool,
    /// Whether a side can hold several royal pieces (a promoted form is royal: Sho shogi's
    /// crown prince). A side loses with its last royal piece; only that one may not be left
    /// in check, while a side with two may leave either attacked.
    pub several_royals: bool,
    /// A piece with a friendly piece directly behind it moves (and attacks) as that piece
    /// (Annan shogi); promotion and its rules still follow its own kind.
    pub moves_from_behind: bool,
    /// Pieces with [`PromotionMode::Flip`] turn over on captures only (otherwise on every move).
    pub flip_on_capture: bool,
    /// Hand pieces with a promoted form may be dropped promoted side up.
    pub promoted_drops: bool,
    /// Royal pieces can be in hand and dropped.
    pub royal_drops: bool,
    /// A side whose royal pieces are all in hand may not capture or promote and gives no check.
    pub unarmed_until_royal: bool,
    /// Only moves entering the zone, or captures from inside it, may promote (Chu shogi);
    /// otherwise any move starting or ending in the zone.
    pub promotion_entering: bool,
    /// A move leaving an unpromoted piece with no further move may always promote.
    pub immobile_may_promote: bool,
    /// A Lion may not take a protected Lion two squares away (see [`crate::LionSpec`]).
    pub lion_protected: bool,
    /// A non-Lion may not take a Lion right after a Lion was taken by a non-Lion.
    pub lion_counter_strike: bool,
    /// Whether any piece has two-step moves.
    pub has_legs: bool,
    /// Whether any piece has extra moves on its last rank.
    pub has_last_rank_moves: bool,
    /// Whether any piece has a per-file limit on its moves.
    pub has_move_file_limits: bool,

    pub(crate) n: usize,
    /// Two-step moves per (colour, kind) as board vectors: first step, whether it captures,
    /// second step.
    pub(crate) legs: Vec<Vec<BoardLeg>>,
    /// Extra ray moves per (colour, kind) from a square on the owner's last rank.
    pub(crate) last_rank_rays: Vec<Vec<RayMove>>,
    /// Each colour's last rank (the far edge).
    pub(crate) last_rank: [SquareSet; 2],
    /// Board direction vectors (file step, rank step in square index terms), closed under negation.
    pub(crate) dirs: Vec<(i8, i8)>,
    pub(crate) dir_opposite: Vec<u8>,
    /// `ray_start[sq * ndirs + d] .. +ray_len[..]` into `ray_squares`.
    pub(crate) ray_start: Vec<u32>,
    pub(crate) ray_len: Vec<u8>,
    pub(crate) ray_squares: Vec<u8>,
    /// Leaps per (colour, kind, square): ranges into `leaps` of (to, mode).
    pub(crate) leap_index: Vec<(u32, u32)>,
    pub(crate) leaps: Vec<(u8, u8)>,
    /// Ray moves per (colour, kind).
    pub(crate) rays: Vec<Vec<RayMove>>,
    /// Reverse leap attacks per (attacking colour, target): ranges into `leap_attackers`.
    pub(crate) leap_attack_index: Vec<(u32, u32)>,
    pub(crate) leap_attackers: Vec<(u8, u64)>,
    /// `ray_attack[((c * kinds + k) * ndirs + scan_dir)][hops]`: capture range of kind k of
    /// colour c towards a square found by walking `scan_dir` from it.
    pub(crate) ray_attack: Vec<[u8; MAX_HOPS + 1]>,
    /// Per attacking colour: the scan directions worth walking.
    pub(crate) ray_scans: [Vec<RayScan>; 2],
    /// Per (colour, kind, square): no move at all from there on an empty board.
    pub(crate) immobile: Vec<bool>,
    /// Per colour: squares where some kind could never move (bounds the dead pieces).
    pub(crate) dead_squares: [usize; 2],
    /// Pieces of each unpromoted kind in the start position (board and hands): no legal
    /// position has more. Empty while the start position itself is being checked.
    pub(crate) max_material: Vec<usize>,
    /// Promotion zone per colour.
    pub(crate) zone: [SquareSet; 2],
    /// Per (colour, hand index): squares where a drop is allowed by rank rules; then, with
    /// promoted drops, the same for dropping the promoted side.
    pub(crate) drop_squares: Vec<SquareSet>,
    /// Per file: its squares.
    pub(crate) file_squares: Vec<SquareSet>,
    /// Per (colour, hand index, target): squares from which a leap of that kind attacks target.
    pub(crate) leap_checks: Vec<SquareSet>,
    /// All squares of the board.
    pub(crate) all_squares: SquareSet,
    /// Zobrist keys: piece code (0..128) per square.
    pub(crate) z_board: Vec<u64>,
    /// Zobrist keys per (colour, hand index, count).
    pub(crate) z_hand: Vec<u64>,
    pub(crate) z_side: u64,
}

impl Variant {
    /// Loads and compiles a variant file (resolving `extends`).
    pub fn load(path: &Path) -> Result<Variant> {
        let spec = VariantSpec::load(path)?;
        Variant::compile_named(spec, &path.display().to_string())
    }

    /// Compiles a built-in variant by name.
    pub fn builtin(name: &str) -> Result<Variant> {
        let spec = VariantSpec::builtin(name)?;
        Variant::compile_named(spec, &format!("<built-in {name}>"))
    }

    /// Compiles a spec (errors name the variant).
    pub fn compile(spec: VariantSpec) -> Result<Variant> {
        let label = spec.name.clone().unwrap_or_else(|| "<variant>".into());
        Variant::compile_named(spec, &label)
    }

    /// Compiles a spec; `file` names the source in errors.
    pub fn compile_named(spec: VariantSpec, file: &str) -> Result<Variant> {
        Compiler { file }.compile(spec)
    }

    /// Number of squares.
    #[inline(always)]
    pub fn num_squares(&self) -> usize {
        self.n
    }

    /// Number of piece kinds (promoted forms included).
    #[inline(always)]
    pub fn num_kinds(&self) -> usize {
        self.kinds.len()
    }

    /// Square index of (x, y): x = 0 is the leftmost file in SFEN (the highest file number),
    /// y = 0 is rank `a` (the top, gote's back rank).
    #[inline(always)]
    pub fn square(&self, x: usize, y: usize) -> usize {
        y * self.files as usize + x
    }

    /// (x, y) of a square index.
    #[inline(always)]
    pub fn coords(&self, sq: usize) -> (usize, usize) {
        (sq % self.files as usize, sq / self.files as usize)
    }

    /// USI file number (1 = rightmost from sente's view) of a square.
    pub fn file_number(&self, sq: usize) -> usize {
        self.files as usize - self.coords(sq).0
    }

    /// Whether the square is in `color`'s promotion zone.
    #[inline(always)]
    pub fn in_zone(&self, color: Color, sq: usize) -> bool {
        self.zone[color.index()].contains(sq)
    }

    /// The kind with this plain letter (uppercase or lowercase), unpromoted or promoted.
    pub fn kind_by_letter(&self, letter: char, promoted: bool) -> Option<Kind> {
        self.kind_by(Letter::plain(letter), promoted)
    }

    /// The kind with this letter (and mark), unpromoted or promoted.
    pub fn kind_by(&self, letter: Letter, promoted: bool) -> Option<Kind> {
        self.kinds
            .iter()
            .position(|k| k.letter == letter && k.promoted == promoted)
            .map(|k| k as Kind)
    }

    /// The unpromoted kind named by a config token such as `"P"` or `"N'"`.
    pub fn base_kind_named(&self, token: &str) -> Option<Kind> {
        let (letter, _) = Letter::parse(token)?;
        self.kind_by(letter, false)
    }

    /// The SFEN token of a kind (`P`, `+P`, `N'`) in sente's case.
    pub fn kind_token(&self, kind: Kind) -> String {
        self.kind_token_for(Color::Sente, kind)
    }

    /// The SFEN token of a kind in one side's case (`+p` for gote).
    pub fn kind_token_for(&self, color: Color, kind: Kind) -> String {
        let k = &self.kinds[kind as usize];
        let l = k.letter.cased(color);
        if k.promoted {
            format!("+{l}")
        } else {
            l
        }
    }

    #[inline(always)]
    pub(crate) fn ck(&self, c: Color, k: Kind) -> usize {
        c.index() * self.kinds.len() + k as usize
    }

    #[inline(always)]
    pub(crate) fn ray(&self, sq: usize, dir: usize) -> &[u8] {
        let i = sq * self.dirs.len() + dir;
        let s = self.ray_start[i] as usize;
        &self.ray_squares[s..s + self.ray_len[i] as usize]
    }

    #[inline(always)]
    pub(crate) fn leaps_of(&self, c: Color, k: Kind, sq: usize) -> &[(u8, u8)] {
        let (s, e) = self.leap_index[self.ck(c, k) * self.n + sq];
        &self.leaps[s as usize..e as usize]
    }

    /// Two-step moves of kind `k` for colour `c`, as board vectors.
    /// Extra rays of kind `k` for colour `c` from a square on `c`'s last rank.
    #[inline(always)]
    pub(crate) fn last_rank_rays_of(&self, c: Color, k: Kind) -> &[RayMove] {
        &self.last_rank_rays[self.ck(c, k)]
    }

    #[inline(always)]
    pub(crate) fn legs_of(&self, c: Color, k: Kind) -> &[BoardLeg] {
        &self.legs[self.ck(c, k)]
    }

    /// The kind a piece of kind `k` turns into when it flips, if it is a flipping piece.
    #[inline(always)]
    pub fn flips_to(&self, k: Kind) -> Option<Kind> {
        let info = &self.kinds[k as usize];
        match (info.promotion, info.promoted) {
            (PromotionMode::Flip, false) => info.promotes_to,
            (PromotionMode::Flip, true) => Some(info.demoted),
            _ => None,
        }
    }

    /// The hand index a drop of kind `k` takes from: its own, or its unpromoted side's when
    /// it is dropped promoted side up.
    #[inline(always)]
    pub fn hand_index_of(&self, k: Kind) -> Option<usize> {
        self.kinds[self.kinds[k as usize].demoted as usize].hand_index
    }

    #[inline(always)]
    pub(crate) fn is_immobile(&self, c: Color, k: Kind, sq: usize) -> bool {
        self.immobile[self.ck(c, k) * self.n + sq]
    }

    /// Whether pieces of kind `k` never leave their file by moving (shogi's pawn): only for such
    /// kinds do more unpromoted ones on a file than `max_per_file` (nifu: two) prove a position
    /// impossible.
    pub(crate) fn keeps_file(&self, k: Kind) -> bool {
        // A piece that can borrow any kind's moves can leave its file (Annan shogi's pawns).
        if self.moves_from_behind || !self.last_rank_rays[self.ck(Color::Sente, k)].is_empty() {
            return false;
        }
        let files = self.files as usize;
        let c = Color::Sente;
        let rays = &self.rays[self.ck(c, k)];
        rays.iter().all(|r| self.dirs[r.dir as usize].0 == 0)
            && (0..self.n).all(|sq| {
                self.leaps_of(c, k, sq)
                    .iter()
                    .all(|&(to, _)| to as usize % files == sq % files)
            })
    }

    /// Zobrist key of a piece code on a square.
    #[inline(always)]
    pub(crate) fn zb(&self, sq: usize, code: u8) -> u64 {
        self.z_board[sq * 128 + code as usize]
    }

    /// Zobrist key of holding `count` pieces of hand index `h`.
    #[inline(always)]
    pub(crate) fn zh(&self, c: Color, h: usize, count: u8) -> u64 {
        self.z_hand[(c.index() * self.hand_kinds.len() + h) * (MAX_HAND_COUNT + 1) + count as usize]
    }

    /// A human-readable summary of the pieces (used by `trainer check`).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{}: {}x{} board, {} piece kinds ({} in hand), zone {} ranks, drops {}",
            self.name,
            self.files,
            self.ranks,
            self.kinds.len(),
            self.hand_kinds.len(),
            self.zone_depth,
            if self.drops { "on" } else { "off" }
        );
        for k in &self.kinds {
            s.push_str(&format!(
                "\n  {:<3} {:<16} {}",
                if k.promoted {
                    format!("+{}", k.letter)
                } else {
                    k.letter.to_string()
                },
                k.name,
                k.betza
            ));
        }
        s
    }
}

struct Compiler<'a> {
    file: &'a str,
}

impl Compiler<'_> {
    fn err(&self, key: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::config(self.file, key, reason)
    }

    fn compile(&self, spec: VariantSpec) -> Result<Variant> {
        let files = spec.files.ok_or_else(|| self.err("files", "missing"))?;
        let ranks = spec.ranks.ok_or_else(|| self.err("ranks", "missing"))?;
        if !(1..=MAX_SIDE).contains(&files) {
            return Err(self.err("files", format!("must be 1 to {MAX_SIDE}, got {files}")));
        }
        if !(1..=MAX_SIDE).contains(&ranks) {
            return Err(self.err("ranks", format!("must be 1 to {MAX_SIDE}, got {ranks}")));
        }
        let start = spec
            .start
            .clone()
            .ok_or_else(|| self.err("start", "missing"))?;
        let pieces = spec.pieces.clone().unwrap_or_default();
        if pieces.is_empty() {
            return Err(self.err("pieces", "no pieces defined"));
        }
        let prom = spec.promotion.clone().unwrap_or_default();
        let drops = spec.drops.clone().unwrap_or_default();
        let end = spec.end.clone().unwrap_or_default();
        let zone_depth = prom.zone_depth.unwrap_or(ranks / 3);
        if zone_depth > ranks {
            return Err(self.err(
                "promotion.zone_depth",
                format!("{zone_depth} is deeper than the board ({ranks} ranks)"),
            ));
        }
        let stalemate = match end.stalemate.as_deref().unwrap_or("loss") {
            "loss" => StalemateValue::Loss,
            "draw" => StalemateValue::Draw,
            "win" => StalemateValue::Win,
            other => {
                return Err(self.err(
                    "end.stalemate",
                    format!("expected loss, draw or win, got {other:?}"),
                ))
            }
        };
        let repetition_result = match end.repetition_result.as_deref().unwrap_or("draw") {
            "loss" => StalemateValue::Loss,
            "draw" => StalemateValue::Draw,
            "win" => StalemateValue::Win,
            other => {
                return Err(self.err(
                    "end.repetition_result",
                    format!("expected draw, win or loss, got {other:?}"),
                ))
            }
        };
        let perpetual_check_loses = match end.perpetual_check.as_deref().unwrap_or("loss") {
            "loss" => true,
            "draw" => false,
            other => {
                return Err(self.err(
                    "end.perpetual_check",
                    format!("expected loss or draw, got {other:?}"),
                ))
            }
        };
        let repetition = end.repetition.unwrap_or(4);
        if repetition == 1 {
            return Err(self.err("end.repetition", "must be 0 (off) or at least 2"));
        }
        let match_rule = parse_match(spec.match_rule.as_deref().unwrap_or("single"))
            .map_err(|r| self.err("match", r))?;

        // Kinds: unpromoted in declaration order, then promoted forms.
        let mut kinds: Vec<KindInfo> = Vec::new();
        let mut atoms: Vec<Vec<MoveAtom>> = Vec::new();
        // Extra moves on the last rank, per kind.
        let mut extras: Vec<Vec<MoveAtom>> = Vec::new();
        let mut promoted_specs = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            let key = |k: &str| format!("pieces[{i}].{k}");
            let letter = self.piece_letter(p, i)?;
            if kinds.iter().any(|k| k.letter == letter) {
                return Err(self.err(
                    key("letter"),
                    format!("letter {:?} used twice", letter.to_string()),
                ));
            }
            let (a, legs) =
                betza::parse_all(&p.betza).map_err(|e| self.err(key("betza"), e.to_string()))?;
            self.check_legs(&a, &legs, &key("betza"))?;
            if !legs.is_empty() && p.promoted.is_some() {
                return Err(self.err(
                    key("promoted"),
                    "a piece with two-step moves cannot promote (those moves never promote)",
                ));
            }
            let promotion = match (p.promotion.as_deref(), &p.promoted) {
                (None, None) => PromotionMode::None,
                (None | Some("optional"), Some(_)) => PromotionMode::Optional,
                (Some("forced"), Some(_)) => PromotionMode::Forced,
                (Some("flip"), Some(_)) => PromotionMode::Flip,
                (Some("none"), _) => PromotionMode::None,
                (Some(m @ ("optional" | "forced" | "flip")), None) => {
                    return Err(self.err(key("promotion"), format!("{m:?} needs a `promoted` form")))
                }
                (Some(other), _) => {
                    return Err(self.err(
                        key("promotion"),
                        format!("expected optional, forced, flip or none, got {other:?}"),
                    ))
                }
            };
            if p.royal && p.promoted.is_some() {
                return Err(self.err(key("promoted"), "a royal piece cannot promote"));
            }
            let d = p.drop.clone().unwrap_or_default();
            if p.royal && d != Default::default() {
                return Err(self.err(key("drop"), "a royal piece is never in hand"));
            }
            if let Some(r) = &d.forbidden_ranks {
                if let Some(bad) = r.iter().find(|&&r| r == 0 || r > ranks) {
                    return Err(self.err(
                        key("drop.forbidden_ranks"),
                        format!("rank {bad} is not between 1 and {ranks}"),
                    ));
                }
            }
            let max_per_file = match (d.nifu, d.max_per_file) {
                (_, Some(0)) => {
                    return Err(self.err(
                        key("drop.max_per_file"),
                        "must be at least 1 (use drop.allowed = false to forbid drops)",
                    ))
                }
                (Some(true), Some(n)) if n != 1 => {
                    return Err(self.err(
                        key("drop.max_per_file"),
                        format!("nifu = true means max_per_file = 1, got {n}: give one of them"),
                    ))
                }
                (Some(true), _) => Some(1),
                (_, n) => n,
            };
            let kind_has_rays = a.iter().any(|m| m.range != 1);
            let extra = match &p.last_rank_betza {
                None => Vec::new(),
                Some(b) => {
                    let (x, legs) = betza::parse_all(b)
                        .map_err(|e| self.err(key("last_rank_betza"), e.to_string()))?;
                    if !legs.is_empty() {
                        return Err(self.err(
                            key("last_rank_betza"),
                            "two-step moves are not supported here",
                        ));
                    }
                    x
                }
            };
            if p.move_max_per_file == Some(0) {
                return Err(self.err(key("move_max_per_file"), "must be at least 1"));
            }
            extras.push(extra);
            kinds.push(KindInfo {
                letter,
                promoted: false,
                name: p.name.clone().unwrap_or_else(|| letter.to_string()),
                betza: p.betza.clone(),
                royal: p.royal,
                promotes_to: None,
                demoted: kinds.len() as Kind,
                promotion,
                hand_index: None,
                max_per_file,
                no_drop_mate: d.no_mate.unwrap_or(false),
                drop_must_check: d.must_check.unwrap_or(false),
                droppable: d.allowed.unwrap_or(true),
                has_rays: kind_has_rays,
                legs,
                lion: p.lion,
                bridge_exempt: false,
                bare_king_ignored: false,
                last_rank_betza: p.last_rank_betza.clone(),
                move_max_per_file: p.move_max_per_file,
                captured_as: kinds.len() as Kind,
            });
            atoms.push(a);
            promoted_specs.push((i, d));
        }
        let base_count = kinds.len();
        for i in 0..base_count {
            let p = &pieces[i];
            if let (Some(pr), true) = (&p.promoted, kinds[i].promotion != PromotionMode::None) {
                let pkey = format!("pieces[{i}].promoted.betza");
                let (a, legs) =
                    betza::parse_all(&pr.betza).map_err(|e| self.err(&pkey, e.to_string()))?;
                self.check_legs(&a, &legs, &pkey)?;
                let idx = kinds.len() as Kind;
                kinds[i].promotes_to = Some(idx);
                let letter = kinds[i].letter;
                kinds.push(KindInfo {
                    letter,
                    promoted: true,
                    name: pr.name.clone().unwrap_or_else(|| format!("+{letter}")),
                    betza: pr.betza.clone(),
                    royal: pr.royal,
                    promotes_to: None,
                    demoted: i as Kind,
                    // A flipping piece flips back.
                    promotion: match kinds[i].promotion {
                        PromotionMode::Flip => PromotionMode::Flip,
                        _ => PromotionMode::None,
                    },
                    hand_index: None,
                    max_per_file: None,
                    no_drop_mate: false,
                    drop_must_check: false,
                    droppable: false,
                    has_rays: a.iter().any(|m| m.range != 1),
                    legs,
                    lion: pr.lion,
                    bridge_exempt: false,
                    bare_king_ignored: false,
                    last_rank_betza: None,
                    move_max_per_file: None,
                    captured_as: i as Kind,
                });
                atoms.push(a);
                extras.push(Vec::new());
            }
        }
        if kinds.len() > MAX_KINDS {
            return Err(self.err(
                "pieces",
                format!(
                    "{} kinds with promoted forms; at most {MAX_KINDS}",
                    kinds.len()
                ),
            ));
        }
        for i in 0..base_count {
            let Some(letter) = &pieces[i].captured_as else {
                continue;
            };
            let key = format!("pieces[{i}].captured_as");
            let target = Letter::parse(letter)
                .and_then(|(l, _)| kinds[..base_count].iter().position(|k| k.letter == l))
                .ok_or_else(|| {
                    self.err(&key, format!("{letter:?} is not the letter of a piece"))
                })?;
            if kinds[target].royal || pieces[target].captured_as.is_some() || target == i {
                return Err(self.err(
                    &key,
                    "must name another piece that is not royal and keeps its own kind in hand",
                ));
            }
            kinds[i].captured_as = target as Kind;
        }
        for i in base_count..kinds.len() {
            kinds[i].captured_as = kinds[kinds[i].demoted as usize].captured_as;
        }
        let drops_on = drops.enabled.unwrap_or(true);
        let mut hand_kinds = Vec::new();
        if drops_on {
            let royal_drops = drops.royal.unwrap_or(false);
            for (i, k) in kinds.iter_mut().enumerate().take(base_count) {
                // A piece that goes to hand as another kind has no hand slot of its own.
                if (!k.royal || royal_drops) && k.captured_as as usize == i {
                    k.hand_index = Some(hand_kinds.len());
                    hand_kinds.push(i as Kind);
                }
            }
        }
        let has_hoppers = atoms.iter().flatten().any(|a| a.hops != 1);
        let several_royals = kinds.iter().any(|k| k.royal && k.promoted);
        let moves_from_behind = match spec.moves_from.as_deref().unwrap_or("own") {
            "own" => false,
            "behind" => true,
            other => {
                return Err(self.err(
                    "moves_from",
                    format!("expected own or behind, got {other:?}"),
                ))
            }
        };
        let has_legs = kinds.iter().any(|k| !k.legs.is_empty());
        let has_last_rank_moves = kinds.iter().any(|k| k.last_rank_betza.is_some());
        let has_move_file_limits = kinds.iter().any(|k| k.move_max_per_file.is_some());
        if has_last_rank_moves && moves_from_behind {
            return Err(self.err(
                "moves_from",
                "borrowed moves and last-rank moves cannot be combined",
            ));
        }
        if has_legs && moves_from_behind {
            return Err(self.err(
                "moves_from",
                "borrowed moves and two-step moves cannot be combined",
            ));
        }
        let promotion_entering = match prom.moves.as_deref().unwrap_or("touching") {
            "touching" => false,
            "entering" => true,
            other => {
                return Err(self.err(
                    "promotion.moves",
                    format!("expected touching or entering, got {other:?}"),
                ))
            }
        };
        let lions = spec.lions.clone().unwrap_or_default();
        for (i, letter) in lions.bridge_exempt.iter().flatten().enumerate() {
            let found = Letter::parse(letter)
                .and_then(|(l, _)| kinds.iter_mut().find(|k| !k.promoted && k.letter == l));
            match found {
                Some(k) => k.bridge_exempt = true,
                None => {
                    return Err(self.err(
                        format!("lions.bridge_exempt[{i}]"),
                        format!("{letter:?} is not the letter of a piece"),
                    ))
                }
            }
        }
        for (i, letter) in end.bare_king_ignores.iter().flatten().enumerate() {
            let key = format!("end.bare_king_ignores[{i}]");
            if end.bare_king != Some(true) {
                return Err(self.err(key, "needs end.bare_king = true"));
            }
            let found = Letter::parse(letter)
                .and_then(|(l, _)| kinds.iter_mut().find(|k| !k.promoted && k.letter == l));
            match found {
                Some(k) if !k.royal => k.bare_king_ignored = true,
                Some(_) => return Err(self.err(key, format!("{letter:?} is a royal piece"))),
                None => {
                    return Err(self.err(key, format!("{letter:?} is not the letter of a piece")))
                }
            }
        }
        let lion_protected = lions.protected.unwrap_or(false);
        let lion_counter_strike = lions.counter_strike.unwrap_or(false);
        if (lion_protected || lion_counter_strike) && !kinds.iter().any(|k| k.lion) {
            return Err(self.err("lions", "Lion rules without any piece marked lion = true"));
        }
        let flip_on_capture = match prom.flip_on.as_deref().unwrap_or("move") {
            "move" => false,
            "capture" => true,
            other => {
                return Err(self.err(
                    "promotion.flip_on",
                    format!("expected move or capture, got {other:?}"),
                ))
            }
        };

        let n = files as usize * ranks as usize;
        let mut v = Variant {
            name: spec.name.clone().unwrap_or_else(|| "variant".into()),
            spec: spec.clone(),
            files,
            ranks,
            start_sfen: start.clone(),
            kinds,
            hand_kinds,
            zone_depth,
            forbid_immobile_moves: prom.forbid_immobile.unwrap_or(true),
            drops: drops_on,
            forbid_immobile_drops: drops.forbid_immobile.unwrap_or(true),
            stalemate,
            repetition,
            repetition_result,
            perpetual_check_loses,
            max_plies: end.max_plies.unwrap_or(0),
            bare_king: end.bare_king.unwrap_or(false),
            match_rule,
            has_hoppers,
            several_royals,
            moves_from_behind,
            flip_on_capture,
            promoted_drops: drops.promoted.unwrap_or(false),
            royal_drops: drops.royal.unwrap_or(false),
            unarmed_until_royal: drops.unarmed_until_royal.unwrap_or(false),
            promotion_entering,
            immobile_may_promote: prom.immobile_may_promote.unwrap_or(false),
            lion_protected,
            lion_counter_strike,
            has_legs,
            has_last_rank_moves,
            has_move_file_limits,
            n,
            legs: Vec::new(),
            last_rank_rays: Vec::new(),
            last_rank: [SquareSet::EMPTY; 2],
            dirs: Vec::new(),
            dir_opposite: Vec::new(),
            ray_start: Vec::new(),
            ray_len: Vec::new(),
            ray_squares: Vec::new(),
            leap_index: Vec::new(),
            leaps: Vec::new(),
            rays: Vec::new(),
            leap_attack_index: Vec::new(),
            leap_attackers: Vec::new(),
            ray_attack: Vec::new(),
            ray_scans: [Vec::new(), Vec::new()],
            immobile: Vec::new(),
            dead_squares: [0; 2],
            max_material: Vec::new(),
            zone: [SquareSet::EMPTY; 2],
            drop_squares: Vec::new(),
            file_squares: Vec::new(),
            leap_checks: Vec::new(),
            all_squares: SquareSet::EMPTY,
            z_board: Vec::new(),
            z_hand: Vec::new(),
            z_side: 0,
        };
        build_tables(&mut v, &atoms, &extras);
        self.build_drop_squares(&mut v, &promoted_specs)?;

        // The start position must parse; its material bounds every other position's.
        let start_pos = crate::Position::from_sfen_with(std::sync::Arc::new(v.clone()), &start)
            .map_err(|e| self.err("start", e.to_string()))?;
        v.max_material = start_pos.material();
        Ok(v)
    }

    /// Two-step moves must end where a plain leap of the piece could capture (or back on the
    /// start square), so that the attack tables, built from single moves, stay exact.
    fn check_legs(&self, atoms: &[MoveAtom], legs: &[TwoLeg], key: &str) -> Result<()> {
        for l in legs {
            let (dx, dy) = (l.dx1 + l.dx2, l.dy1 + l.dy2);
            let leaps = atoms.iter().any(|a| {
                a.range == 1 && a.can_capture && a.hops & 1 != 0 && (a.dx, a.dy) == (dx, dy)
            });
            if (dx, dy) != (0, 0) && !leaps {
                return Err(self.err(
                    key,
                    format!(
                        "a two-step move ends at ({dx}, {dy}), where the piece has no capturing \
                         leap; add that leap (the Lion is KNADcaKmabK)"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn piece_letter(&self, p: &PieceSpec, i: usize) -> Result<Letter> {
        match Letter::parse(&p.letter) {
            Some((l, _)) => Ok(l),
            None => Err(self.err(
                format!("pieces[{i}].letter"),
                format!(
                    "must be one ASCII letter, optionally followed by ' or !, got {:?}",
                    p.letter
                ),
            )),
        }
    }

    fn build_drop_squares(
        &self,
        v: &mut Variant,
        specs: &[(usize, crate::spec::PieceDropSpec)],
    ) -> Result<()> {
        let h = v.hand_kinds.len();
        v.drop_squares = vec![SquareSet::EMPTY; 4 * h];
        for (c, promoted) in Color::ALL.into_iter().flat_map(|c| [(c, false), (c, true)]) {
            for (hi, &base) in v.hand_kinds.clone().iter().enumerate() {
                let d = &specs[base as usize].1;
                let info = &v.kinds[base as usize];
                // The kind that lands: the hand piece, or its promoted side.
                let kind = match (promoted, info.promotes_to) {
                    (false, _) => base,
                    (true, Some(p)) if v.promoted_drops => p,
                    (true, _) => continue,
                };
                if !info.droppable {
                    continue;
                }
                let mut set = SquareSet::EMPTY;
                for sq in 0..v.n {
                    let (_, y) = v.coords(sq);
                    // Rank counted from the owner's far edge, 1 = last rank.
                    let far = match c {
                        Color::Sente => y + 1,
                        Color::Gote => v.ranks as usize - y,
                    };
                    if let Some(r) = &d.forbidden_ranks {
                        if r.iter().any(|&r| r as usize == far) {
                            continue;
                        }
                    }
                    if d.in_zone == Some(false) && v.in_zone(c, sq) {
                        continue;
                    }
                    if v.forbid_immobile_drops && v.is_immobile(c, kind, sq) {
                        continue;
                    }
                    set.insert(sq);
                }
                v.drop_squares[(2 * usize::from(promoted) + c.index()) * h + hi] = set;
            }
        }
        Ok(())
    }
}

fn parse_match(s: &str) -> std::result::Result<MatchRule, String> {
    if s == "single" {
        return Ok(MatchRule::Single);
    }
    if let Some(n) = s.strip_prefix("consecutive-wins:") {
        return match n.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(MatchRule::ConsecutiveWins(n)),
            _ => Err(format!("bad count in {s:?}")),
        };
    }
    Err(format!("expected single or consecutive-wins:N, got {s:?}"))
}

/// Board vector of a piece-relative step for a colour: sente faces rank a (y decreasing).
fn board_vec(c: Color, dx: i8, dy: i8) -> (i8, i8) {
    match c {
        Color::Sente => (dx, -dy),
        Color::Gote => (-dx, dy),
    }
}

/// A kind's atoms for colour `c` as rays merged per direction and leaps merged per vector
/// (minus what a ray already gives at distance one).
fn merge_moves(dirs: &[(i8, i8)], c: Color, katoms: &[MoveAtom]) -> (Vec<RayMove>, Vec<BoardLeap>) {
    // Rays merged per direction.
    let mut rays: Vec<RayMove> = Vec::new();
    for a in katoms.iter().filter(|a| a.range != 1) {
        let bv = board_vec(c, a.dx, a.dy);
        let d = dirs.iter().position(|&x| x == bv).unwrap() as u8;
        let r = match rays.iter_mut().find(|r| r.dir == d) {
            Some(r) => r,
            None => {
                rays.push(RayMove {
                    dir: d,
                    ..Default::default()
                });
                rays.last_mut().unwrap()
            }
        };
        let range = if a.range == 0 { u8::MAX } else { a.range };
        for h in 0..=MAX_HOPS {
            if a.hops >> h & 1 != 0 {
                if a.can_move {
                    r.move_range[h] = r.move_range[h].max(range);
                }
                if a.can_capture {
                    r.cap_range[h] = r.cap_range[h].max(range);
                }
                r.max_hop = r.max_hop.max(h as u8);
                r.max_range = r.max_range.max(range);
            }
        }
    }
    // Leaps merged per vector, minus what a ray already gives at distance one.
    let mut leaps: Vec<BoardLeap> = Vec::new();
    for a in katoms.iter().filter(|a| a.range == 1) {
        let bv = board_vec(c, a.dx, a.dy);
        let mut mode = 0;
        if a.can_move && a.hops & 1 != 0 {
            mode |= MOVE;
        }
        if a.can_capture && a.hops & 1 != 0 {
            mode |= CAPTURE;
        }
        if let Some(r) = rays.iter().find(|r| dirs[r.dir as usize] == bv) {
            if r.move_range[0] >= 1 {
                mode &= !MOVE;
            }
            if r.cap_range[0] >= 1 {
                mode &= !CAPTURE;
            }
        }
        match leaps.iter_mut().find(|l| l.0 == bv) {
            Some(l) => l.1 |= mode,
            None => leaps.push((bv, mode)),
        }
    }
    leaps.retain(|l| l.1 != 0);
    (rays, leaps)
}

fn build_tables(v: &mut Variant, atoms: &[Vec<MoveAtom>], extras: &[Vec<MoveAtom>]) {
    let n = v.n;
    let files = v.files as i32;
    let ranks = v.ranks as i32;
    let nk = v.kinds.len();
    // Directions of every riding atom, for both colours, closed under negation.
    let mut dirs: Vec<(i8, i8)> = Vec::new();
    for a in atoms
        .iter()
        .chain(extras)
        .flatten()
        .filter(|a| a.range != 1)
    {
        for c in Color::ALL {
            let d = board_vec(c, a.dx, a.dy);
            for d in [d, (-d.0, -d.1)] {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    let nd = dirs.len();
    v.dir_opposite = dirs
        .iter()
        .map(|&(x, y)| dirs.iter().position(|&d| d == (-x, -y)).unwrap() as u8)
        .collect();
    let on = |x: i32, y: i32| x >= 0 && y >= 0 && x < files && y < ranks;
    v.ray_start = vec![0; n * nd];
    v.ray_len = vec![0; n * nd];
    for sq in 0..n {
        let (x0, y0) = v.coords(sq);
        for (d, &(dx, dy)) in dirs.iter().enumerate() {
            v.ray_start[sq * nd + d] = v.ray_squares.len() as u32;
            let (mut x, mut y) = (x0 as i32 + dx as i32, y0 as i32 + dy as i32);
            let mut len = 0;
            while on(x, y) {
                v.ray_squares.push((y * files + x) as u8);
                len += 1;
                x += dx as i32;
                y += dy as i32;
            }
            v.ray_len[sq * nd + d] = len;
        }
    }
    v.dirs = dirs;
    v.legs = Color::ALL
        .iter()
        .flat_map(|&c| {
            v.kinds
                .iter()
                .map(move |k| {
                    k.legs
                        .iter()
                        .map(|l| {
                            (
                                board_vec(c, l.dx1, l.dy1),
                                l.first_captures,
                                board_vec(c, l.dx2, l.dy2),
                            )
                        })
                        .collect()
                })
                .collect::<Vec<_>>()
        })
        .collect();

    v.leap_index = vec![(0, 0); 2 * nk * n];
    v.rays = vec![Vec::new(); 2 * nk];
    v.immobile = vec![false; 2 * nk * n];
    v.ray_attack = vec![[0; MAX_HOPS + 1]; 2 * nk * nd];
    let mut leap_att: Vec<Vec<(u8, u64)>> = vec![Vec::new(); 2 * n];
    v.last_rank_rays = vec![Vec::new(); 2 * nk];
    for c in Color::ALL {
        let mut last = SquareSet::EMPTY;
        for x in 0..v.files as usize {
            let y = match c {
                Color::Sente => 0,
                Color::Gote => v.ranks as usize - 1,
            };
            last.insert(v.square(x, y));
        }
        v.last_rank[c.index()] = last;
    }
    for c in Color::ALL {
        for (k, katoms) in atoms.iter().enumerate() {
            let ck = c.index() * nk + k;
            let (rays, leaps) = merge_moves(&v.dirs, c, katoms);
            let (extra_rays, extra_leaps) = merge_moves(&v.dirs, c, &extras[k]);
            for sq in 0..n {
                let (x, y) = v.coords(sq);
                let start = v.leaps.len() as u32;
                let on_last = v.last_rank[c.index()].contains(sq);
                let here = leaps.iter().chain(extra_leaps.iter().filter(|_| on_last));
                for &((dx, dy), mode) in here {
                    let (tx, ty) = (x as i32 + dx as i32, y as i32 + dy as i32);
                    if on(tx, ty) {
                        let to = (ty * files + tx) as usize;
                        // An extra leap to a square a plain one reaches adds its modes.
                        match v.leaps[start as usize..]
                            .iter_mut()
                            .find(|l| l.0 as usize == to)
                        {
                            Some(l) => l.1 |= mode,
                            None => v.leaps.push((to as u8, mode)),
                        }
                        if mode & CAPTURE != 0 {
                            let e = &mut leap_att[c.index() * n + to];
                            match e.iter_mut().find(|e| e.0 as usize == sq) {
                                Some(e) => e.1 |= 1u64 << k,
                                None => e.push((sq as u8, 1u64 << k)),
                            }
                        }
                    }
                }
                v.leap_index[ck * n + sq] = (start, v.leaps.len() as u32);
                let extra = extra_rays.iter().filter(|_| on_last);
                let ray_moves = rays
                    .iter()
                    .chain(extra)
                    .any(|r| v.ray_len[sq * nd + r.dir as usize] > 0);
                v.immobile[ck * n + sq] = v.leaps.len() as u32 == start && !ray_moves;
            }
            v.last_rank_rays[ck] = extra_rays;
            for r in &rays {
                let scan = v.dir_opposite[r.dir as usize] as usize;
                v.ray_attack[ck * nd + scan] = r.cap_range;
            }
            v.rays[ck] = rays;
        }
    }
    for c in Color::ALL {
        v.dead_squares[c.index()] = (0..n)
            .filter(|&sq| (0..nk).any(|k| v.immobile[(c.index() * nk + k) * n + sq]))
            .count();
    }
    for c in Color::ALL {
        let mut scans = Vec::new();
        for d in 0..nd {
            let mut max_hop = None;
            for k in 0..nk {
                let r = v.ray_attack[(c.index() * nk + k) * nd + d];
                for (h, &range) in r.iter().enumerate() {
                    if range > 0 {
                        max_hop = Some(max_hop.unwrap_or(0).max(h as u8));
                    }
                }
            }
            if let Some(max_hop) = max_hop {
                scans.push(RayScan {
                    dir: d as u8,
                    max_hop,
                });
            }
        }
        v.ray_scans[c.index()] = scans;
    }
    v.leap_attack_index = Vec::with_capacity(2 * n);
    for e in leap_att {
        let s = v.leap_attackers.len() as u32;
        v.leap_attackers.extend(e);
        v.leap_attack_index.push((s, v.leap_attackers.len() as u32));
    }
    for c in Color::ALL {
        let mut z = SquareSet::EMPTY;
        for sq in 0..n {
            let (_, y) = v.coords(sq);
            let inside = match c {
                Color::Sente => y < v.zone_depth as usize,
                Color::Gote => y >= (v.ranks - v.zone_depth) as usize,
            };
            if inside {
                z.insert(sq);
            }
        }
        v.zone[c.index()] = z;
    }
    v.file_squares = (0..v.files as usize)
        .map(|x| {
            let mut s = SquareSet::EMPTY;
            for y in 0..v.ranks as usize {
                s.insert(y * v.files as usize + x);
            }
            s
        })
        .collect();
    for sq in 0..n {
        v.all_squares.insert(sq);
    }
    // Leap checks of hand kinds: squares from which kind k of colour c attacks the target.
    let h = v.hand_kinds.len();
    let mut leap_checks = vec![SquareSet::EMPTY; 2 * h * n];
    for c in Color::ALL {
        for (hi, &k) in v.hand_kinds.iter().enumerate() {
            for from in 0..n {
                for &(to, mode) in v.leaps_of(c, k, from) {
                    if mode & CAPTURE != 0 {
                        leap_checks[(c.index() * h + hi) * n + to as usize].insert(from);
                    }
                }
            }
        }
    }
    v.leap_checks = leap_checks;
    // Zobrist keys from a fixed seed, so hashes are stable across runs.
    let mut rng = crate::rng::SplitMix64(0x05EE_D0F5_A061_u64 ^ ((n as u64) << 32));
    v.z_board = (0..n * 128).map(|_| rng.next_u64()).collect();
    for sq in 0..n {
        v.z_board[sq * 128] = 0; // empty square
    }
    v.z_hand = (0..2 * h * (MAX_HAND_COUNT + 1))
        .map(|i| {
            if i % (MAX_HAND_COUNT + 1) == 0 {
                0
            } else {
                rng.next_u64()
            }
        })
        .collect();
    v.z_side = rng.next_u64();
}
