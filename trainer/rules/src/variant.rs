//! `Variant`: a compiled variant with the precomputed tables move generation reads.

use crate::betza::{TwoLeg, MAX_HOPS};
use crate::bitset::SquareSet;
use crate::compile::Compiler;
use crate::error::Result;
use crate::spec::VariantSpec;
use crate::types::{Color, Kind, Letter, Square};
use crate::values::{MatchRule, PromotionMode, StalemateValue};
use std::path::Path;

/// The move tables of boards of at most 256 squares with one-byte squares.
#[derive(Clone, Debug, Default)]
pub(crate) struct SmallTables {
    pub(crate) ray_squares: Vec<u8>,
    pub(crate) leaps: Vec<(u8, u8)>,
    /// Reverse leap attacks with the attacking kinds as one 128-bit word (boards of at most
    /// 256 squares have at most [`MAX_SMALL_KINDS`] kinds).
    pub(crate) leap_attackers: Vec<(u8, u128)>,
}

/// A set of piece kinds, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct KindSet([u64; MAX_KINDS / 64]);

impl KindSet {
    /// The set of kind `k` alone.
    pub(crate) fn of(k: usize) -> KindSet {
        let mut s = KindSet::default();
        s.insert(k);
        s
    }

    /// Adds kind `k`.
    pub(crate) fn insert(&mut self, k: usize) {
        self.0[k / 64] |= 1 << (k % 64);
    }

    /// Whether kind `k` is in the set.
    #[inline(always)]
    pub(crate) fn contains(&self, k: usize) -> bool {
        self.0[k / 64] >> (k % 64) & 1 != 0
    }

    /// The first 128 kinds as one word.
    pub(crate) fn low(&self) -> u128 {
        self.0[0] as u128 | (self.0[1] as u128) << 64
    }
}

/// The square type of a board size's move tables: one byte for boards of at most 256 squares
/// (half the cache footprint, and reads of a 256-square board need no bounds check), two bytes
/// for every board.
pub(crate) trait SquareIndex: Copy + Into<usize> + 'static {
    /// Squares along every ray (see [`Variant::ray_in`]).
    fn ray_squares(v: &Variant) -> &[Self];
    /// Every leap (see [`Variant::leaps_in`]).
    fn leaps(v: &Variant) -> &[(Self, u8)];
    /// The attacking kinds of a reverse leap attack: a 128-bit word on small boards, an index
    /// into [`Variant::kind_sets`] on the others.
    type Kinds: Copy;
    /// Reverse leap attacks: attacking square and the kinds that attack from there.
    fn leap_attackers(v: &Variant) -> &[(Self, Self::Kinds)];
    /// Whether kind `k` is among `kinds`.
    fn attacks(v: &Variant, kinds: Self::Kinds, k: Kind) -> bool;
}

impl SquareIndex for u8 {
    #[inline(always)]
    fn ray_squares(v: &Variant) -> &[u8] {
        &v.small.ray_squares
    }
    #[inline(always)]
    fn leaps(v: &Variant) -> &[(u8, u8)] {
        &v.small.leaps
    }
    type Kinds = u128;
    #[inline(always)]
    fn leap_attackers(v: &Variant) -> &[(u8, u128)] {
        &v.small.leap_attackers
    }
    #[inline(always)]
    fn attacks(_: &Variant, kinds: u128, k: Kind) -> bool {
        kinds >> k & 1 != 0
    }
}

impl SquareIndex for u16 {
    #[inline(always)]
    fn ray_squares(v: &Variant) -> &[u16] {
        &v.ray_squares
    }
    #[inline(always)]
    fn leaps(v: &Variant) -> &[(u16, u8)] {
        &v.leaps
    }
    type Kinds = u32;
    #[inline(always)]
    fn leap_attackers(v: &Variant) -> &[(u16, u32)] {
        &v.leap_attackers
    }
    #[inline(always)]
    fn attacks(v: &Variant, kinds: u32, k: Kind) -> bool {
        v.kind_sets[kinds as usize].contains(k as usize)
    }
}

