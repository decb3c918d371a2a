//! The encoder: a variant's positions and moves as the network's input planes and policy
//! indices (the layouts are described in the crate documentation).

use crate::dlshogi::{self, Dlshogi};
use rules::{betza, Color, Move, Position, Square, Variant};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::Arc;
use thiserror::Error;

/// Version of the encoding described by [`EncodingSpec`]; bump on any change of layout.
pub const ENCODING_VERSION: u32 = 1;

/// Marks an offset that is no move type in [`Encoder`]'s lookup table.
const NO_TYPE: u16 = u16::MAX;

/// The layout of the network's input and policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EncodingLayout {
    /// Derived from any variant (the module documentation describes it).
    #[default]
    Generic,
    /// dlshogi's: 62 + 57 input planes, 27 x 81 policy; 9x9 standard shogi only.
    Dlshogi,
    /// The generic layout plus attack planes (any variant): per side, the squares its pieces
    /// of each kind attack, and the squares attacked by at least 1, 2 and 3 of its pieces.
    Attacks,
}

impl EncodingLayout {
    /// The name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EncodingLayout::Generic => "generic",
            EncodingLayout::Dlshogi => "dlshogi",
            EncodingLayout::Attacks => "attacks",
        }
    }
}

impl std::fmt::Display for EncodingLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for EncodingLayout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "generic" => Ok(EncodingLayout::Generic),
            "dlshogi" => Ok(EncodingLayout::Dlshogi),
            "attacks" => Ok(EncodingLayout::Attacks),
            _ => Err(format!(
                "unknown encoding {s:?} (expected \"generic\", \"attacks\" or \"dlshogi\")"
            )),
        }
    }
}

/// A layout that cannot encode a variant.
#[derive(Clone, Debug, Error)]
#[error("the {layout} encoding cannot encode {variant}: {reason}")]
pub struct EncodingError {
    /// The layout asked for.
    pub layout: EncodingLayout,
    /// The variant's name.
    pub variant: String,
    /// Why not.
    pub reason: String,
}

/// Encodes positions into network inputs and moves into policy indices, for one variant.
#[derive(Clone, Debug)]
pub struct Encoder {
    /// The variant encoded.
    variant: Arc<Variant>,
    /// dlshogi's tables when the layout is dlshogi's.
    dlshogi: Option<Box<Dlshogi>>,
    /// Files and ranks of the board.
    files: usize,
    ranks: usize,
    /// Number of piece kinds (promoted included).
    kinds: usize,
    /// Move types `(dx, dy)`, Betza convention from the mover's side, sorted.
    move_types: Vec<(i8, i8)>,
    /// Policy planes per move type: 2 (plain, promoting), or 1 where no move chooses to
    /// promote (promotion by capture happens by itself).
    promote_planes: usize,
    /// Two-step move types: first step and whole offset, mover's view, Betza convention.
    doubles: Vec<DoubleType>,
    /// `type_of[(dy + ranks - 1) * (2 * files - 1) + dx + files - 1]`: index into `move_types`
    /// or `NO_TYPE`.
    type_of: Vec<u16>,
    /// Per hand index: the divisor of the hand-count planes.
    hand_scale: Vec<f32>,
    /// Whether the attack planes follow the generic ones ([`EncodingLayout::Attacks`]).
    attacks: bool,
    /// `mirror[i]`: the policy index of the mirror image (files swapped) of the move at `i`,
    /// when the variant's rules are mirror symmetric (generic and attacks layouts only).
    mirror: Option<Vec<u32>>,
}

/// Attack-count planes per side in [`EncodingLayout::Attacks`]: attacked by at least 1, 2, 3.
const ATTACK_COUNTS: usize = 3;

/// Serializable description of an encoding, written into model sidecars so that a model is
/// only ever used with the layout it was trained on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EncodingSpec {
    /// Encoding layout version ([`ENCODING_VERSION`]).
    pub version: u32,
    /// Variant name.
    pub variant: String,
    /// Names of the input planes, in order.
    pub planes: Vec<String>,
    /// Board ranks (rows).
    pub ranks: usize,
    /// Board files (columns).
    pub files: usize,
    /// Move types `(dx, dy)` in policy plane order (Betza convention, `dy > 0` forward).
    pub move_types: Vec<(i8, i8)>,
    /// SFEN tokens of the hand kinds, in drop plane order.
    pub drop_kinds: Vec<String>,
    /// Two-step move types (first step, whole offset) in policy plane order, after the board
    /// move planes (absent before two-step moves existed: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubles: Vec<DoubleType>,
    /// Length of the policy vector.
    pub policy_len: usize,
    /// The layout (absent in sidecars written before layouts existed: generic).
    #[serde(default)]
    pub layout: EncodingLayout,
}

/// The distinct offsets any piece of `v` can make on its board, sorted by distance
/// (Chebyshev), then forward first, then left to right.
fn derive_move_types(v: &Variant) -> Vec<(i8, i8)> {
    let (files, ranks) = (v.files as i32, v.ranks as i32);
    let fits = |dx: i32, dy: i32| (dx, dy) != (0, 0) && dx.abs() < files && dy.abs() < ranks;
    let mut types: Vec<(i8, i8)> = Vec::new();
    for kind in &v.kinds {
        // The variant compiled, so its Betza strings parse.
        let mut atoms = betza::parse(&kind.betza)
            .unwrap_or_else(|e| panic!("betza {:?} of {}: {e}", kind.betza, kind.name));
        if let Some(extra) = &kind.last_rank_betza {
            atoms.extend(betza::parse(extra).unwrap_or_else(|e| panic!("betza {extra:?}: {e}")));
        }
        // Powers (range captures, skipping rides, area moves) reach further offsets.
        for (dx, dy) in kind.powers.offsets(v.files, v.ranks) {
            if fits(dx as i32, dy as i32) {
                types.push((dx, dy));
            }
        }
        for a in atoms {
            let reach = match a.range {
                0 => files.max(ranks),
                r => r as i32,
            };
            for m in 1..=reach {
                let (dx, dy) = (a.dx as i32 * m, a.dy as i32 * m);
                if !fits(dx, dy) {
                    break;
                }
                types.push((dx as i8, dy as i8));
            }
        }
    }
    types.sort_by_key(|&(dx, dy)| (dx.abs().max(dy.abs()), -dy, dx));
    types.dedup();
    types
}

/// A move type of several steps: first step and whole offset, mover's view, Betza
/// convention. A first step of `(0, 0)` stands for three steps along the line to the whole
/// offset, taking the pieces on both squares between ([`Move::Line`]).
pub type DoubleType = ((i8, i8), (i8, i8));

/// The first step that marks a [`Move::Line`] type.
const LINE: (i8, i8) = (0, 0);

/// The distinct moves of several steps of `v`'s pieces as (first step, whole offset), sorted:
/// two-step moves, and the moves of the Lion power along a line that take pieces on the way.
fn derive_doubles(v: &Variant) -> Vec<DoubleType> {
    let legs = v
        .kinds
        .iter()
        .flat_map(|k| k.legs.iter())
        .map(|l| ((l.dx1, l.dy1), (l.dx1 + l.dx2, l.dy1 + l.dy2)));
    let lines = v
        .kinds
        .iter()
        .flat_map(|k| k.powers.lion_line.iter())
        .flat_map(|&(x, y, n)| {
            let at = |k: i8| (x * k, y * k);
            let two = [(at(1), at(2)), (at(1), at(0))];
            let three = [
                (at(2), at(1)),
                (at(1), at(3)),
                (at(2), at(3)),
                (LINE, at(3)),
            ];
            two.into_iter()
                .chain(three.into_iter().filter(move |_| n >= 3))
        });
    let mut out: Vec<_> = legs.chain(lines).collect();
    out.sort_by_key(|&((x1, y1), (x, y))| (-y1, x1, -y, x));
    out.dedup();
    out
}