/// Largest board side supported (Taikyoku shogi's 36).
pub const MAX_SIDE: u8 = 36;
/// Largest number of squares.
pub const MAX_SQUARES: usize = MAX_SIDE as usize * MAX_SIDE as usize;
/// Largest number of piece kinds, promoted forms included.
pub const MAX_KINDS: usize = 512;
/// Largest number of piece kinds on boards of at most 256 squares (16x16), whose move
/// generation keeps the attacking kinds of a square in one 128-bit word.
pub const MAX_SMALL_KINDS: usize = 128;
/// Largest number of pieces of one kind (board and hands together, promoted included).
pub const MAX_HAND_COUNT: usize = 255;

/// Mode bits of a leap.
pub(crate) const MOVE: u8 = 1;
pub(crate) const CAPTURE: u8 = 2;

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
    /// The kind a non-royal piece becomes when it takes one of this kind (`contagious`: the
    /// promoted form of this kind's unpromoted side).
    pub contagion: Option<Kind>,
    /// Powers beyond its Betza moves (the large variants' range captures, area moves, skipping
    /// rides and burning).
    pub powers: Powers,
    /// A leap of its own lands on a square one of its rides reaches too (Taikyoku shogi's
    /// phoenix master: `fG` and `B`), so that its moves are deduplicated as they are made.
    pub(crate) shadowed_leaps: bool,
    /// How its captures, promotion and moves depend on other kinds (Ko shogi's keys).
    pub links: Links,
}

/// How a kind's captures, promotion and moves depend on other kinds (Ko shogi's `spares`,
/// `displaces_only`, `promotes_capturing`, `without`, `promotes_with`, `promotion_effects`,
/// `reverts_near`, `shot_from`); empty for every other variant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Kinds it never captures, in any way (`spares`).
    pub spares: Vec<Kind>,
    /// The only kinds it captures by moving onto them (`displaces_only`), if limited.
    pub displaces_only: Option<Vec<Kind>>,
    /// Kinds whose capture promotes it at once (`promotes_capturing`).
    pub promotes_capturing: Vec<Kind>,
    /// `without`: the (unpromoted) kind its side must have, and the offsets (owner's view) of
    /// the moves it loses without one.
    pub without: Option<(Kind, Vec<(i8, i8)>)>,
    /// `promotes_with`: the (unpromoted) kind without which its side cannot have it promoted;
    /// set on both sides of the piece.
    pub promotes_with: Option<Kind>,
    /// `promotion_effects`: its side's kinds that promote with it, the opponent's that die.
    pub promotion_effects: Option<(Vec<Kind>, Vec<Kind>)>,
    /// `reverts_near`: the kind that turns this promoted piece back, and how near.
    pub reverts_near: Option<(Kind, u8)>,
    /// `shot_from`: the least distance it can be shot from (0: any).
    pub shot_from: u8,
}

/// A kind's powers beyond its Betza moves, from the owner's point of view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Powers {
    /// Rank for range captures (0: none); royal kinds outrank every other.
    pub rank: u8,
    /// Directions `(dx, dy)` along which it captures by jumping pieces ranked below it.
    pub range_capture: Vec<(i8, i8)>,
    /// Its range captures take every piece jumped and may end on an empty square.
    pub sweep: bool,
    /// Rides that start with a jump: direction, first square reached (2: over the first
    /// square) and range from the piece (0: unlimited).
    pub skip_first: Vec<(i8, i8, u8, u8)>,
    /// King steps of its area move (0: none).
    pub area: u8,
    /// First directions `(dx, dy)` of its hook moves (a ride turning 90 degrees once).
    pub hook: Vec<(i8, i8)>,
    /// Burns the enemy pieces next to where it ends each move.
    pub burn: bool,
    /// Lion power along one line (the Lion Dog): direction `(dx, dy)` and steps (2 or 3). The
    /// plain jumps to each square of the line are Betza moves; this adds the moves that take
    /// pieces on the way.
    pub lion_line: Vec<(i8, i8, u8)>,
    /// Leaps to any empty square and takes any unprotected enemy piece (`leap_anywhere`).
    pub anywhere: bool,
    /// Moves several times in one turn (`repeat`).
    pub repeat: Option<crate::compound::Compound>,
    /// Moves, then shoots (`shoot`).
    pub shoot: Option<crate::compound::Compound>,
    /// Whether any of these powers makes moves ([`Powers::any_moves`], kept for the move
    /// loop).
    pub(crate) moving: bool,
}

impl Powers {
    /// Whether the kind has a power that makes moves (burning makes none).
    pub fn moves(&self) -> bool {
        !self.range_capture.is_empty()
            || !self.skip_first.is_empty()
            || self.area > 0
            || !self.hook.is_empty()
            || self.anywhere
    }

    /// Whether the kind has a power that makes moves, the Lion power along a line included.
    pub fn any_moves(&self) -> bool {
        self.moves() || !self.lion_line.is_empty() || self.compound()
    }

    /// Whether the kind makes compound moves (`repeat`, `shoot`).
    pub fn compound(&self) -> bool {
        self.repeat.is_some() || self.shoot.is_some()
    }

    /// Whether the kind has any power.
    pub fn any(&self) -> bool {
        self.any_moves() || self.burn
    }

    /// Every offset `(dx, dy)` these powers can move by on a board of this size.
    pub fn offsets(&self, files: u8, ranks: u8) -> Vec<(i8, i8)> {
        let reach = files.max(ranks) as i8;
        let mut out = Vec::new();
        let lines = self.range_capture.iter().map(|&(dx, dy)| (dx, dy, 2, 0));
        let skips = self
            .skip_first
            .iter()
            .map(|&(dx, dy, f, r)| (dx, dy, f as i8, r));
        for (dx, dy, first, range) in lines.chain(skips) {
            let last = if range == 0 { reach } else { range as i8 };
            out.extend((first..=last).map(|m| (dx * m, dy * m)));
        }
        for &(dx, dy) in &self.hook {
            for m in 1..reach {
                for k in 1..reach {
                    out.push((dx * m - dy * k, dy * m + dx * k));
                    out.push((dx * m + dy * k, dy * m - dx * k));
                }
            }
        }
        let a = self.area as i8;
        for dy in -a..=a {
            out.extend((-a..=a).filter(|&dx| (dx, dy) != (0, 0)).map(|dx| (dx, dy)));
        }
        out.retain(|&(dx, dy)| (dx.unsigned_abs()) < files && (dy.unsigned_abs()) < ranks);
        out
    }
}

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
    /// `repetition_result` is sente's, whoever is to move (otherwise the side to move's).
    pub repetition_for_sente: bool,
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
    /// Whether a side can hold several royal pieces (several kinds are royal: Sho shogi's
    /// crown prince, a promoted form). A side loses with its last royal piece; only that one
    /// may not be left in check, while a side with two may leave either attacked.
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
    /// Custodian capture (Hasami shogi): after a move, enemy lines enclosed between the piece
    /// that moved and another friendly piece are captured. False in every other variant, so
    /// `make_move` tests one flag there.
    pub custodian: bool,
    /// With `custodian`: an enemy piece in a corner is captured when both squares next to it
    /// are the mover's, the moved piece being one of them.
    pub custodian_corners: bool,
    /// A side with at most this many pieces (board and hand) loses; 0: no such rule.
    pub bare_pieces: u32,
    /// This many own pieces in an unbreakable line win; 0: no such rule.
    pub connect: u8,
    /// Diagonal lines count for `connect`, not only ranks and files.
    pub connect_all_directions: bool,
    /// Pieces on their owner's first this many ranks do not count for `connect`.
    pub connect_outside_ranks: u8,
    /// Some kind has powers beyond its Betza moves ([`Powers`]).
    pub has_powers: bool,
    /// Some kind burns ([`Powers::burn`]).
    pub has_burns: bool,
    /// Whether a kind sweeps along its range captures (`sweep`).
    pub has_sweeps: bool,
    /// Whether a kind has shadowed leaps (see [`KindInfo::shadowed_leaps`]).
    pub(crate) has_shadowed_leaps: bool,
    /// A piece ending its move next to an enemy burning piece is burnt itself.
    pub passive_burn: bool,
    /// Royal pieces may be left attacked; losing the last one loses the game.
    pub royal_capture: bool,
    /// A piece with a promoted form promotes by itself after any move that captures, anywhere
    /// (`promotion.moves = "capture"`); there is no zone.
    pub promote_by_capture: bool,
    /// Some kind has Lion power along a line ([`Powers::lion_line`]).
    pub has_lion_lines: bool,
    /// Some kind is contagious ([`KindInfo::contagion`]).
    pub has_contagion: bool,
    /// Every compound move type of the variant's pieces (`shoot`, `repeat`).
    pub compound: crate::compound::CompoundTable,
    /// Some kind makes compound moves.
    pub has_compound: bool,
    /// Some kind spares kinds or captures only some by moving onto them.
    pub has_capture_limits: bool,
    /// Some kind promotes on capturing particular kinds.
    pub has_capture_promotions: bool,
    /// Some kind loses moves without another (`without`).
    pub has_without: bool,
    /// Some kind's fate follows others (`promotes_with`, `promotion_effects`, `reverts_near`):
    /// checked after every move that takes a piece, promotes, or moves one of `near_kinds`.
    pub has_fates: bool,
    /// The kinds, both sides of each, of `reverts_near` pieces and of the pieces that turn
    /// them back.
    pub(crate) near_kinds: Vec<Kind>,
    /// With `royal_capture`: a side without royal pieces plays on while it has a piece of each
    /// of these (unpromoted) kinds, promoted or not (`end.royal_reserve`).
    pub royal_reserve: Vec<Kind>,

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
    pub(crate) ray_squares: Vec<Square>,
    /// Leaps per (colour, kind, square): ranges into `leaps` of (to, mode).
    pub(crate) leap_index: Vec<(u32, u32)>,
    pub(crate) leaps: Vec<(Square, u8)>,
    /// Ray moves per (colour, kind).
    pub(crate) rays: Vec<Vec<RayMove>>,
    /// Reverse leap attacks per (attacking colour, target): ranges into `leap_attackers`.
    pub(crate) leap_attack_index: Vec<(u32, u32)>,
    pub(crate) leap_attackers: Vec<(Square, u32)>,
    /// The distinct sets of attacking kinds `leap_attackers` points into.
    pub(crate) kind_sets: Vec<KindSet>,
    /// The same tables with one-byte squares, for boards of at most 256 squares (empty for
    /// larger boards).
    pub(crate) small: SmallTables,
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
    /// Zobrist keys per square: the empty square, sente's kinds, gote's kinds (see [`Self::zb`]).
    pub(crate) z_board: Vec<u64>,
    /// Half the Zobrist keys per square.
    pub(crate) z_half: usize,
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
    pub(crate) fn ray(&self, sq: usize, dir: usize) -> &[Square] {
        self.ray_in::<Square>(sq, dir)
    }

    /// The squares from `sq` along direction `dir`, nearest first, in the tables of `S`.
    #[inline(always)]
    pub(crate) fn ray_in<S: SquareIndex>(&self, sq: usize, dir: usize) -> &[S] {
        let i = sq * self.dirs.len() + dir;
        let s = self.ray_start[i] as usize;
        &S::ray_squares(self)[s..s + self.ray_len[i] as usize]
    }

    #[inline(always)]
    pub(crate) fn leaps_of(&self, c: Color, k: Kind, sq: usize) -> &[(Square, u8)] {
        self.leaps_in::<Square>(c, k, sq)
    }

    /// The leaps (square reached, move/capture mode) of kind `k` of colour `c` from `sq`.
    #[inline(always)]
    pub(crate) fn leaps_in<S: SquareIndex>(&self, c: Color, k: Kind, sq: usize) -> &[(S, u8)] {
        let (s, e) = self.leap_index[self.ck(c, k) * self.n + sq];
        &S::leaps(self)[s as usize..e as usize]
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

    /// Whether the rules look the same in a mirror that swaps left and right (the files):
    /// every kind's moves (its Betza moves, those on its last rank, its two-step moves and its
    /// powers) are their own mirror images. Nothing else in a variant depends on the file, so
    /// a mirrored position is then as legal as the position, with the mirrored moves and the
    /// same value (training data may be mirrored). Tori shogi's quails are one counterexample.
    pub fn mirror_symmetric(&self) -> bool {
        self.kinds.iter().all(kind_is_mirror_symmetric)
    }

    /// The square at the same rank and the mirrored file (file 1 and the highest swap).
    pub fn mirror_square(&self, sq: usize) -> usize {
        let (x, y) = self.coords(sq);
        self.square(self.files as usize - 1 - x, y)
    }

    /// The mirror image of a move: each of its squares mirrored ([`Variant::mirror_square`]).
    pub fn mirror_move(&self, mv: crate::Move) -> crate::Move {
        let m = mv.map_squares(|sq| self.mirror_square(sq as usize) as Square);
        match mv {
            crate::Move::Multi { .. } => self.mirror_compound(m, mv),
            _ => m,
        }
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

    /// Zobrist key of a piece on a square.
    #[inline(always)]
    pub(crate) fn zb(&self, sq: usize, p: crate::types::Piece) -> u64 {
        let code = (p.0 & 0x7fff) as usize + (p.0 >> 15) as usize * self.z_half;
        self.z_board[sq * 2 * self.z_half + code]
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

/// Whether `items`, mirrored item by item by `mirror`, are the same multiset.
fn mirror_closed<T: Ord + Clone>(items: &[T], mirror: impl Fn(&T) -> T) -> bool {
    let mut a = items.to_vec();
    let mut b: Vec<T> = items.iter().map(mirror).collect();
    a.sort();
    b.sort();
    a == b
}

/// Whether a kind's moves are their own mirror images (see [`Variant::mirror_symmetric`]).
fn kind_is_mirror_symmetric(k: &KindInfo) -> bool {
    let mut atoms = Vec::new();
    for text in std::iter::once(&k.betza).chain(&k.last_rank_betza) {
        // A compiled variant's Betza strings parse; one that did not would not be symmetric
        // as far as anyone knows.
        let Ok((a, _)) = crate::betza::parse_all(text) else {
            return false;
        };
        atoms.extend(a.iter().map(|a| {
            let modes = (a.range, a.can_move, a.can_capture, a.hops);
            (a.dx, a.dy, modes)
        }));
    }
    let legs: Vec<_> = k
        .legs
        .iter()
        .map(|l| (l.dx1, l.dy1, l.first_captures, l.dx2, l.dy2))
        .collect();
    let p = &k.powers;
    mirror_closed(&atoms, |&(dx, dy, m)| (-dx, dy, m))
        && mirror_closed(&legs, |&(x1, y1, c, x2, y2)| (-x1, y1, c, -x2, y2))
        && mirror_closed(&p.range_capture, |&(dx, dy)| (-dx, dy))
        && mirror_closed(&p.skip_first, |&(dx, dy, f, r)| (-dx, dy, f, r))
        && mirror_closed(&p.hook, |&(dx, dy)| (-dx, dy))
        && mirror_closed(&p.lion_line, |&(dx, dy, n)| (-dx, dy, n))
        && [&p.repeat, &p.shoot]
            .into_iter()
            .flatten()
            .all(|c| mirror_closed(&c.steps, |s| crate::compound::Step { dx: -s.dx, ..*s }))
}