impl Encoder {
    /// Builds the encoder of a variant in `layout`, or says why the layout cannot encode it.
    pub fn with_layout(
        variant: Arc<Variant>,
        layout: EncodingLayout,
    ) -> Result<Encoder, EncodingError> {
        let mut enc = Encoder::new(variant);
        enc.attacks = layout == EncodingLayout::Attacks;
        if layout == EncodingLayout::Dlshogi {
            let d = Dlshogi::new(&enc.variant).map_err(|reason| EncodingError {
                layout,
                variant: enc.variant.name.clone(),
                reason,
            })?;
            enc.dlshogi = Some(Box::new(d));
            enc.mirror = None;
        }
        Ok(enc)
    }

    /// The encoder a model was trained with, from its encoding description.
    pub fn for_spec(variant: Arc<Variant>, spec: &EncodingSpec) -> Result<Encoder, EncodingError> {
        Encoder::with_layout(variant, spec.layout)
    }

    /// The layout of this encoder.
    pub fn layout(&self) -> EncodingLayout {
        match (&self.dlshogi, self.attacks) {
            (Some(_), _) => EncodingLayout::Dlshogi,
            (None, true) => EncodingLayout::Attacks,
            (None, false) => EncodingLayout::Generic,
        }
    }

    /// Builds the generic encoder of a variant (move types and scales are computed once here).
    pub fn new(variant: Arc<Variant>) -> Encoder {
        let files = variant.files as usize;
        let ranks = variant.ranks as usize;
        let move_types = derive_move_types(&variant);
        let doubles = derive_doubles(&variant);
        let width = 2 * files - 1;
        let mut type_of = vec![NO_TYPE; width * (2 * ranks - 1)];
        for (t, &(dx, dy)) in move_types.iter().enumerate() {
            let i = (dy as isize + ranks as isize - 1) as usize * width
                + (dx as isize + files as isize - 1) as usize;
            type_of[i] = t as u16;
        }
        // Pieces of each hand kind in the start position: board and both hands.
        let start = Position::start(variant.clone());
        let mut counts = vec![0u32; variant.hand_kinds.len()];
        for sq in 0..variant.num_squares() {
            let p = start.piece_at(sq);
            if p.is_empty() {
                continue;
            }
            let base = variant.kinds[p.kind() as usize].captured_as;
            if let Some(h) = variant.kinds[base as usize].hand_index {
                counts[h] += 1;
            }
        }
        for (h, &k) in variant.hand_kinds.iter().enumerate() {
            for c in Color::ALL {
                counts[h] += start.hand_count(c, k) as u32;
            }
        }
        let hand_scale = counts.iter().map(|&c| c.max(1) as f32).collect();
        // Variants that promote by capture never choose: one plane per move type (the others
        // keep the promoting planes, so that their trained networks stay valid).
        let promote_planes = if variant.promote_by_capture { 1 } else { 2 };
        Encoder {
            kinds: variant.kinds.len(),
            variant,
            dlshogi: None,
            files,
            ranks,
            move_types,
            promote_planes,
            doubles,
            type_of,
            hand_scale,
            attacks: false,
            mirror: None,
        }
        .with_mirror()
    }

    /// Sets [`Encoder::mirror`] where the variant and its move types allow it.
    fn with_mirror(mut self) -> Encoder {
        if !self.variant.mirror_symmetric() {
            return self;
        }
        let n = self.squares();
        let types = self.move_types.len();
        let mut map = Vec::with_capacity(self.policy_len());
        for index in 0..self.policy_len() {
            let (plane, sq) = (index / n, index % n);
            let (x, y) = self.xy(sq);
            let sq = y as usize * self.files + (self.files - 1 - x as usize);
            let pp = self.promote_planes;
            let plane = if plane < pp * types {
                let (dx, dy) = self.move_types[plane / pp];
                match self.type_index(-dx as isize, dy as isize) {
                    Some(t) => pp * t + plane % pp,
                    None => return self,
                }
            } else if plane >= self.first_compound_plane() && plane < self.first_drop_plane() {
                let first = self.first_compound_plane();
                match self.variant.compound_mirror_plane(plane - first) {
                    Some(p) => first + p,
                    None => return self,
                }
            } else if plane < self.first_drop_plane() {
                let ((x1, y1), (x2, y2)) = self.doubles[plane - pp * types];
                match self
                    .doubles
                    .iter()
                    .position(|&d| d == ((-x1, y1), (-x2, y2)))
                {
                    Some(d) => pp * types + d,
                    None => return self,
                }
            } else {
                plane
            };
            map.push((plane * n + sq) as u32);
        }
        self.mirror = Some(map);
        self
    }

    /// Whether samples of this encoding may be mirrored ([`Encoder::mirror_sample`]): the
    /// variant's rules are mirror symmetric ([`Variant::mirror_symmetric`]) and the layout is
    /// not dlshogi's.
    pub fn can_mirror(&self) -> bool {
        self.mirror.is_some()
    }

    /// Turns an encoded position and its dense policy rows (`policies`: each `policy_len`
    /// long) into their mirror images, files swapped: the encoding and policies of the
    /// mirrored position. Every plane is a board (or constant) seen from the side to move,
    /// so the input mirrors plane by plane; a move's index goes to its mirror image's.
    /// Panics when [`Encoder::can_mirror`] is false.
    pub fn mirror_sample(
        &self,
        input: &mut [f32],
        policies: &mut [&mut [f32]],
        scratch: &mut Vec<f32>,
    ) {
        let map = self
            .mirror
            .as_ref()
            .expect("mirror_sample: the encoding cannot mirror");
        for row in input.chunks_exact_mut(self.files) {
            row.reverse();
        }
        for p in policies.iter_mut() {
            scratch.clear();
            scratch.extend_from_slice(p);
            for (i, &q) in scratch.iter().enumerate() {
                p[map[i] as usize] = q;
            }
        }
    }

    /// The variant encoded.
    pub fn variant(&self) -> &Arc<Variant> {
        &self.variant
    }

    /// Number of input planes `C`.
    pub fn num_planes(&self) -> usize {
        if self.dlshogi.is_some() {
            return dlshogi::FEATURES1 + dlshogi::FEATURES2;
        }
        self.generic_planes() + self.attack_planes()
    }

    /// Planes of the generic layout: pieces, hands, repetition, check, ones.
    fn generic_planes(&self) -> usize {
        2 * self.kinds + 2 * self.variant.hand_kinds.len() + 3
    }

    /// Planes that follow the generic ones in [`EncodingLayout::Attacks`] (else 0): per side,
    /// one per kind, then the attack counts.
    fn attack_planes(&self) -> usize {
        match self.attacks {
            true => 2 * (self.kinds + ATTACK_COUNTS),
            false => 0,
        }
    }

    /// Board ranks (rows of every plane).
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Board files (columns of every plane).
    pub fn files(&self) -> usize {
        self.files
    }

    /// Length of one encoded input: `C * ranks * files`.
    pub fn input_len(&self) -> usize {
        self.num_planes() * self.squares()
    }

    fn squares(&self) -> usize {
        self.files * self.ranks
    }

    /// Names of the input planes in order: `own P`, `opp +R`, `own hand P`, `opp hand P`,
    /// `repetition`, `in check`, `ones`.
    pub fn plane_names(&self) -> Vec<String> {
        if self.dlshogi.is_some() {
            return Dlshogi::plane_names();
        }
        let v = &self.variant;
        let mut names = Vec::with_capacity(self.num_planes());
        for side in ["own", "opp"] {
            for k in 0..self.kinds {
                names.push(format!("{side} {}", v.kind_token(k as rules::Kind)));
            }
        }
        for &k in &v.hand_kinds {
            for side in ["own", "opp"] {
                names.push(format!("{side} hand {}", v.kind_token(k)));
            }
        }
        names.extend(["repetition", "in check", "ones"].map(String::from));
        if self.attacks {
            for side in ["own", "opp"] {
                for k in 0..self.kinds {
                    names.push(format!(
                        "{side} attacks of {}",
                        v.kind_token(k as rules::Kind)
                    ));
                }
                names.extend((1..=ATTACK_COUNTS).map(|c| format!("{side} attackers >= {c}")));
            }
        }
        names
    }

    /// The move types `(dx, dy)` in policy plane order, from the mover's point of view after
    /// rotation, Betza convention: `dy > 0` forward, `dx > 0` to the mover's right.
    pub fn move_types(&self) -> &[(i8, i8)] {
        &self.move_types
    }

    /// Number of policy planes: two per move type (no promotion, promotion), one per two-step
    /// move type, and one drop plane per hand kind.
    pub fn policy_planes(&self) -> usize {
        if self.dlshogi.is_some() {
            return dlshogi::LABELS;
        }
        self.first_drop_plane() + self.drop_planes()
    }

    /// The move types of several steps (first step, whole offset; a first step of `(0, 0)`:
    /// three steps along the line, [`Move::Line`]), mover's view, in plane order.
    pub fn doubles(&self) -> &[DoubleType] {
        &self.doubles
    }

    /// The first drop plane: after the board moves, the two-step moves and the compound moves.
    fn first_drop_plane(&self) -> usize {
        self.first_compound_plane() + self.variant.compound.len()
    }

    /// The first plane of the compound moves (`shoot`, `repeat`: one per type in the mover's
    /// view, [`rules::CompoundTable::planes`]).
    fn first_compound_plane(&self) -> usize {
        self.promote_planes * self.move_types.len() + self.doubles.len()
    }

    /// (x, y) of an oriented square.
    fn xy(&self, sq: usize) -> (isize, isize) {
        ((sq % self.files) as isize, (sq / self.files) as isize)
    }

    /// The oriented square at (x, y), if on the board.
    fn at(&self, x: isize, y: isize) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.files as isize && y < self.ranks as isize)
            .then(|| y as usize * self.files + x as usize)
    }

    /// Drop planes: one per hand kind, twice as many when pieces may be dropped promoted.
    fn drop_planes(&self) -> usize {
        let v = &self.variant;
        v.hand_kinds.len() * if v.promoted_drops { 2 } else { 1 }
    }

    /// The kinds dropped at each drop plane, in order.
    fn drop_plane_kinds(&self) -> Vec<rules::Kind> {
        let v = &self.variant;
        let mut kinds = v.hand_kinds.clone();
        if v.promoted_drops {
            kinds.extend(
                v.hand_kinds
                    .iter()
                    .map(|&k| v.kinds[k as usize].promotes_to.unwrap_or(k)),
            );
        }
        kinds
    }

    /// Length of the policy vector: `policy_planes * ranks * files`.
    pub fn policy_len(&self) -> usize {
        self.policy_planes() * self.squares()
    }

    /// A square in the mover's orientation (the rotation is its own inverse).
    #[inline]
    fn orient(&self, side: Color, sq: usize) -> usize {
        match side {
            Color::Sente => sq,
            Color::Gote => self.squares() - 1 - sq,
        }
    }

    /// A key of everything [`encode`](Self::encode) reads from `pos`, for caching network
    /// answers: the Zobrist hash of board, hands and side to move (check and attacks follow
    /// from them), mixed with the repetition plane's value (which the hash does not hold).
    /// dlshogi's layout reads no repetition, so its key is the hash alone.
    pub fn cache_key(&self, pos: &Position) -> u64 {
        if self.dlshogi.is_some() {
            return pos.hash();
        }
        let reps = pos.repetition_count().saturating_sub(1).min(3) as u64;
        pos.hash() ^ reps.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Writes the input planes of `pos` into `out` (`out.len() == input_len()`), overwriting
    /// every value.
    pub fn encode(&self, pos: &Position, out: &mut [f32]) {
        if let Some(d) = &self.dlshogi {
            return d.encode(pos, out);
        }
        assert_eq!(out.len(), self.input_len(), "encode: output length");
        let n = self.squares();
        let us = pos.side_to_move();
        out.fill(0.0);
        for sq in 0..n {
            let p = pos.piece_at(sq);
            if p.is_empty() {
                continue;
            }
            let plane = if p.color() == us {
                p.kind() as usize
            } else {
                self.kinds + p.kind() as usize
            };
            out[plane * n + self.orient(us, sq)] = 1.0;
        }
        let mut plane = 2 * self.kinds;
        let mut constant = |plane: usize, value: f32| {
            if value != 0.0 {
                out[plane * n..(plane + 1) * n].fill(value);
            }
        };
        for (h, &k) in self.variant.hand_kinds.iter().enumerate() {
            for c in [us, us.flip()] {
                constant(plane, pos.hand_count(c, k) as f32 / self.hand_scale[h]);
                plane += 1;
            }
        }
        let reps = pos.repetition_count().saturating_sub(1) as f32 / 3.0;
        constant(plane, reps.min(1.0));
        constant(plane + 1, if pos.in_check() { 1.0 } else { 0.0 });
        constant(plane + 2, 1.0);
        if self.attacks {
            self.encode_attacks(pos, &mut out[self.generic_planes() * n..]);
        }
    }

    /// The attack planes of `pos` into `out` (zeroed), from the side to move: per side, the
    /// squares its pieces of each kind attack, then the squares attacked by at least 1, 2, 3
    /// of its pieces (where each could capture an enemy piece standing there).
    fn encode_attacks(&self, pos: &Position, out: &mut [f32]) {
        let n = self.squares();
        let us = pos.side_to_move();
        let per_side = self.kinds + ATTACK_COUNTS;
        let mut counts = vec![0u8; 2 * n];
        for sq in 0..n {
            let p = pos.piece_at(sq);
            if p.is_empty() {
                continue;
            }
            let side = usize::from(p.color() != us);
            let plane = side * per_side + p.kind() as usize;
            for a in pos.attacks_from(sq).iter() {
                let a = self.orient(us, a);
                out[plane * n + a] = 1.0;
                counts[side * n + a] = counts[side * n + a].saturating_add(1);
            }
        }
        for side in 0..2 {
            for (sq, &c) in counts[side * n..(side + 1) * n].iter().enumerate() {
                for k in 0..(c as usize).min(ATTACK_COUNTS) {
                    out[(side * per_side + self.kinds + k) * n + sq] = 1.0;
                }
            }
        }
    }

    /// Move type index of a board offset `(dx, dy)` (Betza convention), if any.
    fn type_index(&self, dx: isize, dy: isize) -> Option<usize> {
        let (f, r) = (self.files as isize, self.ranks as isize);
        if dx.abs() >= f || dy.abs() >= r {
            return None;
        }
        let i = (dy + r - 1) as usize * (2 * self.files - 1) + (dx + f - 1) as usize;
        match self.type_of[i] {
            NO_TYPE => None,
            t => Some(t as usize),
        }
    }

    /// Policy index of a move of `pos`'s side to move. Panics on a move no piece of the variant
    /// can make (its offset is no move type) or a drop of a kind never in hand.
    pub fn move_to_index(&self, pos: &Position, mv: Move) -> usize {
        if let Some(d) = &self.dlshogi {
            return d.move_to_index(pos, mv);
        }
        let us = pos.side_to_move();
        let n = self.squares();
        match mv {
            Move::Normal { from, to, promote } => {
                let from = self.orient(us, from as usize);
                let to = self.orient(us, to as usize);
                let (fx, fy) = (from % self.files, from / self.files);
                let (tx, ty) = (to % self.files, to / self.files);
                // Forward is towards y = 0 in the mover's orientation.
                let (dx, dy) = (tx as isize - fx as isize, fy as isize - ty as isize);
                let t = self.type_index(dx, dy).unwrap_or_else(|| {
                    panic!(
                        "move {mv:?}: offset ({dx}, {dy}) is no move type of {}",
                        self.variant.name
                    )
                });
                (t * self.promote_planes + promote as usize) * n + from
            }
            Move::Double { from, via, to } => {
                let [f, w, t] = [from, via, to].map(|s| self.xy(self.orient(us, s as usize)));
                // Forward is towards y = 0 in the mover's orientation.
                let key = ((w.0 - f.0, f.1 - w.1), (t.0 - f.0, f.1 - t.1));
                self.double_index(mv, key) * n + self.orient(us, from as usize)
            }
            Move::Line { from, to } => {
                let [f, t] = [from, to].map(|s| self.xy(self.orient(us, s as usize)));
                let key = ((0, 0), (t.0 - f.0, f.1 - t.1));
                self.double_index(mv, key) * n + self.orient(us, from as usize)
            }
            Move::Multi { from, .. } => {
                let p = self.variant.compound_plane(us, mv).unwrap_or_else(|| {
                    panic!(
                        "move {mv:?}: no compound move type of {}",
                        self.variant.name
                    )
                });
                (self.first_compound_plane() + p) * n + self.orient(us, from as usize)
            }
            Move::Drop { kind, to } => {
                let v = &self.variant;
                let h = v
                    .hand_index_of(kind)
                    .unwrap_or_else(|| panic!("drop {mv:?}: kind {kind} is never in hand"));
                let promoted = usize::from(v.kinds[kind as usize].promoted) * v.hand_kinds.len();
                (self.first_drop_plane() + promoted + h) * n + self.orient(us, to as usize)
            }
        }
    }

    /// The policy plane of the move type `key` (first step, whole offset) of a move of several
    /// steps.
    fn double_index(&self, mv: Move, key: ((isize, isize), (isize, isize))) -> usize {
        let d = self
            .doubles
            .iter()
            .position(|&((a, b), (c, e))| {
                key == ((a as isize, b as isize), (c as isize, e as isize))
            })
            .unwrap_or_else(|| {
                panic!(
                    "move {mv:?}: no move type of several steps of {}",
                    self.variant.name
                )
            });
        self.promote_planes * self.move_types.len() + d
    }

    /// The move of `pos`'s side to move at a policy index, or `None` when the index is out of
    /// range or its move would leave the board. Legality is not checked.
    pub fn index_to_move(&self, pos: &Position, index: usize) -> Option<Move> {
        if let Some(d) = &self.dlshogi {
            return d.index_to_move(pos, index);
        }
        let us = pos.side_to_move();
        let n = self.squares();
        let (plane, sq) = (index / n, index % n);
        let types = self.move_types.len();
        let pp = self.promote_planes;
        if plane < pp * types {
            let (dx, dy) = self.move_types[plane / pp];
            let (fx, fy) = ((sq % self.files) as isize, (sq / self.files) as isize);
            let (tx, ty) = (fx + dx as isize, fy - dy as isize);
            if tx < 0 || ty < 0 || tx >= self.files as isize || ty >= self.ranks as isize {
                return None;
            }
            let to = ty as usize * self.files + tx as usize;
            Some(Move::Normal {
                from: self.orient(us, sq) as Square,
                to: self.orient(us, to) as Square,
                promote: plane % pp == 1,
            })
        } else if plane >= self.first_compound_plane() && plane < self.first_drop_plane() {
            let from = self.orient(us, sq);
            self.variant
                .compound_from_plane(us, from, plane - self.first_compound_plane())
        } else if plane < self.first_drop_plane() {
            let ((x1, y1), (x, y)) = self.doubles[plane - pp * types];
            let (fx, fy) = self.xy(sq);
            let to = self.at(fx + x as isize, fy - y as isize)?;
            if (x1, y1) == LINE {
                return Some(Move::Line {
                    from: self.orient(us, sq) as Square,
                    to: self.orient(us, to) as Square,
                });
            }
            let via = self.at(fx + x1 as isize, fy - y1 as isize)?;
            Some(Move::Double {
                from: self.orient(us, sq) as Square,
                via: self.orient(us, via) as Square,
                to: self.orient(us, to) as Square,
            })
        } else {
            let first = self.first_drop_plane();
            let kind = *self.drop_plane_kinds().get(plane - first)?;
            if self.variant.promoted_drops && !self.variant.kinds[kind as usize].promoted {
                // A hand kind without a promoted side has no promoted-drop move.
                let second = plane - first >= self.variant.hand_kinds.len();
                if second {
                    return None;
                }
            }
            Some(Move::Drop {
                kind,
                to: self.orient(us, sq) as Square,
            })
        }
    }

    /// Every legal move of `pos` with its policy index, in `legal_moves` order.
    pub fn legal_indices(&self, pos: &Position) -> Vec<(usize, Move)> {
        pos.legal_moves()
            .into_iter()
            .map(|m| (self.move_to_index(pos, m), m))
            .collect()
    }

    /// The serializable description of this encoding, for model sidecars.
    pub fn spec(&self) -> EncodingSpec {
        if self.dlshogi.is_some() {
            return EncodingSpec {
                version: ENCODING_VERSION,
                variant: self.variant.name.clone(),
                planes: self.plane_names(),
                ranks: self.ranks,
                files: self.files,
                move_types: Vec::new(),
                doubles: Vec::new(),
                drop_kinds: Dlshogi::drop_tokens(),
                policy_len: self.policy_len(),
                layout: EncodingLayout::Dlshogi,
            };
        }
        EncodingSpec {
            version: ENCODING_VERSION,
            variant: self.variant.name.clone(),
            planes: self.plane_names(),
            ranks: self.ranks,
            files: self.files,
            move_types: self.move_types.clone(),
            doubles: self.doubles.clone(),
            drop_kinds: self
                .drop_plane_kinds()
                .iter()
                .map(|&k| self.variant.kind_token(k))
                .collect(),
            policy_len: self.policy_len(),
            layout: self.layout(),
        }
    }

    /// A human-readable description: input planes with their indices, move types with their
    /// policy planes, drop planes and sizes (for `trainer check --explain`).
    pub fn explain(&self) -> String {
        if self.dlshogi.is_some() {
            return self.explain_dlshogi();
        }
        let v = &self.variant;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Encoding v{ENCODING_VERSION} ({}) of {} ({}x{}, seen from the side to move; board \
             rotated 180 degrees for gote)",
            self.layout().name(),
            v.name,
            self.files,
            self.ranks
        );
        let _ = writeln!(
            s,
            "Input: {} planes x {} ranks x {} files = {} floats",
            self.num_planes(),
            self.ranks,
            self.files,
            self.input_len()
        );
        for (i, name) in self.plane_names().iter().enumerate() {
            let note = if let Some(tok) = name.strip_prefix("own hand ") {
                let h = self.hand_plane_scale(tok);
                format!("  (count / {h})")
            } else if let Some(tok) = name.strip_prefix("opp hand ") {
                let h = self.hand_plane_scale(tok);
                format!("  (count / {h})")
            } else if name == "repetition" {
                "  ((repetitions - 1) / 3, at most 1)".to_string()
            } else {
                String::new()
            };
            let _ = writeln!(s, "  {i:3}  {name}{note}");
        }
        let plane = match self.promote_planes {
            2 => "type * 2 + promote",
            _ => "type; no move chooses to promote",
        };
        let _ = writeln!(
            s,
            "Policy: {} planes x {} squares = {} (plane = {plane}, index = plane * {} + from \
             square; drops at the destination)",
            self.policy_planes(),
            self.squares(),
            self.policy_len(),
            self.squares()
        );
        let _ = writeln!(
            s,
            "  {} move types (dx, dy), dy > 0 forward, dx > 0 to the mover's right:",
            self.move_types.len()
        );
        for (t, &(dx, dy)) in self.move_types.iter().enumerate() {
            let _ = match self.promote_planes {
                2 => writeln!(s, "  {:3}/{:3}  ({dx:+}, {dy:+})", 2 * t, 2 * t + 1),
                _ => writeln!(s, "  {t:3}      ({dx:+}, {dy:+})"),
            };
        }
        if !self.doubles.is_empty() {
            let _ = writeln!(
                s,
                "  {} two-step move types (first step; whole move, back to the start for a \
                 capture without moving or a pass), at the from square:",
                self.doubles.len()
            );
        }
        for (d, &((x1, y1), (x, y))) in self.doubles.iter().enumerate() {
            let plane = self.promote_planes * self.move_types.len() + d;
            let _ = match (x1, y1) == LINE {
                true => writeln!(
                    s,
                    "  {plane:3}      three steps to ({x:+}, {y:+}), taking on both squares between"
                ),
                false => writeln!(
                    s,
                    "  {plane:3}      ({x1:+}, {y1:+}) then to ({x:+}, {y:+})"
                ),
            };
        }
        let compound = v.compound.len();
        if compound > 0 {
            // Too many to list (Ko shogi: tens of thousands); the first plane and the count.
            let first = self.first_compound_plane();
            let _ = writeln!(
                s,
                "  {first}..{}  {compound} compound move types (shots and moves of several \
                 steps: where the piece ends and the squares it takes), at the from square",
                first + compound - 1
            );
        }
        for (h, &k) in self.drop_plane_kinds().iter().enumerate() {
            let _ = writeln!(
                s,
                "  {:3}      drop {}",
                self.first_drop_plane() + h,
                v.kind_token(k)
            );
        }
        s
    }

    fn explain_dlshogi(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Encoding dlshogi of {} (dlshogi's and FukauraOu's layout; squares are (file - 1) * 9 \
             + rank, file-major, seen from the side to move; board rotated 180 degrees for gote)",
            self.variant.name
        );
        let _ = writeln!(
            s,
            "Input: {} planes x 9 x 9 = {} floats: input1 = planes 0-{} (board, attacks), input2 = \
             planes {}-{} (hands, check)",
            self.num_planes(),
            self.input_len(),
            dlshogi::FEATURES1 - 1,
            dlshogi::FEATURES1,
            self.num_planes() - 1
        );
        for (i, name) in self.plane_names().iter().enumerate() {
            let _ = writeln!(s, "  {i:3}  {name}");
        }
        let _ = writeln!(
            s,
            "Policy: {} labels x 81 destination squares = {} (index = label * 81 + to)",
            dlshogi::LABELS,
            self.policy_len()
        );
        for (i, name) in Dlshogi::label_names().iter().enumerate() {
            let _ = writeln!(s, "  {i:3}  {name}");
        }
        s
    }

    /// The hand-plane divisor of the hand kind with this SFEN token.
    fn hand_plane_scale(&self, token: &str) -> f32 {
        let v = &self.variant;
        v.hand_kinds
            .iter()
            .position(|&k| v.kind_token(k) == token)
            .map_or(1.0, |h| self.hand_scale[h])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    fn encoder(name: &str) -> Encoder {
        Encoder::new(Arc::new(Variant::builtin(name).unwrap()))
    }

    /// Every variant's generic encoder, then standard shogi in dlshogi's layout.
    fn all_encoders() -> Vec<(String, Encoder)> {
        let mut all: Vec<(String, Encoder)> = rules::VariantSpec::builtin_names()
            .iter()
            .map(|n| (n.to_string(), encoder(n)))
            .collect();
        let shogi = Arc::new(Variant::builtin("shogi").unwrap());
        let dl = Encoder::with_layout(shogi, EncodingLayout::Dlshogi).unwrap();
        all.push(("shogi (dlshogi)".into(), dl));
        for name in ATTACK_VARIANTS {
            let v = Arc::new(Variant::builtin(name).unwrap());
            let enc = Encoder::with_layout(v, EncodingLayout::Attacks).unwrap();
            all.push((format!("{name} (attacks)"), enc));
        }
        // The Lion Dog test board: moves of three steps along a line (`Move::Line`).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/variants/lion-dogs.toml"
        );
        let v = Arc::new(Variant::load(std::path::Path::new(path)).unwrap());
        all.push(("lion-dogs".into(), Encoder::new(v)));
        all
    }

    /// Variants whose `attacks` encoders the tests check: the small ones, the 9x9 one, one
    /// with turning pieces, Chu's Lion and Tenjiku's range captures and burns.
    const ATTACK_VARIANTS: [&str; 6] = ["minishogi", "judkins", "kyoto", "shogi", "chu", "tenjiku"];

    /// `count` positions from seeded random playouts (restarting when a game ends or runs long).
    fn random_positions(v: &Arc<Variant>, seed: u64, count: usize) -> Vec<Position> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(count);
        let mut pos = Position::start(v.clone());
        while out.len() < count {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() || pos.ply() >= 300 {
                pos = Position::start(v.clone());
                continue;
            }
            pos.make_move(moves[rng.random_range(0..moves.len())]);
            // Keep about every third position so the sample spreads over game phases.
            if rng.random_range(0..3) == 0 {
                out.push(pos.clone());
            }
        }
        out
    }

    #[test]
    fn every_legal_move_round_trips_and_indices_are_unique() {
        for (i, (name, enc)) in all_encoders().into_iter().enumerate() {
            let v = enc.variant().clone();
            let mut positions = random_positions(&v, 7 + i as u64, 200);
            positions.push(Position::start(v.clone()));
            let (mut drops, mut promotions, mut doubles, mut moves) = (0, 0, 0, 0);
            for pos in &positions {
                let mut seen: HashMap<usize, Move> = HashMap::new();
                for (index, mv) in enc.legal_indices(pos) {
                    assert!(index < enc.policy_len(), "{name}: {mv:?} -> {index}");
                    assert_eq!(
                        enc.index_to_move(pos, index),
                        Some(mv),
                        "{name}: {mv:?} -> {index} in {}",
                        pos.to_sfen()
                    );
                    if let Some(other) = seen.insert(index, mv) {
                        panic!("{name}: {mv:?} and {other:?} share {index} in {pos:?}");
                    }
                    moves += 1;
                    match mv {
                        Move::Drop { .. } => drops += 1,
                        Move::Normal { promote: true, .. } => promotions += 1,
                        Move::Double { .. } | Move::Line { .. } => doubles += 1,
                        _ => {}
                    }
                }
            }
            // The sample exercised drops and promotions, not just quiet moves (pieces that
            // turn over by themselves make no promoting moves).
            let chooses = !v.promote_by_capture
                && v.kinds.iter().any(|k| {
                    matches!(
                        k.promotion,
                        rules::PromotionMode::Optional | rules::PromotionMode::Forced
                    )
                });
            assert!(
                (drops > 0 || !v.drops)
                    && (promotions > 0 || !chooses)
                    && (doubles > 0 || !(v.has_legs || v.has_lion_lines))
                    && moves > 1000,
                "{name}: {moves}"
            );
        }
    }

    #[test]
    fn index_to_move_rejects_off_board_and_out_of_range() {
        let enc = encoder("shogi");
        let pos = Position::start(enc.variant().clone());
        assert_eq!(enc.index_to_move(&pos, enc.policy_len()), None);
        // Move type 0 is a one-step move forward-left; from 9a (square 0) it leaves the board.
        assert_eq!(enc.move_types()[0], (-1, 1));
        assert_eq!(enc.index_to_move(&pos, 0), None);
        // The last plane is the drop plane of the last hand kind.
        let last = enc.policy_planes() * 81 - 1;
        assert!(matches!(
            enc.index_to_move(&pos, last),
            Some(Move::Drop { .. })
        ));
        // Every index maps to a move or None, and every move maps back to its index.
        for index in 0..enc.policy_len() {
            if let Some(mv) = enc.index_to_move(&pos, index) {
                assert_eq!(enc.move_to_index(&pos, mv), index);
            }
        }
    }

    /// The colour-flipped twin of an SFEN: board rotated 180 degrees, cases swapped, side to
    /// move swapped, hands swapped.
    fn flip_sfen(sfen: &str) -> String {
        flip_sfen_in(None, sfen)
    }

    /// [`flip_sfen`], reading a square in the hands field when `v` has the counter-strike rule.
    fn flip_sfen_in(v: Option<&Variant>, sfen: &str) -> String {
        let fields: Vec<&str> = sfen.split_whitespace().collect();
        let counter_strike = v
            .filter(|v| v.lion_counter_strike && !v.drops)
            .and_then(|v| v.parse_square(fields[2]).map(|sq| (v, sq)));
        let swap = |c: char| {
            if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        };
        let rows: Vec<String> = fields[0]
            .split('/')
            .rev()
            .map(|row| {
                // Tokens: a run of digits, or an optional '+', a letter and an optional mark.
                let b: Vec<char> = row.chars().collect();
                let mut tokens: Vec<String> = Vec::new();
                let mut i = 0;
                while i < b.len() {
                    let start = i;
                    if b[i].is_ascii_digit() {
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    } else {
                        if b[i] == '+' {
                            i += 1;
                        }
                        i += 1;
                        if i < b.len() && rules::Letter::MARKS.contains(&b[i]) {
                            i += 1;
                        }
                    }
                    tokens.push(b[start..i].iter().map(|&c| swap(c)).collect());
                }
                tokens.reverse();
                tokens.concat()
            })
            .collect();
        let side = if fields[1] == "b" { "w" } else { "b" };
        let hand: String = if let Some(sq) = counter_strike {
            // A square (Chu shogi's counter-strike field) turns with the board.
            let (x, y) = sq.0.coords(sq.1);
            sq.0.square_name(sq.0.square(sq.0.files as usize - 1 - x, sq.0.ranks as usize - 1 - y))
        } else if fields[2] == "-" {
            "-".into()
        } else {
            fields[2].chars().map(swap).collect()
        };
        format!(
            "{} {side} {hand} {}",
            rows.join("/"),
            fields.get(3).unwrap_or(&"1")
        )
    }

    fn rotate_move(v: &Variant, mv: Move) -> Move {
        v.turned_move(mv)
    }

    #[test]
    fn flip_sfen_rotates_the_board() {
        assert_eq!(
            flip_sfen("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"),
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
        );
        assert_eq!(flip_sfen("+Rk8/10 w 2Pn 5"), "10/8K+r b 2pN 5");
    }

    #[test]
    fn colour_flipped_twins_encode_identically() {
        for (i, (name, enc)) in all_encoders().into_iter().enumerate() {
            let v = enc.variant().clone();
            let (mut a, mut b) = (vec![0.0; enc.input_len()], vec![1.0; enc.input_len()]);
            for played in random_positions(&v, 100 + i as u64, 60) {
                // Rebuilt from SFEN so both have the same (empty) history.
                let sfen = played.to_sfen();
                let pos = Position::from_sfen(&v, &sfen).unwrap();
                let twin = Position::from_sfen(&v, &flip_sfen_in(Some(&v), &sfen)).unwrap();
                assert_ne!(pos.side_to_move(), twin.side_to_move());
                enc.encode(&pos, &mut a);
                enc.encode(&twin, &mut b);
                assert!(a == b, "{name}: {sfen} and its twin encode differently");
                let mut twin_moves = twin.legal_moves();
                twin_moves.sort_by_key(|&m| enc.move_to_index(&twin, m));
                let mut rotated: Vec<Move> = pos
                    .legal_moves()
                    .into_iter()
                    .map(|m| rotate_move(&v, m))
                    .collect();
                rotated.sort_by_key(|&m| enc.move_to_index(&twin, m));
                assert_eq!(rotated, twin_moves, "{name}: {sfen}");
                for mv in pos.legal_moves() {
                    assert_eq!(
                        enc.move_to_index(&pos, mv),
                        enc.move_to_index(&twin, rotate_move(&v, mv)),
                        "{name}: {mv:?} in {sfen}"
                    );
                }
            }
        }
    }

    #[test]
    fn shogi_policy_is_alphazero_139_planes() {
        // Rook and bishop lines give every queen direction at distances 1..=8 (8 * 8 = 64
        // offsets; king, gold and silver steps are among them) and the knight adds its two
        // forward jumps: 66 move types, AlphaZero's 64 queen + 2 knight planes. Times
        // {no promotion, promotion} = 132, plus 7 drop planes (R B G S N L P) = 139.
        let enc = encoder("shogi");
        assert_eq!(enc.move_types().len(), 66);
        assert!(enc.move_types().contains(&(1, 2)) && enc.move_types().contains(&(-1, 2)));
        assert!(!enc.move_types().contains(&(1, -2)));
        assert_eq!(enc.policy_planes(), 139);
        assert_eq!(enc.policy_len(), 139 * 81);
        // 14 kinds (8 + 6 promoted) x 2 sides + 7 hand kinds x 2 + 3 constant planes.
        assert_eq!(enc.num_planes(), 45);
        assert_eq!(enc.input_len(), 45 * 81);
    }

    #[test]
    fn plane_counts_and_policy_sizes_per_variant() {
        // (variant, input planes, move types, policy planes, squares)
        let expected = [
            // 14 kinds; queen lines 8 x 8 + 2 knight jumps; 7 hand kinds.
            ("shogi", 45, 66, 139, 81),
            // 10 kinds (K R B G S P, +R +B +S +P); queen lines 8 x 4; 5 hand kinds.
            ("minishogi", 33, 32, 69, 25),
            // 22 kinds (12 + 10 promoted); queen lines 8 x 9 + all 8 knight jumps (the
            // promoted knight is a full knight); 11 hand kinds.
            ("cannon-shosu", 69, 80, 171, 100),
            // 12 kinds (K T U G S D O H N L P, +N); king steps and B3/R3 lines (24 offsets, which
            // contain the pard's, onager's and hasty's jumps), lance forward 4..=8 (5 more),
            // 2 knight jumps = 31; 10 hand kinds.
            ("hand", 47, 31, 72, 81),
        ];
        for (name, planes, types, policy_planes, squares) in expected {
            let enc = encoder(name);
            assert_eq!(enc.num_planes(), planes, "{name} planes");
            assert_eq!(enc.plane_names().len(), planes, "{name} plane names");
            assert_eq!(enc.move_types().len(), types, "{name} move types");
            assert_eq!(enc.policy_planes(), policy_planes, "{name} policy planes");
            assert_eq!(
                enc.policy_len(),
                policy_planes * squares,
                "{name} policy length"
            );
            assert_eq!(enc.input_len(), planes * squares, "{name} input length");
            let spec = enc.spec();
            assert_eq!(spec.planes, enc.plane_names());
            assert_eq!(spec.policy_len, enc.policy_len());
            assert_eq!(spec.move_types, enc.move_types());
            assert_eq!(spec.drop_kinds.len(), enc.variant().hand_kinds.len());
            assert!(enc.explain().contains(&format!("{} planes", planes)));
        }
    }

    #[test]
    fn promotion_by_capture_has_one_policy_plane_per_move_type() {
        // Dai-dai shogi promotes by capture, never by choice: move types, then the moves of
        // several steps (the Lion's, the Lion Dog's), and no drops.
        let enc = encoder("dai-dai");
        let (types, doubles) = (enc.move_types().len(), enc.doubles().len());
        assert_eq!(enc.policy_planes(), types + doubles);
        assert!(enc
            .explain()
            .contains("plane = type; no move chooses to promote"));
        // A board move's index is its type's plane at its origin.
        let pos = Position::start(enc.variant().clone());
        for (index, mv) in enc.legal_indices(&pos) {
            if let Move::Normal { .. } = mv {
                assert!(index / enc.squares() < types, "{mv:?}");
            }
        }
        // Shogi keeps its promoting planes.
        let shogi = encoder("shogi");
        assert_eq!(shogi.policy_planes(), 2 * shogi.move_types().len() + 7);
    }

    #[test]
    fn plane_names_follow_the_documented_order() {
        let enc = encoder("minishogi");
        let names = enc.plane_names();
        assert_eq!(names[0], "own K");
        assert_eq!(names[6], "own +R");
        assert_eq!(names[10], "opp K");
        assert_eq!(names[20], "own hand R");
        assert_eq!(names[21], "opp hand R");
        assert_eq!(&names[30..], ["repetition", "in check", "ones"]);
        assert_eq!(enc.spec().drop_kinds, ["R", "B", "G", "S", "P"]);
    }

    #[test]
    fn encode_writes_the_expected_planes() {
        let enc = encoder("shogi");
        let v = enc.variant().clone();
        let n = 81;
        let plane = |name: &str| enc.plane_names().iter().position(|p| p == name).unwrap();
        // Gote to move, in check from the sente bishop on 2d (x = 7, y = 3) along 3c, 4b to
        // the king on 5a; sente king on 5i; gote holds one pawn, sente two.
        let pos = Position::from_sfen(&v, "4k4/9/9/7B1/9/9/9/9/4K4 w 2Pp 1").unwrap();
        assert!(pos.in_check());
        let mut out = vec![f32::NAN; enc.input_len()];
        enc.encode(&pos, &mut out);
        assert!(out.iter().all(|x| x.is_finite()), "every value is written");
        // Rotated: own king 5a (4, 0) -> (4, 8); opponent bishop (7, 3) -> (1, 5);
        // opponent king (4, 8) -> (4, 0).
        assert_eq!(out[plane("own K") * n + 8 * 9 + 4], 1.0);
        assert_eq!(out[plane("opp B") * n + 5 * 9 + 1], 1.0);
        assert_eq!(out[plane("opp K") * n + 4], 1.0);
        let on_board: f32 = out[..2 * v.num_kinds() * n].iter().sum();
        assert_eq!(on_board, 3.0, "three pieces, one 1.0 each");
        // Hands: 18 pawns in shogi's start position.
        assert!(out[plane("own hand P") * n..][..n]
            .iter()
            .all(|&x| x == 1.0 / 18.0));
        assert!(out[plane("opp hand P") * n..][..n]
            .iter()
            .all(|&x| x == 2.0 / 18.0));
        assert!(out[plane("own hand R") * n..][..n]
            .iter()
            .all(|&x| x == 0.0));
        assert!(out[plane("repetition") * n..][..n]
            .iter()
            .all(|&x| x == 0.0));
        assert!(out[plane("in check") * n..][..n].iter().all(|&x| x == 1.0));
        assert!(out[plane("ones") * n..][..n].iter().all(|&x| x == 1.0));
        assert_eq!(out.len(), enc.input_len());
    }

    #[test]
    fn repetition_plane_counts_repeats() {
        let enc = encoder("shogi");
        let v = enc.variant().clone();
        let mut pos = Position::start(v.clone());
        let rep = plane_index(&enc, "repetition") * 81;
        let mut out = vec![0.0; enc.input_len()];
        for (i, expected) in [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0].into_iter().enumerate() {
            if i > 0 {
                pos.play_usi("5i4h 5a4b 4h5i 4b5a").unwrap();
            }
            assert_eq!(pos.repetition_count(), i + 1);
            enc.encode(&pos, &mut out);
            assert_eq!(out[rep], expected, "after {i} cycles");
        }
    }

    /// The cache key covers what the encoder reads: positions with one key encode alike (over
    /// random playouts of every layout, repetitions included), and a repetition changes the key.
    #[test]
    fn equal_cache_keys_mean_equal_inputs() {
        for (i, (name, enc)) in all_encoders().into_iter().enumerate() {
            let v = enc.variant().clone();
            let mut seen: HashMap<u64, Vec<f32>> = HashMap::new();
            let mut out = vec![0.0; enc.input_len()];
            for pos in random_positions(&v, 40 + i as u64, 300) {
                enc.encode(&pos, &mut out);
                let first = seen
                    .entry(enc.cache_key(&pos))
                    .or_insert_with(|| out.clone());
                assert_eq!(*first, out, "{name}: one key, two inputs");
            }
        }
        let enc = encoder("shogi");
        let mut pos = Position::start(enc.variant().clone());
        let mut keys = vec![enc.cache_key(&pos)];
        for _ in 0..4 {
            pos.play_usi("5i4h 5a4b 4h5i 4b5a").unwrap();
            keys.push(enc.cache_key(&pos));
        }
        // Repetitions 1 to 4 read as four different inputs; a fifth reads as the fourth.
        assert_eq!(
            keys.iter().collect::<std::collections::HashSet<_>>().len(),
            4
        );
        assert_eq!(keys[3], keys[4]);
    }

    fn plane_index(enc: &Encoder, name: &str) -> usize {
        enc.plane_names().iter().position(|p| p == name).unwrap()
    }

    #[test]
    fn sente_and_gote_pawn_pushes_share_an_index() {
        let enc = encoder("shogi");
        let v = enc.variant().clone();
        let mut pos = Position::start(v.clone());
        let forward = enc.move_types().iter().position(|&t| t == (0, 1)).unwrap();
        // 7g7f: pawn at (2, 6) one step forward, no promotion.
        let mv = v.parse_usi_syntax("7g7f").unwrap();
        let index = enc.move_to_index(&pos, mv);
        assert_eq!(index, (forward * 2) * 81 + 6 * 9 + 2);
        pos.make_move(mv);
        // 3c3d: gote's mirror image, the same index.
        let reply = v.parse_usi_syntax("3c3d").unwrap();
        assert_eq!(enc.move_to_index(&pos, reply), index);
        assert_eq!(enc.index_to_move(&pos, index), Some(reply));
        // A pawn drop on 5e for gote: drop plane of P at the rotated square (4, 4).
        let drop = v.parse_usi_syntax("P*5e").unwrap();
        let p = v.kind_by_letter('P', false).unwrap();
        let h = v.kinds[p as usize].hand_index.unwrap();
        assert_eq!(
            enc.move_to_index(&pos, drop),
            (2 * enc.move_types().len() + h) * 81 + 4 * 9 + 4
        );
    }

    #[test]
    fn spec_round_trips_through_json() {
        let spec = encoder("cannon-shosu").spec();
        assert_eq!(spec.version, ENCODING_VERSION);
        assert_eq!(spec.variant, "cannon-shosu");
        assert_eq!((spec.files, spec.ranks), (10, 10));
        let json = serde_json::to_string(&spec).unwrap();
        let back: EncodingSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn attack_planes_follow_the_generic_ones_and_are_named() {
        for name in ATTACK_VARIANTS {
            let v = Arc::new(Variant::builtin(name).unwrap());
            let (g, a) = (
                Encoder::new(v.clone()),
                Encoder::with_layout(v.clone(), EncodingLayout::Attacks).unwrap(),
            );
            assert_eq!(a.layout(), EncodingLayout::Attacks);
            assert_eq!(a.num_planes(), g.num_planes() + 2 * (v.kinds.len() + 3));
            assert_eq!(a.plane_names().len(), a.num_planes());
            assert_eq!(a.plane_names()[..g.num_planes()], g.plane_names()[..]);
            // The policy is the generic one; the spec names the layout and rebuilds it.
            assert_eq!(a.policy_len(), g.policy_len());
            let spec = a.spec();
            assert_eq!(spec.layout, EncodingLayout::Attacks);
            assert_eq!(Encoder::for_spec(v.clone(), &spec).unwrap().spec(), spec);
            // The generic planes are encoded as by the generic layout.
            let pos = random_positions(&v, 3, 1).pop().unwrap();
            let (mut x, mut y) = (vec![0.0; a.input_len()], vec![0.0; g.input_len()]);
            a.encode(&pos, &mut x);
            g.encode(&pos, &mut y);
            assert_eq!(x[..y.len()], y[..]);
        }
        assert_eq!(
            "attacks".parse::<EncodingLayout>(),
            Ok(EncodingLayout::Attacks)
        );
        assert_eq!(EncodingLayout::Attacks.to_string(), "attacks");
    }

    #[test]
    fn attack_planes_of_the_minishogi_start_counted_by_hand() {
        // Sente (to move): K 5e, G 4e, S 3e, B 2e, R 1e, P 5d. Oriented squares are sente's
        // own: index = rank * 5 + (5 - file), ranks a..e = 0..4.
        let enc = Encoder::with_layout(
            Arc::new(Variant::builtin("minishogi").unwrap()),
            EncodingLayout::Attacks,
        )
        .unwrap();
        let pos = Position::start(enc.variant().clone());
        let mut x = vec![0.0; enc.input_len()];
        enc.encode(&pos, &mut x);
        let sq = |name: &str| {
            let b = name.as_bytes();
            (b[1] - b'a') as usize * 5 + (5 - (b[0] - b'0') as usize)
        };
        let plane = |name: &str| -> Vec<usize> {
            let p = plane_index(&enc, name);
            (0..25).filter(|&s| x[p * 25 + s] == 1.0).collect()
        };
        let squares = |names: &[&str]| -> Vec<usize> {
            let mut v: Vec<usize> = names.iter().map(|n| sq(n)).collect();
            v.sort();
            v
        };
        // Attacked squares include those of the side's own pieces (a defender's squares).
        // The king 5e: 5d, 4d, 4e; the gold 4e: 5d, 4d, 3d and sideways 5e, 3e; the silver
        // 3e: 4d, 3d, 2d; the bishop 2e: 3d, 4c, 5b and 1d; the rook 1e: up to gote's pawn
        // on 1b, and 2e (its own bishop ends the ride); the pawn 5d: 5c.
        assert_eq!(plane("own attacks of K"), squares(&["5d", "4d", "4e"]));
        assert_eq!(
            plane("own attacks of G"),
            squares(&["5d", "4d", "3d", "5e", "3e"])
        );
        assert_eq!(plane("own attacks of S"), squares(&["4d", "3d", "2d"]));
        assert_eq!(
            plane("own attacks of B"),
            squares(&["3d", "1d", "4c", "5b"])
        );
        assert_eq!(
            plane("own attacks of R"),
            squares(&["1d", "1c", "1b", "2e"])
        );
        assert_eq!(plane("own attacks of P"), squares(&["5c"]));
        // 4d: king, gold, silver; 3d: gold, silver, bishop; 1d: bishop, rook.
        assert_eq!(plane("own attackers >= 3"), squares(&["4d", "3d"]),);
        assert_eq!(
            plane("own attackers >= 2"),
            squares(&["5d", "4d", "3d", "1d"]),
        );
        // The opponent's planes are its own start turned round: its pawn 1b attacks 1c.
        assert_eq!(plane("opp attacks of P"), squares(&["1c"]));
        assert_eq!(
            plane("opp attacks of R"),
            squares(&["5b", "5c", "5d", "4a"])
        );
    }

    #[test]
    fn attacked_squares_are_those_the_rules_see_attacked() {
        // `own attackers >= 1` is the union of the pieces' attacks; the rules' attack test
        // (a separate lookup from the target square) must agree on every square.
        for name in ["minishogi", "judkins", "kyoto", "shogi", "chu"] {
            let v = Arc::new(Variant::builtin(name).unwrap());
            let enc = Encoder::with_layout(v.clone(), EncodingLayout::Attacks).unwrap();
            let n = v.num_squares();
            let own = plane_index(&enc, "own attackers >= 1");
            let opp = plane_index(&enc, "opp attackers >= 1");
            let mut x = vec![0.0; enc.input_len()];
            for pos in random_positions(&v, 17, 100) {
                enc.encode(&pos, &mut x);
                let us = pos.side_to_move();
                for sq in 0..n {
                    let o = enc.orient(us, sq);
                    for (plane, side) in [(own, us), (opp, us.flip())] {
                        assert_eq!(
                            x[plane * n + o] == 1.0,
                            pos.is_attacked(sq, side),
                            "{name}: square {sq} by {side:?} in {}",
                            pos.to_sfen()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn mirrored_samples_are_the_encodings_of_mirrored_positions() {
        let mut mirrored = 0;
        for (i, (name, enc)) in all_encoders().into_iter().enumerate() {
            let v = enc.variant().clone();
            let dlshogi = enc.layout() == EncodingLayout::Dlshogi;
            assert_eq!(enc.can_mirror(), v.mirror_symmetric() && !dlshogi, "{name}");
            if !enc.can_mirror() {
                continue;
            }
            mirrored += 1;
            let (mut x, mut y) = (vec![0.0; enc.input_len()], vec![0.0; enc.input_len()]);
            let (mut p, mut r) = (vec![0.0; enc.policy_len()], vec![0.0; enc.policy_len()]);
            let mut scratch = Vec::new();
            for played in random_positions(&v, 40 + i as u64, 20) {
                let pos = Position::from_sfen(&v, &played.to_sfen()).unwrap();
                let mirror = Position::from_sfen(&v, &played.mirrored_sfen()).unwrap();
                enc.encode(&pos, &mut x);
                enc.encode(&mirror, &mut y);
                // Two policy rows: each legal move gets its own value, the second row reversed.
                let moves = pos.legal_moves();
                p.fill(0.0);
                r.fill(0.0);
                for (k, &m) in moves.iter().enumerate() {
                    p[enc.move_to_index(&pos, m)] = 1.0 + k as f32;
                    r[enc.move_to_index(&pos, m)] = (moves.len() - k) as f32;
                }
                enc.mirror_sample(&mut x, &mut [&mut p, &mut r], &mut scratch);
                assert!(x == y, "{name}: {} mirrored", pos.to_sfen());
                for (k, &m) in moves.iter().enumerate() {
                    let at = enc.move_to_index(&mirror, v.mirror_move(m));
                    assert_eq!(p[at], 1.0 + k as f32, "{name}: {m:?} in {}", pos.to_sfen());
                    assert_eq!(r[at], (moves.len() - k) as f32, "{name}: {m:?}");
                }
                assert_eq!(p.iter().filter(|&&q| q != 0.0).count(), moves.len());
            }
        }
        assert!(mirrored >= 10, "{mirrored}");
        let tori = encoder("tori");
        assert!(!tori.can_mirror());
    }
}
